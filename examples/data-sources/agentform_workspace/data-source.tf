terraform {
  required_providers {
    agentform = {
      source = "agentform/agentform"
    }
  }
}

# Plan the workspace in ./agents without writing anything.
data "agentform_workspace" "agents" {
  dir = "${path.module}/agents"
}

# Every tool each agent may not call, with the tags it lacks.
output "denials" {
  value = {
    for d in data.agentform_workspace.agents.denials :
    "${d.agent} -> ${d.tool}" => d.missing
  }
}

# Stop the plan when the assistant could reach the shell.
check "assistant_never_shells" {
  assert {
    condition     = !provider::agentform::can_call(data.agentform_workspace.agents.matrix, "assistant", "grep")
    error_message = "The assistant agent must never be able to call grep."
  }
}
