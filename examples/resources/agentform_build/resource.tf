terraform {
  required_providers {
    agentform = {
      source = "agentform/agentform"
    }
  }
}

variable "ci" {
  description = "In CI: refuse any lockfile change and contact no MCP server or A2A agent."
  type        = bool
  default     = false
}

# Build the workspace in ./agents: one artifact per agent in agents/dist,
# the lockfile and the workspace's state, as "agentform apply" does. One
# resource per workspace directory: the workspace has one state.
resource "agentform_build" "agents" {
  dir = "${path.module}/agents"

  # In CI, remote tools come from agentform.lock.hcl, and any difference
  # from it is an error.
  lockfile_mode = var.ci ? "readonly" : "update"
  refresh       = !var.ci
}

output "assistant_artifact" {
  value = agentform_build.agents.artifacts["assistant"].path
}

output "assistant_may_shell" {
  value = provider::agentform::can_call(agentform_build.agents.capability_matrix, "assistant", "grep")
}
