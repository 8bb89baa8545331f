package manifest

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// commonToolAttrs are accepted by every tool kind.
var commonToolAttrs = []string{"kind", "description", "capabilities", "enabled", "config"}

// kindSchemas lists each tool kind's own arguments and nested blocks.
var kindSchemas = map[string]struct{ attrs, blocks []string }{
	KindJavaScript: {attrs: []string{"source", "export"}},
	KindPython:     {attrs: []string{"source", "interpreter", "export"}},
	KindBash:       {attrs: []string{"commands", "cwd", "shared"}, blocks: []string{"fs", "env", "limits", "network"}},
	KindMCP:        {attrs: []string{"transport", "command", "args", "url", "auth_token", "headers", "expose", "tool_capabilities"}},
	KindA2A:        {attrs: []string{"url", "auth_token", "headers", "tenant", "timeout_secs", "default_accepted_output_modes", "target_agent"}},
}

func toolSchema(kind string) *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, a := range commonToolAttrs {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: a, Required: a == "kind"})
	}
	ks := kindSchemas[kind]
	for _, a := range ks.attrs {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: a})
	}
	for _, b := range ks.blocks {
		s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: b})
	}
	return s
}

var unsupportedName = regexp.MustCompile(`named "([^"]+)"|of type "([^"]+)"`)

func (d *decoder) decodeTool(b *hcl.Block) *Tool {
	t := &Tool{Name: b.Labels[0], DeclRange: b.DefRange}
	kc, diags := d.partialContent(b.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "kind", Required: true}}})
	d.add(diags)
	if kc == nil || diags.HasErrors() {
		return nil
	}
	kind := d.str(kc.Attributes, field{name: "kind", oneOf: ToolKinds}, "")
	if !slices.Contains(ToolKinds, kind.Value) {
		return nil
	}
	t.Kind, t.KindRange = kind.Value, kind.Range

	content, diags := d.content(b.Body, toolSchema(t.Kind))
	d.add(d.explainKindMismatch(t.Kind, diags))
	if content == nil {
		return t
	}
	a := content.Attributes
	t.Description = d.str(a, field{name: "description"}, "")
	t.Capabilities = d.strList(a, field{name: "capabilities"})
	t.Enabled = d.boolean(a, field{name: "enabled", runtime: true}, true)
	// Tool config maps names to strings; for stdio MCP servers it is the
	// subprocess environment.
	t.Config = d.stringMap(a, field{name: "config", runtime: true})

	switch t.Kind {
	case KindJavaScript:
		t.JavaScript = &JavaScriptTool{
			Source: d.required(b, a, field{name: "source"}),
			Export: d.export(a, t.Name),
		}
	case KindPython:
		t.Python = &PythonTool{
			Source:      d.required(b, a, field{name: "source"}),
			Interpreter: d.str(a, field{name: "interpreter", oneOf: []string{"embedded", "static"}}, "embedded"),
			Export:      d.export(a, t.Name),
		}
	case KindBash:
		t.Bash = d.decodeBash(a, content.Blocks)
	case KindMCP:
		t.MCP = d.decodeMCP(b, t, a)
	case KindA2A:
		t.A2A = d.decodeA2A(b, a)
	}
	return t
}

// export reads a javascript or python tool's export, the block's name when
// it is left out. One written empty (or only white space) names nothing:
// it is an error rather than the block's name in disguise.
func (d *decoder) export(a hcl.Attributes, name string) String {
	s := d.str(a, field{name: "export"}, name)
	if s.literal() && strings.TrimSpace(s.Value) == "" {
		d.errorf(s.Range, "Invalid value for \"export\"",
			"export must name an export; leave it out to use the tool's name (%q).", name)
	}
	return s
}

// required reads a string argument that must be present.
func (d *decoder) required(b *hcl.Block, a hcl.Attributes, f field) String {
	s := d.str(a, f, "")
	if !s.Set {
		d.errorf(b.Body.MissingItemRange(), "Missing required argument",
			"The argument %q is required for %s %q, but no definition was found.", f.name, b.Type, b.Labels[0])
	} else if s.literal() && s.Value == "" {
		d.errorf(s.Range, fmt.Sprintf("Invalid value for %q", f.name), "The %q argument must not be empty.", f.name)
	}
	return s
}

// explainKindMismatch rewrites "Unsupported argument" diagnostics for
// arguments that belong to another tool kind, so the user learns why.
func (d *decoder) explainKindMismatch(kind string, diags hcl.Diagnostics) hcl.Diagnostics {
	for _, diag := range diags {
		if diag.Summary != "Unsupported argument" && diag.Summary != "Unsupported block type" {
			continue
		}
		m := unsupportedName.FindStringSubmatch(diag.Detail)
		if m == nil {
			continue
		}
		name := m[1] + m[2]
		var owners []string
		for _, k := range ToolKinds {
			ks := kindSchemas[k]
			if slices.Contains(ks.attrs, name) || slices.Contains(ks.blocks, name) {
				owners = append(owners, k)
			}
		}
		if len(owners) == 0 {
			continue
		}
		ks := kindSchemas[kind]
		valid := append(append(append([]string(nil), commonToolAttrs...), ks.attrs...), ks.blocks...)
		diag.Detail = fmt.Sprintf("%q belongs to %s tools; this tool has kind = %q. Valid here: %s.",
			name, joinOr(owners), kind, quotedList(valid))
	}
	return diags
}

func joinOr(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	out := items[0]
	for _, s := range items[1 : len(items)-1] {
		out += ", " + s
	}
	return out + " and " + items[len(items)-1]
}

func (d *decoder) decodeBash(a hcl.Attributes, blocks hcl.Blocks) *BashTool {
	bt := &BashTool{
		Commands: d.strList(a, field{name: "commands"}),
		Cwd:      d.str(a, field{name: "cwd"}, "/home/agent"),
		Shared:   d.boolean(a, field{name: "shared"}, false),
	}
	d.checkCommands(bt.Commands)
	if fb := d.singleBlock(blocks, "fs"); fb != nil {
		c, diags := d.content(fb.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "kind"}, {Name: "path"}, {Name: "cwd"}}})
		d.add(diags)
		bt.FS = &BashFS{DeclRange: fb.DefRange, Kind: String{Value: "in_memory"}}
		if c != nil {
			bt.FS.Kind = d.str(c.Attributes, field{name: "kind", oneOf: []string{"in_memory", "overlay", "read_write"}}, "in_memory")
			bt.FS.Path = d.str(c.Attributes, field{name: "path"}, "")
			bt.FS.Cwd = d.str(c.Attributes, field{name: "cwd"}, "")
			if (bt.FS.Kind.Value == "overlay" || bt.FS.Kind.Value == "read_write") && !bt.FS.Path.Set {
				d.errorf(bt.FS.Kind.Range, "Missing fs path",
					"A filesystem of kind %q is backed by a host directory, so it needs path = \"./data\" (relative to the workspace).", bt.FS.Kind.Value)
			}
			if bt.FS.Cwd.Set && bt.Cwd.Set {
				d.errorf(bt.FS.Cwd.Range, "Conflicting working directory",
					"The working directory is set both by the tool's cwd (at %s) and by fs.cwd; keep one.", bt.Cwd.Range)
			}
			if bt.FS.Kind.Value == "in_memory" && bt.FS.Path.Set {
				d.errorf(bt.FS.Path.Range, "Unexpected fs path",
					"An in_memory filesystem is not backed by a host directory; remove \"path\" or set kind = \"overlay\" or \"read_write\".")
			}
		}
	}
	d.checkBashCwd(bt.Cwd)
	if bt.FS != nil {
		d.checkBashCwd(bt.FS.Cwd)
	}
	if eb := d.singleBlock(blocks, "env"); eb != nil {
		c, diags := d.content(eb.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "kind"}, {Name: "vars"}}})
		d.add(diags)
		bt.Env = &BashEnv{DeclRange: eb.DefRange, Kind: String{Value: "empty"}}
		if c != nil {
			bt.Env.Kind = d.str(c.Attributes, field{name: "kind", oneOf: []string{"allow", "deny", "empty", "inherit"}}, "empty")
			bt.Env.Vars = d.strList(c.Attributes, field{name: "vars"})
			k := bt.Env.Kind.Value
			if (k == "allow" || k == "deny") && !bt.Env.Vars.Set {
				d.errorf(bt.Env.Kind.Range, "Missing env vars",
					"An env of kind %q lists the variables it %s: add vars = [\"HOME\", ...].", k, map[string]string{"allow": "passes through", "deny": "removes"}[k])
			}
			if (k == "empty" || k == "inherit") && bt.Env.Vars.Set {
				d.errorf(bt.Env.Vars.Range, "Unexpected env vars",
					"An env of kind %q takes no vars; use kind = \"allow\" or \"deny\" to list variables.", k)
			}
		}
	}
	if lb := d.singleBlock(blocks, "limits"); lb != nil {
		c, diags := d.content(lb.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
			{Name: "max_execution_time_secs"}, {Name: "max_output_size"}, {Name: "max_command_count"}, {Name: "max_loop_iterations"},
		}})
		d.add(diags)
		bt.Limits = &BashLimits{DeclRange: lb.DefRange}
		if c != nil {
			pos := func(name string) Int {
				return d.integer(c.Attributes, field{name: name, min: 1, max: 1 << 40}, 0)
			}
			bt.Limits.MaxExecutionTimeSecs = pos("max_execution_time_secs")
			bt.Limits.MaxOutputSize = pos("max_output_size")
			bt.Limits.MaxCommandCount = pos("max_command_count")
			bt.Limits.MaxLoopIterations = pos("max_loop_iterations")
		}
	}
	if nb := d.singleBlock(blocks, "network"); nb != nil {
		c, diags := d.content(nb.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
			{Name: "enabled"}, {Name: "allowed_url_prefixes"}, {Name: "allowed_methods"},
			{Name: "max_redirects"}, {Name: "max_response_size"}, {Name: "network_timeout_secs"},
		}})
		d.add(diags)
		bt.Network = &BashNetwork{DeclRange: nb.DefRange}
		if c != nil {
			na := c.Attributes
			bt.Network.Enabled = d.boolean(na, field{name: "enabled"}, false)
			bt.Network.AllowedURLPrefixes = d.strList(na, field{name: "allowed_url_prefixes"})
			bt.Network.AllowedMethods = d.strList(na, field{name: "allowed_methods", oneOf: []string{"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}})
			bt.Network.MaxRedirects = d.integer(na, field{name: "max_redirects", min: 0, max: 100}, 0)
			bt.Network.MaxResponseSize = d.integer(na, field{name: "max_response_size", min: 1, max: 1 << 40}, 0)
			bt.Network.NetworkTimeoutSecs = d.integer(na, field{name: "network_timeout_secs", min: 1, max: 86400}, 0)
		}
	}
	return bt
}

// checkBashCwd reports a relative working directory that climbs out of
// the tool's filesystem ("../x"), which serve refuses to start with. An
// absolute one is taken as inside the filesystem (/home/agent/src is its
// src), so it never leaves.
func (d *decoder) checkBashCwd(s String) {
	if !s.Set || s.invalid || !s.Known() || s.Value == "" || strings.HasPrefix(s.Value, "/") {
		return
	}
	c := path.Clean(s.Value)
	if c == "." || filepath.IsLocal(filepath.FromSlash(c)) {
		return
	}
	d.errorf(s.Range, "Working directory outside the filesystem",
		"The working directory %q leaves the tool's filesystem, so agentform serve and invoke would refuse to start the tool. Give a directory inside it, relative to its root (\"src\") or under /home/agent (\"/home/agent/src\").", s.Value)
}

// checkCommands reports commands entries no script could run: an empty
// one, and a name holding white space, which is a command line ("grep -r")
// rather than the program name the shell looks up. An entry with a "/"
// is a path, which may hold spaces.
func (d *decoder) checkCommands(cmds StringList) {
	for i, name := range cmds.Values {
		rng := cmds.ElemRange(i)
		switch {
		case strings.TrimSpace(name) == "":
			d.errorf(rng, "Empty command",
				"Each entry of \"commands\" names a program the tool's scripts may run, like \"grep\"; remove the empty one.")
		case strings.Contains(name, "/"):
		case strings.ContainsFunc(name, unicode.IsSpace):
			if f := strings.FieldsFunc(name, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }); strings.Contains(name, ",") && len(f) > 1 {
				d.errorf(rng, "Invalid command name",
					"%q names several programs in one entry; give each its own: %s.", name, quotedList(f))
			} else if f := strings.Fields(name); len(f) > 1 {
				d.errorf(rng, "Invalid command name",
					"%q is a command line, but \"commands\" lists program names: list %q, and the script passes the rest (the shell looks up each command by its name, so %q would never run).", name, f[0], name)
			} else {
				d.errorf(rng, "Invalid command name",
					"%q has white space around the program name; write %q.", name, f[0])
			}
		}
	}
}

func (d *decoder) decodeMCP(b *hcl.Block, t *Tool, a hcl.Attributes) *MCPTool {
	m := &MCPTool{
		Transport: d.str(a, field{name: "transport", oneOf: []string{TransportHTTP, TransportStdio}}, ""),
		Command:   d.str(a, field{name: "command", runtime: true}, ""),
		Args:      d.strList(a, field{name: "args", runtime: true, elemRuntime: true}),
		URL:       d.str(a, field{name: "url", runtime: true}, ""),
		AuthToken: d.str(a, field{name: "auth_token", runtime: true}, ""),
		Headers:   d.stringMap(a, field{name: "headers", runtime: true}),
		Expose:    d.strList(a, field{name: "expose"}),
	}
	if !m.Transport.Set {
		d.errorf(b.Body.MissingItemRange(), "Missing required argument",
			"The argument \"transport\" is required for mcp tool %q: \"stdio\" (with command) or \"http\" (with url).", t.Name)
	}
	need := func(s String, name string) {
		if !s.Set {
			d.errorf(m.Transport.Range, fmt.Sprintf("Missing %q", name),
				"An mcp tool with transport = %q needs %q.", m.Transport.Value, name)
		}
	}
	forbid := func(set bool, rng hcl.Range, name string) {
		if set {
			d.errorf(rng, "Argument not valid for this transport",
				"%q is not used with transport = %q; remove it or change the transport.", name, m.Transport.Value)
		}
	}
	switch m.Transport.Value {
	case TransportStdio:
		need(m.Command, "command")
		d.checkMCPCommand(m.Command)
		forbid(m.URL.Set, m.URL.Range, "url")
		forbid(m.AuthToken.Set, m.AuthToken.Range, "auth_token")
		forbid(m.Headers.Set, m.Headers.Range, "headers")
	case TransportHTTP:
		need(m.URL, "url")
		d.checkURL(m.URL, "Invalid MCP server URL", "the server's streamable HTTP endpoint, like \"https://mcp.example.com/mcp\"")
		d.checkHeaderValue(m.AuthToken, "auth_token")
		d.checkHeaders(a["headers"], m.Headers)
		forbid(m.Command.Set, m.Command.Range, "command")
		forbid(m.Args.Set, m.Args.Range, "args")
		forbid(t.Config.Set, t.Config.Range, "config")
	}
	if attr, ok := a["tool_capabilities"]; ok {
		if v, _, ok := d.runtimeArg(attr, field{name: "tool_capabilities"}); ok {
			mv, err := convert.Convert(v, cty.Map(cty.List(cty.String)))
			if err != nil || mv.IsNull() {
				d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
					"The \"tool_capabilities\" argument maps served tool names to lists of tags, like { create_issue = [\"github::write\"] }; got %s.", friendly(v))
			} else {
				m.ToolCapabilities = map[string]StringList{}
				for k, lv := range mv.AsValueMap() {
					if lv.IsNull() || listHasNull(lv) {
						d.errorf(subRange(attr.Expr, k), "Incorrect attribute value type",
							"The tags for %q in \"tool_capabilities\" must be a list of strings, not null.", k)
						continue
					}
					vals := listStrings(lv)
					m.ToolCapabilities[k] = StringList{Values: vals, Set: true, Range: subRange(attr.Expr, k), ElemRanges: elemRanges(exprAt(attr.Expr, k), len(vals))}
				}
			}
		}
	}
	return m
}

// checkMCPCommand reports a stdio command that names no program: empty,
// or only white space. Such a command would otherwise be looked up when
// plan starts the server, and reported as a program to install.
func (d *decoder) checkMCPCommand(s String) {
	const what = "The \"command\" argument names the program that runs the MCP server, like \"npx\" or \"./bin/server\""
	switch {
	case s.literal() && strings.TrimSpace(s.Value) == "":
		d.errorf(s.Range, "Empty MCP server command", "%s; it must not be empty or only white space. Set it to the server's program, and its arguments in \"args\".", what)
	case s.Runtime != nil && s.Runtime.HasDefault():
		dv, err := convert.Convert(s.Runtime.Default, cty.String)
		if err == nil && !dv.IsNull() && strings.TrimSpace(dv.AsString()) == "" {
			d.errorf(s.Runtime.Range, "Empty MCP server command", "%s; the default of runtime(%q) is empty or only white space. Give a program as the default, or leave the default out so that %s must be set.", what, s.Runtime.Env, s.Runtime.Env)
		}
	}
}

func (d *decoder) decodeA2A(b *hcl.Block, a hcl.Attributes) *A2ATool {
	at := &A2ATool{
		URL:                        d.required(b, a, field{name: "url", runtime: true}),
		AuthToken:                  d.str(a, field{name: "auth_token", runtime: true}, ""),
		Headers:                    d.stringMap(a, field{name: "headers", runtime: true}),
		TimeoutSecs:                d.integer(a, field{name: "timeout_secs", runtime: true, min: 1, max: 86400}, 0),
		DefaultAcceptedOutputModes: d.strList(a, field{name: "default_accepted_output_modes"}),
		TargetAgent:                d.str(a, field{name: "target_agent"}, ""),
	}
	d.checkURL(at.URL, "Invalid A2A URL", "the agent's base URL, like \"https://planner.example.com\"")
	d.checkHeaderValue(at.AuthToken, "auth_token")
	d.checkHeaders(a["headers"], at.Headers)
	if attr, ok := a["tenant"]; ok {
		at.Tenant = d.decodeTenant(attr)
	}
	return at
}

// checkURL reports a url written in the manifest that no plan could
// reach: one that is not an absolute http:// or https:// URL with a host.
// validate says so, rather than plan alone (and not plan -refresh=false,
// which asks no server). A runtime() value is checked by plan, where it
// is known. The URL is not quoted: the source line shows it.
//
// The default of a runtime() value that is no secret is checked too, with
// a warning: plans that run without the variable use it, but where the
// variable is always set it does no harm. A secret's default is not
// looked at here (its message could not say what is wrong without
// quoting it).
func (d *decoder) checkURL(s String, summary, want string) {
	if ref := s.Runtime; ref != nil && !ref.Secret && ref.HasDefault() {
		if dv, err := convert.Convert(ref.Default, cty.String); err == nil && !dv.IsNull() && dv.IsKnown() {
			if why := urlProblem(dv.AsString()); why != "" {
				d.warnf(ref.Range, summary, "The default of runtime(%q) is used where %s is unset, and the url must be an absolute http:// or https:// URL, but %s. Set it to %s, or give no default.", ref.Env, ref.Env, why, want)
			}
		}
		return
	}
	if !s.literal() {
		return
	}
	if why := urlProblem(s.Value); why != "" {
		d.errorf(s.Range, summary, "The url must be an absolute http:// or https:// URL, but %s. Set it to %s.", why, want)
	}
}

// urlProblem says why v is not an absolute http or https URL with a host,
// or "" when it is one.
func urlProblem(v string) string {
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return "it is not a URL"
	case u.Scheme == "" || u.Opaque != "" && u.Host == "" && !strings.Contains(v, "://"):
		// "localhost:3000/mcp" parses with the scheme "localhost".
		return "it has no scheme: start it with https:// (or http://)"
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("its scheme is %q; only http and https are supported", u.Scheme)
	case u.Host == "":
		return "it has no host"
	}
	return ""
}

var tenantFields = []string{"id", "policy"}

func (d *decoder) decodeTenant(attr *hcl.Attribute) *A2ATenant {
	tn := &A2ATenant{Range: attr.Expr.Range(), Policy: String{Value: "inherit"}}
	items, diags := hcl.ExprMap(attr.Expr)
	if diags.HasErrors() {
		d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			"The \"tenant\" argument must be an object, like { policy = \"fixed\", id = \"acme\" }.")
		return tn
	}
	attrs := hcl.Attributes{}
	for _, kv := range items {
		key := keyName(kv.Key)
		if !slices.Contains(tenantFields, key) {
			d.errorf(kv.Key.Range(), "Unsupported tenant field",
				"A tenant has only \"policy\" and \"id\", not %q.%s", key, didYouMean(key, tenantFields))
			continue
		}
		attrs[key] = &hcl.Attribute{Name: key, Expr: kv.Value, Range: kv.Value.Range(), NameRange: kv.Key.Range()}
	}
	tn.Policy = d.str(attrs, field{name: "policy", oneOf: []string{"fixed", "inherit", "none"}}, "inherit")
	tn.ID = d.str(attrs, field{name: "id", runtime: true}, "")
	switch {
	case tn.Policy.Value == "fixed" && !tn.ID.Set:
		d.errorf(tn.Policy.Range, "Missing tenant id",
			"A tenant with policy = \"fixed\" sends the same tenant on every call, so it needs id = \"...\" (or id = runtime(\"TENANT_ID\")).")
	case tn.Policy.Value != "fixed" && tn.ID.Set:
		d.errorf(tn.ID.Range, "Unexpected tenant id",
			"A tenant id is only used with policy = \"fixed\"; this tenant has policy = %q.", tn.Policy.Value)
	}
	return tn
}

func listHasNull(v cty.Value) bool {
	for it := v.ElementIterator(); it.Next(); {
		if _, ev := it.Element(); ev.IsNull() {
			return true
		}
	}
	return false
}
