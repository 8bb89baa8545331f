// Package version holds agentform's version, stamped into plans, state and
// artifacts.
package version

// Version is the agentform release. Builds may override it with
// -ldflags "-X github.com/agentform/agentform/internal/version.Version=...".
var Version = "0.1.0"
