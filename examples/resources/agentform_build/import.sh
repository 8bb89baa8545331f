# The import ID is the workspace directory, which must have been applied
# (by "agentform apply" or by Terraform) and still have its artifacts.
terraform import agentform_build.agents ./agents
