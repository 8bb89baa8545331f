package resolve

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
)

// ResolveBash resolves a bash tool block: one tool named after the block.
// Each commands entry is looked up on this host's PATH (an entry with a
// "/" is checked as a file, relative to the workspace); a missing one is a
// warning at that entry, not an error, because the agent may run on
// another host. Nothing is pinned: hosts differ, so a lock entry would
// only record this machine.
func ResolveBash(ctx context.Context, req Request) (*Resolved, hcl.Diagnostics) {
	t := req.Tool
	if t == nil || t.Bash == nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Not a bash tool",
			Detail: "ResolveBash was given a tool block without bash settings; this is a bug in agentform."}}
	}
	var diags hcl.Diagnostics
	cmds := t.Bash.Commands
	if cmds.Known() {
		for i, name := range cmds.Values {
			if i < len(cmds.ElemRuntime) && cmds.ElemRuntime[i] != nil {
				continue // known only when the agent starts
			}
			rng := cmds.Range
			if i < len(cmds.ElemRanges) {
				rng = cmds.ElemRanges[i]
			}
			if d := checkBashCommand(req.Dir, name, rng); d != nil {
				diags = append(diags, d)
			}
		}
	}
	if d := checkBashFSPath(req.Dir, t.Bash.FS); d != nil {
		diags = append(diags, d)
	}
	description := ""
	if t.Description.Known() {
		description = t.Description.Value
	}
	return &Resolved{Tools: []Tool{{Name: t.Name, Description: description}}}, diags
}

// checkBashFSPath returns a warning when an overlay or read_write
// filesystem's path is no directory here (serve, given this workspace,
// would not start the tool), or nil. A path known only at runtime is not
// looked at.
func checkBashFSPath(dir string, fs *manifest.BashFS) *hcl.Diagnostic {
	if fs == nil || !fs.Path.Known() || fs.Path.Value == "" || !fs.Kind.Known() || fs.Kind.Value != "overlay" && fs.Kind.Value != "read_write" {
		return nil
	}
	p := fs.Path.Value
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, filepath.FromSlash(p))
	}
	info, err := os.Stat(p)
	summary, detail := "Filesystem path not found", ""
	switch {
	case err != nil:
		detail = fmt.Sprintf("There is no directory at %q on this host (a relative path is taken from the workspace). agentform serve and invoke do not start the tool until it exists: create it, or fix the path.", fs.Path.Value)
	case !info.IsDir():
		summary = "Filesystem path is a file"
		detail = fmt.Sprintf("%q is a file, not a directory: a bash tool's %s filesystem is a directory. Fix the path.", fs.Path.Value, fs.Kind.Value)
	default:
		return nil
	}
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: fs.Path.Range.Ptr()}
}

// checkBashCommand returns a warning when a command is not available here,
// or nil.
func checkBashCommand(dir, name string, rng hcl.Range) *hcl.Diagnostic {
	if name == "" {
		return nil // the manifest reports empty entries
	}
	warn := func(summary, detail string) *hcl.Diagnostic {
		return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: rng.Ptr()}
	}
	if !strings.Contains(name, "/") {
		if !onPath(name) {
			return warn("Command not found",
				fmt.Sprintf("%q is not on this host's PATH. Bash tools run with the listed commands only, and hosts differ: install %s here to try the tool, and make sure the host that runs the agent has it.", name, name))
		}
		return nil
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, filepath.FromSlash(p))
	}
	info, err := os.Stat(p)
	switch {
	case err != nil:
		return warn("Command not found",
			fmt.Sprintf("There is no file at %q on this host (commands with a \"/\" are paths, relative to the workspace). Bash tools run with the listed commands only, and hosts differ: make sure the host that runs the agent has it.", name))
	case info.IsDir():
		return warn("Command is a directory",
			fmt.Sprintf("%q is a directory, not a program. List the program itself.", name))
	case info.Mode().Perm()&0o111 == 0:
		return warn("Command not executable",
			fmt.Sprintf("%q exists but is not executable on this host; run chmod +x %s.", name, name))
	case !filepath.IsAbs(name):
		// The artifact keeps the entry as written, and serve resolves it
		// where serve runs (it does not know the workspace).
		return warn("Relative command path",
			fmt.Sprintf("%q is found relative to the workspace here, but agentform serve and invoke resolve it against their workspace (-chdir, or the directory they run in), so the tool can run it only when they are given this workspace. List an absolute path, or a command name on the PATH of the host that runs the agent.", name))
	}
	return nil
}

// pathLookups memoises PATH lookups by PATH and command: a workspace of a
// thousand bash tools usually names the same few commands.
var pathLookups sync.Map

// onPath reports whether name is an executable on this host's PATH.
func onPath(name string) bool {
	key := os.Getenv("PATH") + "\x00" + name
	if found, ok := pathLookups.Load(key); ok {
		return found.(bool)
	}
	_, err := exec.LookPath(name)
	pathLookups.Store(key, err == nil)
	return err == nil
}
