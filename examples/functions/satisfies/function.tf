terraform {
  required_providers {
    agentform = {
      source = "agentform/agentform"
    }
  }
}

# "math" satisfies every tag below it in the "::" namespace.
output "can_add" {
  value = provider::agentform::satisfies(["text", "math"], "math::add") # true
}

# A sibling namespace does not.
output "can_shell" {
  value = provider::agentform::satisfies(["mathematics"], "math::add") # false
}
