terraform {
  required_providers {
    agentform = {
      source = "agentform/agentform"
    }
  }
}

# The provider has no configuration: each data source and resource names
# its workspace directory.
provider "agentform" {}
