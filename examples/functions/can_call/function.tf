terraform {
  required_providers {
    agentform = {
      source = "agentform/agentform"
    }
  }
}

data "agentform_workspace" "agents" {
  dir = "${path.module}/agents"
}

# The matrix of the data source (or agentform_build's capability_matrix):
# a list of objects with agent, tool and decision.
output "assistant_may_count" {
  value = provider::agentform::can_call(data.agentform_workspace.agents.matrix, "assistant", "word_count")
}

# Any list of objects with agent, tool and decision will do.
output "literal" {
  value = provider::agentform::can_call([
    { agent = "assistant", tool = "grep", decision = "deny" },
  ], "assistant", "grep") # false
}
