# The import ID is the workspace directory, which must have been applied
# (by "agentform apply" or by Terraform) and still have its artifacts. An
# empty or blank ID is refused: name the directory, even "." for
# Terraform's working directory.
terraform import agentform_build.agents ./agents
