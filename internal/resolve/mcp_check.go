package resolve

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/lockfile"
)

// mcpMaxNameLength is the longest served tool name MCP recommends, in
// characters.
const mcpMaxNameLength = 128

// mcpNameError says why a served tool's name could read as another name,
// or returns "": it is not valid UTF-8 (or holds U+FFFD, which bytes that
// are not decode to), or holds a character capability tags refuse as
// hidden (a control or format character, a zero-width or invisible one, a
// space other than U+0020), or any whitespace. In a plan's matrix, an
// audit report or a model's tool list such a name shows like another one
// ("delete_all\u200b" like "delete_all"), and tool_capabilities written
// for the name it shows as do not apply to it.
func mcpNameError(name string) string {
	if !utf8.ValidString(name) {
		return "bytes that are not valid UTF-8"
	}
	if strings.ContainsRune(name, utf8.RuneError) {
		return "U+FFFD, the replacement character, which bytes that are not valid UTF-8 decode to"
	}
	if r, ok := capability.Hidden(name); ok {
		return fmt.Sprintf("%U, a control, format or invisible character", r)
	}
	if i := strings.IndexFunc(name, unicode.IsSpace); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		return fmt.Sprintf("%U, a whitespace character", r)
	}
	return ""
}

// mcpNameWarning says how a served tool's name that reads as itself
// (mcpNameError is "") strays from what MCP recommends: 1 to 128 ASCII
// letters, digits, "_", "-" and ".". It returns "" for a name that keeps to
// it. Model APIs refuse tool names outside such a set.
func mcpNameWarning(name string) string {
	var parts []string
	if n := utf8.RuneCountInString(name); n > mcpMaxNameLength {
		parts = append(parts, fmt.Sprintf("%d characters long", n))
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return !mcpNameChar(r) }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		parts = append(parts, fmt.Sprintf("holds %+q", r))
	}
	return strings.Join(parts, " and ")
}

// mcpNameChar reports whether r is one of the characters MCP recommends
// for tool names.
func mcpNameChar(r rune) bool {
	return r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// mcpShownLength is how many characters of a text a server chose (a
// tool's name, a Content-Type) a message quotes.
const mcpShownLength = 64

// mcpShow quotes text a server chose for a message (a served tool's name,
// the Content-Type of its answer), in ASCII so that every character shows,
// cut after mcpShownLength characters. Redact the text whole before:
// a runtime value cut in two is no longer found, and the part before the
// cut would show.
func mcpShow(text string) string {
	if rs := []rune(text); len(rs) > mcpShownLength {
		return fmt.Sprintf("%+q…", string(rs[:mcpShownLength]))
	}
	return fmt.Sprintf("%+q", text)
}

// mcpCheckRegistered checks the served tools mcpRegister registers (a
// tool expose leaves out is not checked: it is never shown to a model):
// a name that could read as another (mcpNameError) or an inputSchema
// that cannot describe a tool's arguments (checkInputSchema; MCP requires
// a JSON Schema object with "type": "object") is an error naming the tool,
// and names that stray from MCP's recommendation (mcpNameWarning) are one
// warning. Served names are quoted after redact, which scrubs the block's
// runtime values.
func mcpCheckRegistered(req Request, served map[string]*mcpServedTool, names []string, fromLock bool, redact func(string) string) hcl.Diagnostics {
	t := req.Tool
	var diags hcl.Diagnostics
	serves := fmt.Sprintf("The MCP server of %q serves", t.Name)
	fix := "Fix the tool on the server, or register only the tools the agents need with expose, leaving this one out."
	if fromLock {
		serves = fmt.Sprintf("The entry for %q in %s (the server not reached) records", t.Name, lockfile.FileName)
		fix = "Fix the tool on the server and run agentform lock -upgrade where it can be reached, or register only the tools the agents need with expose, leaving this one out."
	}
	var stray []string
	for _, name := range names {
		shown := mcpShow(redact(name))
		if why := mcpNameError(name); why != "" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid MCP tool name",
				Detail: fmt.Sprintf("%s a tool named %s, which holds %s: it could read as another name in the plan, in audit reports and in a model's tool list, and tool_capabilities written for the name it reads as would not apply to it. agentform does not register such a tool. %s",
					serves, shown, why, fix),
				Subject: mcpExposeRange(req, name).Ptr(),
			})
			continue
		}
		if why := mcpNameWarning(name); why != "" {
			stray = append(stray, fmt.Sprintf("%s (%s)", shown, why))
		}
		schema, ok := served[name].def["inputSchema"]
		var problem string
		if !ok {
			problem = "without an inputSchema"
		} else if err := checkInputSchema(mcpCanonField(schema), false); err != nil {
			problem = "with an inputSchema that cannot describe its arguments: " + redact(err.Error())
		}
		if problem != "" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid MCP tool schema",
				Detail: fmt.Sprintf("%s the tool %s %s. MCP requires a tool's inputSchema to be a JSON Schema object with \"type\": \"object\"; agentform ships it as the tool's parameters, so it does not register such a tool. %s",
					serves, shown, problem, fix),
				Subject: mcpExposeRange(req, name).Ptr(),
			})
		}
	}
	if len(stray) > 0 {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "MCP tool names outside the recommended characters",
			Detail: fmt.Sprintf("%s %s with a name outside what MCP recommends for tool names (1 to %d ASCII letters, digits, \"_\", \"-\" and \".\"): %s. Model APIs refuse tool names outside such a set (several take only letters, digits, \"_\" and \"-\", up to 64 characters, and the model sees %q before each name), so a model may refuse to be given these tools. Rename them on the server, or leave them out with expose.",
				serves, mcpToolCount(len(stray)), mcpMaxNameLength, strings.Join(stray, ", "), t.Name+"__"),
			Subject: t.DeclRange.Ptr(),
		})
	}
	return diags
}

// mcpExposeRange is where a diagnostic about a served tool points: its
// entry in expose when the block lists it there, else the block.
func mcpExposeRange(req Request, name string) hcl.Range {
	m := req.Tool.MCP
	for i, n := range m.Expose.Values {
		if n == name && i < len(m.Expose.ElemRanges) {
			return m.Expose.ElemRanges[i]
		}
	}
	return req.Tool.DeclRange
}
