terraform {
  required_providers {
    agentform = {
      source = "agentform/agentform"
    }
  }
}

# Build the workspace in ./agents: one artifact per agent in agents/dist,
# the lockfile and the workspace's state, as "agentform apply" does.
resource "agentform_build" "agents" {
  dir = "${path.module}/agents"
}

# In CI, refuse any lockfile change and contact no MCP server or A2A agent:
# remote tools come from agentform.lock.hcl.
resource "agentform_build" "ci" {
  dir           = "${path.module}/agents"
  out_dir       = "build"
  lockfile_mode = "readonly"
  refresh       = false
}

output "assistant_artifact" {
  value = agentform_build.agents.artifacts["assistant"].path
}

output "assistant_may_shell" {
  value = provider::agentform::can_call(agentform_build.agents.capability_matrix, "assistant", "grep")
}
