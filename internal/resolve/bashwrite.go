package resolve

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
)

// checkWritableCommands reports, as errors, every program a tool runs (a
// bash tool's commands, an MCP server's stdio command) that lies inside a
// bash tool's read_write filesystem: a script of that tool could replace
// it with its own program, which the other tool, of this agent or of
// another, would then run. serve refuses a bash tool whose own command is
// in its read_write filesystem, but it serves one agent's tools and
// cannot see the others'; the workspace holds them all. Programs are
// found as on this host: a path from the workspace, a name on its PATH.
func checkWritableCommands(cfg *manifest.Config, dir string) hcl.Diagnostics {
	type writable struct {
		tool, path, real string
	}
	var rw []writable
	for _, t := range cfg.Tools {
		if t.Kind != manifest.KindBash || t.Bash == nil || t.Enabled.Known() && !t.Enabled.Value {
			continue
		}
		fs := t.Bash.FS
		if fs == nil || !fs.Kind.Known() || fs.Kind.Value != "read_write" || !fs.Path.Known() || fs.Path.Value == "" {
			continue
		}
		p := fs.Path.Value
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, filepath.FromSlash(p))
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue // checkBashFSPath warns
		}
		rw = append(rw, writable{tool: t.Name, path: fs.Path.Value, real: real})
	}
	if len(rw) == 0 {
		return nil
	}
	found := map[string]string{} // name on PATH: its program, resolved
	program := func(name string) string {
		if name == "" {
			return ""
		}
		if !strings.Contains(name, "/") {
			p, ok := found[name]
			if !ok {
				if lp, err := exec.LookPath(name); err == nil {
					p, _ = filepath.Abs(lp)
				}
				found[name] = p
			}
			name = p
		} else if !filepath.IsAbs(name) {
			name = filepath.Join(dir, filepath.FromSlash(name))
		}
		if name == "" {
			return ""
		}
		if info, err := os.Stat(name); err != nil || info.IsDir() {
			return ""
		}
		if real, err := filepath.EvalSymlinks(name); err == nil {
			return real
		}
		return ""
	}
	var diags hcl.Diagnostics
	check := func(t *manifest.Tool, name string, rng hcl.Range) {
		p := program(name)
		if p == "" {
			return
		}
		for _, w := range rw {
			if !within(w.real, p) {
				continue
			}
			detail := fmt.Sprintf("%q (%s) is inside the read_write filesystem of tool %q (%q): a script of that tool could replace it with its own program, which this tool would then run, for whichever agent calls it. Move the program out of that directory, or make %q's filesystem an overlay, which keeps writes in memory.", name, p, w.tool, w.path, w.tool)
			if w.tool == t.Name {
				detail = fmt.Sprintf("%q (%s) is inside this tool's own read_write filesystem (%q): a script could replace it with its own program, then run it; agentform serve refuses to start such a tool. Move the program out of that directory, or use an overlay filesystem, which keeps writes in memory.", name, p, w.path)
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Command inside a read_write filesystem", Detail: detail, Subject: rng.Ptr()})
			return
		}
	}
	for _, t := range cfg.Tools {
		if t.Enabled.Known() && !t.Enabled.Value {
			continue
		}
		switch {
		case t.Kind == manifest.KindBash && t.Bash != nil && t.Bash.Commands.Known():
			cmds := t.Bash.Commands
			for i, name := range cmds.Values {
				if i < len(cmds.ElemRuntime) && cmds.ElemRuntime[i] != nil {
					continue
				}
				rng := cmds.Range
				if i < len(cmds.ElemRanges) {
					rng = cmds.ElemRanges[i]
				}
				check(t, name, rng)
			}
		case t.Kind == manifest.KindMCP && t.MCP != nil && t.MCP.Command.Known() && t.MCP.Command.Value != "":
			if t.MCP.Transport.Known() && t.MCP.Transport.Value != "" && t.MCP.Transport.Value != manifest.TransportStdio {
				continue
			}
			check(t, t.MCP.Command.Value, t.MCP.Command.Range)
		}
	}
	return diags
}
