terraform {
  required_providers {
    agentform = {
      source = "agentform/agentform"
    }
  }
}

# Each data source and resource names its workspace directory. The
# provider's settings are optional and only say how long agentform waits.
provider "agentform" {
  # Slow MCP servers and A2A agents: give each remote operation of
  # planning a minute (default 10s, like "agentform -resolve-timeout").
  resolve_timeout = "1m"

  # Queue for up to two minutes behind another agentform command or
  # Terraform run that holds a workspace's state lock (default 30s).
  lock_timeout = "2m"
}
