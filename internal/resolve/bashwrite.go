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
// A stdio MCP server's argument naming a file in such a tree is a warning
// (see checkArg).
func checkWritableCommands(cfg *manifest.Config, dir string) hcl.Diagnostics {
	type writable struct {
		tool, path string
		order      int
	}
	// roots maps each read_write tree, as written (cleaned, absolute) and
	// with links resolved, to the tools that write it.
	roots := map[string][]writable{}
	for i, t := range cfg.Tools {
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
		w := writable{tool: t.Name, path: fs.Path.Value, order: i}
		roots[filepath.Clean(p)] = append(roots[filepath.Clean(p)], w)
		if real != filepath.Clean(p) {
			roots[real] = append(roots[real], w)
		}
	}
	if len(roots) == 0 {
		return nil
	}
	// program returns where a command entry leads on this host: the path
	// it is found at (a link there can be replaced as well as a file) and
	// the file, links resolved; "" when there is none.
	type program struct{ at, real string }
	programs := map[string]program{}
	find := func(name string) program {
		if pr, ok := programs[name]; ok {
			return pr
		}
		var pr program
		at := name
		if !strings.Contains(name, "/") {
			at = ""
			if lp, err := exec.LookPath(name); err == nil {
				at, _ = filepath.Abs(lp)
			}
		} else if !filepath.IsAbs(name) {
			at = filepath.Join(dir, filepath.FromSlash(name))
		}
		if info, err := os.Stat(at); at != "" && err == nil && !info.IsDir() {
			if real, err := filepath.EvalSymlinks(at); err == nil {
				pr = program{at: filepath.Clean(at), real: real}
			}
		}
		programs[name] = pr
		return pr
	}
	// writers returns the tools whose read_write tree holds p.
	writers := func(p string) []writable {
		for d := p; ; d = filepath.Dir(d) {
			if ws := roots[d]; len(ws) > 0 {
				return ws
			}
			if filepath.Dir(d) == d {
				return nil
			}
		}
	}
	// writer returns the tool whose read_write tree holds the file at at
	// (real, with links resolved): own's tree first, else the first tool
	// declared; and how messages show the file.
	writer := func(at, real, own string) (w writable, shown string, ok bool) {
		found := append(writers(at), writers(real)...)
		if len(found) == 0 {
			return w, "", false
		}
		w = found[0]
		for _, f := range found {
			if f.tool == own {
				w = f
				break
			}
			if f.order < w.order {
				w = f
			}
		}
		shown = real
		if at != real {
			shown = at + ", a link to " + real
		}
		return w, shown, true
	}
	var diags hcl.Diagnostics
	check := func(t *manifest.Tool, name string, rng hcl.Range) {
		if name == "" {
			return
		}
		pr := find(name)
		if pr.real == "" {
			return
		}
		w, shown, ok := writer(pr.at, pr.real, t.Name)
		if !ok {
			return
		}
		detail := fmt.Sprintf("%q (%s) is inside the read_write filesystem of tool %q (%q): a script of that tool could replace it with its own program, which this tool would then run, for whichever agent calls it. Move the program out of that directory, narrow %q's path, or make its filesystem an overlay, which keeps writes in memory.", name, shown, w.tool, w.path, w.tool)
		if w.tool == t.Name {
			detail = fmt.Sprintf("%q (%s) is inside this tool's own read_write filesystem (%q): a script could replace it with its own program, then run it; agentform serve refuses to start such a tool. Move the program out of that directory, narrow the path, or use an overlay filesystem, which keeps writes in memory.", name, shown, w.path)
		}
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Command inside a read_write filesystem", Detail: detail, Subject: rng.Ptr()})
	}
	// checkArg warns of an argument of a stdio MCP server that names a
	// file (from the workspace, where the server runs) inside a read_write
	// tree: the script an interpreter runs (node ./data/server.js) can be
	// rewritten there as well as the command itself. A warning, not an
	// error: an argument may as well be a data file the server is meant
	// to share with that tool, and directories are left alone.
	checkArg := func(arg string, rng hcl.Range) {
		if arg == "" || strings.HasPrefix(arg, "-") {
			return
		}
		at := arg
		if !filepath.IsAbs(at) {
			at = filepath.Join(dir, filepath.FromSlash(at))
		}
		info, err := os.Stat(at)
		if err != nil || !info.Mode().IsRegular() {
			return
		}
		real, err := filepath.EvalSymlinks(at)
		if err != nil {
			return
		}
		w, shown, ok := writer(filepath.Clean(at), real, "")
		if !ok {
			return
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Server file inside a read_write filesystem",
			Detail: fmt.Sprintf("The argument %q (%s) names a file inside the read_write filesystem of tool %q (%q). If the server runs it as code (a script its command loads, a configuration naming a program), a script of that tool could rewrite it, and the server would run the rewrite, for whichever agent calls either tool. Move the file out of that directory, narrow %q's path, or make its filesystem an overlay, which keeps writes in memory. A data file the two tools are meant to share needs none of this.",
				arg, shown, w.tool, w.path, w.tool),
			Subject: rng.Ptr(),
		})
	}
	for _, t := range cfg.Tools {
		if t.Enabled.Known() && !t.Enabled.Value {
			continue
		}
		switch {
		case t.Kind == manifest.KindBash && t.Bash != nil && t.Bash.Commands.Known():
			literals(t.Bash.Commands, func(name string, rng hcl.Range) { check(t, name, rng) })
		case t.Kind == manifest.KindMCP && t.MCP != nil && t.MCP.Command.Known() && t.MCP.Command.Value != "":
			if t.MCP.Transport.Known() && t.MCP.Transport.Value != "" && t.MCP.Transport.Value != manifest.TransportStdio {
				continue
			}
			check(t, t.MCP.Command.Value, t.MCP.Command.Range)
			if t.MCP.Args.Known() {
				literals(t.MCP.Args, checkArg)
			}
		}
	}
	return diags
}

// literals calls f with each element of l written as a value (not
// runtime()) and where it is written.
func literals(l manifest.StringList, f func(string, hcl.Range)) {
	for i, v := range l.Values {
		if i < len(l.ElemRuntime) && l.ElemRuntime[i] != nil {
			continue
		}
		f(v, l.ElemRange(i))
	}
}
