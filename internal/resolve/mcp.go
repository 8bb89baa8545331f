package resolve

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zclconf/go-cty/cty"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/mcpwire"
	"github.com/agentform/agentform/internal/proctree"
	"github.com/agentform/agentform/internal/sameorigin"
	"github.com/agentform/agentform/internal/secretparts"
	"github.com/agentform/agentform/lockfile"
)

// MCPHashedFields are the fields of a served tool that its lock digest
// covers, in the (sorted) order they appear in lockfile.Tool.HashedFields.
// The digest is the sha256 of the canonical JSON object holding those of
// the fields the server sent (absent and null fields are left out); title
// and _meta are not covered, and are not kept.
var MCPHashedFields = []string{"annotations", "description", "inputSchema", "name", "outputSchema"}

// mcpMaxPages bounds tools/list pagination, so that a server that keeps
// handing out cursors cannot hold a plan forever.
const mcpMaxPages = 1000

// mcpClientVersion is the version agentform reports in initialize.
const mcpClientVersion = "0.1.0"

// mcpMaxMessage bounds one message of an MCP server (mcpwire.MaxAnswer):
// over stdio the SDK refuses a longer line, and over HTTP it is the most
// agentform reads of one response (mcpBody). The bound is per response,
// not per event: an event stream answers one request, and what it carries
// besides the answer (progress, log messages) counts towards it.
const mcpMaxMessage = mcpwire.MaxAnswer

// ResolveMCP resolves an mcp tool block by connecting to its server (stdio
// subprocess or streamable HTTP), calling initialize and tools/list (all
// pages), and registering one tool per served tool as "<block>__<served>"
// (only those in expose, when set). Its Pin records the server's identity
// and, for each registered served tool, the digest of the canonical JSON of
// MCPHashedFields and that JSON (in lockfile.ExactJSON's form).
//
// When the server is not contacted (-refresh=false, a runtime value that is
// unset without a default) or cannot be reached (connection refused, no
// such host), the tools come from req.Locked with FromLock set and a
// warning; with no lock either the result is Unresolved, with a warning.
// A server that is reached but fails (command not found, no answer within
// req.Timeout, exits early, refuses the credentials, answers with an error)
// is an error located at the command or url argument; the Resolved value
// is then Unresolved. Runtime values are used to reach the server only:
// they never appear in the result or in a diagnostic.
//
// ResolveMCP does not report drift: the caller does, with MCPDrift when
// FromLock and Unresolved are both false, comparing the lock entry as it
// may be shown (LockShown, less the Unpinnable tools and those expose no
// longer lists, MCPLockedWithout) with resolved.Pin. Results are not
// cached, because the drift check needs the server's current answer.
func ResolveMCP(ctx context.Context, req Request) (*Resolved, hcl.Diagnostics) {
	t := req.Tool
	if t == nil || t.MCP == nil {
		rng := hcl.Range{}
		if t != nil {
			rng = t.DeclRange
		}
		return &Resolved{Unresolved: true}, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid mcp tool",
			Detail:   "The tool block has no mcp settings; this is a bug in agentform, please report it.",
			Subject:  rng.Ptr(),
		}}
	}
	m := t.MCP
	transport := m.Transport.Value
	if transport == "" {
		if m.Command.Set {
			transport = manifest.TransportStdio
		} else {
			transport = manifest.TransportHTTP
		}
	}
	s := &mcpSession{req: req, transport: transport}
	if !req.Refresh {
		// Nothing is contacted; the runtime values are read all the same,
		// so that the lock's definitions are checked for them.
		switch transport {
		case manifest.TransportStdio:
			s.prepareStdio()
		case manifest.TransportHTTP:
			s.prepareHTTP()
		}
		return mcpFallback(req, s, "-refresh=false skips contacting MCP servers", mcpAddressKnown(req, transport))
	}
	var missing []string
	switch transport {
	case manifest.TransportStdio:
		missing = s.prepareStdio()
	case manifest.TransportHTTP:
		missing = s.prepareHTTP()
	default:
		return &Resolved{Unresolved: true}, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid MCP transport",
			Detail:   fmt.Sprintf("transport must be %q or %q.", manifest.TransportStdio, manifest.TransportHTTP),
			Subject:  m.Transport.Range.Ptr(),
		}}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		missing = mcpDedupe(missing)
		return mcpFallback(req, s, missingEnvDetail(missing), mcpAddressKnown(req, transport))
	}
	if d := s.check(); d != nil {
		return &Resolved{Unresolved: true}, hcl.Diagnostics{d}
	}

	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	opCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	served, err := s.run(opCtx)
	if err != nil {
		f := s.classify(opCtx, ctx, err, timeout)
		if f.unreachable {
			return mcpFallback(req, s, f.detail, true)
		}
		return &Resolved{Unresolved: true}, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  f.summary,
			Detail:   f.detail,
			Subject:  f.subject.Ptr(),
		}}
	}
	diags, unpinnable := mcpUnstorableNames(req, s, served)
	res, d := mcpRegister(req, served, false, s.redact)
	diags = append(diags, d...)
	res.Unpinnable = unpinnable
	if d := s.secretInDefinitions(served, res.Tools, 4, false); d != nil {
		return &Resolved{Unresolved: true}, hcl.Diagnostics{d}
	}
	if diags.HasErrors() {
		return &Resolved{Unresolved: true}, diags
	}
	// The lock entry is shown beside this answer where they differ
	// (MCPDrift), so it is shown with the text of its definitions that
	// quotes a runtime value the block gives left out (as the answer is
	// checked: a whole secret from 4 bytes). For that it is not refused:
	// the answer is clean, and lock -upgrade replaces the entry with it.
	if locked := req.Locked; locked != nil && locked.Kind == manifest.KindMCP {
		if d := s.lockedNames(locked); d != nil {
			return &Resolved{Unresolved: true}, hcl.Diagnostics{d}
		}
		res.LockShown = s.withholdSecrets(locked)
	}
	if len(served) == 0 {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "MCP server serves no tools",
			Detail:   fmt.Sprintf("The MCP server of %q lists no tools, so the block registers none. Check the server's configuration.", t.Name),
			Subject:  t.DeclRange.Ptr(),
		})
	}
	pin := &lockfile.Tool{
		Kind:          manifest.KindMCP,
		ServerName:    s.serverName,
		ServerVersion: s.serverVersion,
		HashedFields:  append([]string(nil), MCPHashedFields...),
		Served:        map[string]string{},
		Definitions:   map[string]string{},
	}
	// The pin covers the registered served tools only: with expose set,
	// tools the block does not expose are never shown to a model, so their
	// definitions cannot poison it, and pinning them would make the lock
	// churn with every change to tools nobody uses. A name newly added to
	// expose therefore shows up in MCPDrift as "added since lock".
	for _, tl := range res.Tools {
		def := served[tl.Served].canon
		pin.Served[tl.Served] = SHA256(def)
		// In a form the lockfile keeps exactly: it normalises its text
		// (NFC), which could change what a definition says (a property
		// name, an enum value), and a plan from the lock registers the
		// tools from these definitions.
		pin.Definitions[tl.Served] = lockfile.ExactJSON(string(def))
	}
	res.Pin = pin
	return res, diags
}

// mcpServedTool is one tool as listed by an MCP server (or the lock).
type mcpServedTool struct {
	name string
	// def holds the hashed fields, decoded with json.Number.
	def map[string]any
	// canon is the canonical JSON of def.
	canon []byte
}

// mcpUnstorableNames leaves out of served, with a warning each, the tools
// whose names the lockfile cannot hold as they are: names are keys of its
// maps, which HCL reads back NFC-normalised, so a name that is not NFC
// (a decomposed accent) or not valid UTF-8 would be pinned under another
// name than the one the server answers to. MCP tool names are normally
// ASCII letters, digits, "_", "-" and ".". It returns the names left out,
// as the lockfile would hold them: an earlier agentform pinned such tools
// under those names, and their entries are dropped, not drift.
func mcpUnstorableNames(req Request, s *mcpSession, served map[string]*mcpServedTool) (hcl.Diagnostics, []string) {
	var diags hcl.Diagnostics
	var left []string
	for _, name := range sortedKeys(served) {
		stored := lockfile.Canonical(name)
		if stored == name {
			continue
		}
		st := served[name]
		delete(served, name)
		// The name as the server sent it, a runtime value it quotes
		// replaced, and quoted in ASCII so that its combining marks show.
		detail := fmt.Sprintf("The MCP server of %q serves a tool named %+q, which is not Unicode text in normal form C (NFC). %s stores names normalised, so it could not pin this tool under the name the server uses: it is not registered. Rename it on the server (MCP tool names are normally ASCII letters, digits, \"_\", \"-\" and \".\").",
			req.Tool.Name, s.redact(name), lockfile.FileName)
		// An earlier agentform pinned such a tool under the normalised
		// name, with the digest of what the server sent: that entry is
		// this tool's, unless the server serves a tool of that name too.
		if _, clash := served[stored]; !clash && req.Locked != nil && req.Locked.Served[stored] == SHA256(st.canon) {
			left = append(left, stored)
			detail += fmt.Sprintf(" An earlier agentform pinned it under the normalised name %+q: that entry is dropped from %s.", s.redact(stored), lockfile.FileName)
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "MCP tool name cannot be pinned",
			Detail:   detail,
			Subject:  req.Tool.DeclRange.Ptr(),
		})
	}
	return diags, left
}

// MCPLockedWithout returns the lock entry l without the served tools
// names (Resolved.Unpinnable), for MCPDrift: l itself when there are
// none.
func MCPLockedWithout(l *lockfile.Tool, names []string) *lockfile.Tool {
	if l == nil || len(names) == 0 {
		return l
	}
	c := *l
	c.Served, c.Definitions = maps.Clone(l.Served), maps.Clone(l.Definitions)
	for _, n := range names {
		delete(c.Served, n)
		delete(c.Definitions, n)
	}
	return &c
}

// mcpRegister turns served tools into registered tools, applying expose
// and tool_capabilities. fromLock changes the wording of the warnings;
// redact scrubs runtime values from the served names they list. An exposed
// name the lock entry lacks stays a warning under -lockfile=readonly: the
// entry pins the exposed tools the server served, so the name may be one
// the server does not serve, which a plan reaching it accepts too.
func mcpRegister(req Request, served map[string]*mcpServedTool, fromLock bool, redact func(string) string) (*Resolved, hcl.Diagnostics) {
	m := req.Tool.MCP
	var diags hcl.Diagnostics
	where, fix := "the MCP server does not serve it", "Fix the name or remove it from expose."
	if fromLock {
		where, fix = "the lock entry does not list it", "Fix the name, or run agentform lock where the server can be reached to pin it."
	}
	var exposed map[string]bool
	if m.Expose.Set || len(m.Expose.Values) > 0 {
		exposed = map[string]bool{}
		for i, name := range m.Expose.Values {
			if exposed[name] {
				continue
			}
			exposed[name] = true
			if _, ok := served[name]; ok {
				continue
			}
			rng := m.Expose.ElemRange(i)
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Exposed tool not served",
				Detail: fmt.Sprintf("expose lists %s, but %s, so no tool is registered for it. Served tools: %s. %s",
					mcpShow(name), where, mcpServedList(served, redact), fix),
				Subject: rng.Ptr(),
			})
		}
	}
	for _, name := range sortedKeys(m.ToolCapabilities) {
		if _, ok := served[name]; ok || exposed != nil {
			// Names outside expose are reported by manifest validation.
			continue
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Capabilities for a tool that is not served",
			Detail: fmt.Sprintf("tool_capabilities names %s, but %s, so its tags are required for no tool: every served tool of the block needs only the block's capabilities. Served tools: %s. Names are compared exactly, character for character: fix the name or remove it.",
				mcpShow(name), where, mcpServedList(served, redact)),
			Subject: m.ToolCapabilities[name].Range.Ptr(),
		})
	}
	var names []string
	for _, name := range sortedKeys(served) {
		if exposed == nil || exposed[name] {
			names = append(names, name)
		}
	}
	diags = append(diags, mcpCheckRegistered(req, served, names, fromLock, redact)...)
	res := &Resolved{FromLock: fromLock}
	for _, name := range names {
		st := served[name]
		tl := Tool{
			Name:         req.Tool.Name + "__" + name,
			Served:       name,
			InputSchema:  mcpCanonField(st.def["inputSchema"]),
			OutputSchema: mcpCanonField(st.def["outputSchema"]),
			Annotations:  mcpCanonField(st.def["annotations"]),
		}
		if d, ok := st.def["description"].(string); ok {
			tl.Description = d
		}
		if caps, ok := m.ToolCapabilities[name]; ok && len(caps.Values) > 0 {
			tl.Requires = append([]string(nil), caps.Values...)
		}
		res.Tools = append(res.Tools, tl)
	}
	sort.Slice(res.Tools, func(i, j int) bool { return res.Tools[i].Name < res.Tools[j].Name })
	// A served tool without a description is described by the block's.
	res.DescriptionUnused = len(res.Tools) > 0 && !slices.ContainsFunc(res.Tools, func(tl Tool) bool { return tl.Description == "" })
	return res, diags
}

// withholdSecrets returns the lock entry as drift may show it beside a
// live answer: in each definition, every string that quotes a runtime value
// the block gives (a whole secret from 4 bytes, or a credential inside
// one) replaced by a note saying so; locked itself when none does. Names
// and the server's identity are not changed here: a lock entry quoting a
// secret there is refused (lockedNames).
func (s *mcpSession) withholdSecrets(locked *lockfile.Tool) *lockfile.Tool {
	var shown *lockfile.Tool
	for _, name := range sortedKeys(locked.Definitions) {
		// What drift shows: the definition's fields, or its text when it
		// is no object.
		v := any(mcpFields(locked.Definitions[name]))
		changed := false
		for _, sv := range s.secrets {
			if needles := sv.needles(4); len(needles) > 0 {
				v = mcpWithhold(v, needles, "(not shown: it quotes the value of "+sv.env+")", &changed)
			}
		}
		if !changed {
			continue
		}
		if shown == nil {
			c := *locked
			c.Definitions = maps.Clone(locked.Definitions)
			shown = &c
		}
		text, _ := mcpwire.CanonicalJSON(v)
		shown.Definitions[name] = string(text)
	}
	if shown == nil {
		return locked
	}
	return shown
}

// mcpWithhold returns v with every string (object keys included) that
// quotes one of needles replaced by note, setting *changed when it
// replaces one.
func mcpWithhold(v any, needles []string, note string, changed *bool) any {
	switch x := v.(type) {
	case string:
		if quotes(x, needles) {
			*changed = true
			return note
		}
	case json.Number:
		if quotes(x, needles) {
			*changed = true
			return note
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mcpWithhold(e, needles, note, changed)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		// Keys in order, each one replaced numbered, so that two keys
		// quoting a value stay two, the same two on every run.
		n := 0
		for _, k := range sortedKeys(x) {
			e := x[k]
			if quotes(k, needles) {
				*changed = true
				// A number no key has (one replaced by an earlier value's
				// pass may, under the same note).
				for {
					n++
					r := fmt.Sprintf("%s (%d)", note, n)
					_, inX := x[r]
					_, inOut := out[r]
					if !inX && !inOut {
						k = r
						break
					}
				}
			}
			out[k] = mcpWithhold(e, needles, note, changed)
		}
		return out
	}
	return v
}

// lockedNames refuses, with the server reached, a lock entry whose served
// tool names or server identity quote a runtime value the block gives (a
// whole secret from 8 bytes, or a credential inside one): those show in
// drift and lock changes as they are. Shorter values count only in
// definitions, where drift leaves them out: a name that happens to be a
// short value is taken for a word.
func (s *mcpSession) lockedNames(locked *lockfile.Tool) *hcl.Diagnostic {
	served := map[string]*mcpServedTool{}
	for _, names := range []map[string]string{locked.Served, locked.Definitions} {
		for name := range names {
			served[name] = &mcpServedTool{name: name}
		}
	}
	return s.lockedSecret(locked, served, 8)
}

// lockedSecret refuses a lock entry that quotes a runtime value the block
// gives (pinned before agentform refused such text, or by hand): served
// are the tools it records, every one checked, and a whole secret value
// counts from minWhole bytes.
func (s *mcpSession) lockedSecret(locked *lockfile.Tool, served map[string]*mcpServedTool, minWhole int) *hcl.Diagnostic {
	ls := *s
	ls.serverName, ls.serverVersion = locked.ServerName, locked.ServerVersion
	all := make([]Tool, 0, len(served))
	for _, name := range sortedKeys(served) {
		all = append(all, Tool{Served: name})
	}
	return ls.secretInDefinitions(served, all, minWhole, true)
}

// mcpServedFromLock returns the served tools a lock entry records, read
// from its definitions, and the names of those it cannot be trusted for:
// what ships is the recorded definition, so it must be there, be the one
// its digest names, under its own name, and in a text agentform writes
// for it (mcpWrittenForm), or
// a lockfile edited by hand could give the model any text (a duplicate key
// the digest's reading skips, another tool's definition) while serve still
// finds the server's tool unchanged.
func mcpServedFromLock(locked *lockfile.Tool) (map[string]*mcpServedTool, []string) {
	served := map[string]*mcpServedTool{}
	var altered []string
	// A definition with no digest is checked by nothing, yet ships.
	for _, name := range sortedKeys(locked.Definitions) {
		if _, ok := locked.Served[name]; !ok {
			altered = append(altered, name)
		}
	}
	for _, name := range sortedKeys(locked.Served) {
		st := &mcpServedTool{name: name, def: map[string]any{"name": name}}
		raw, ok := locked.Definitions[name]
		if ok {
			if v, err := mcpwire.DecodeJSON([]byte(raw)); err == nil {
				if obj, ok := v.(map[string]any); ok {
					st.def = obj
				}
			}
		}
		st.canon, _ = mcpwire.CanonicalJSON(st.def)
		if !ok || st.def["name"] != name || SHA256(st.canon) != locked.Served[name] || !mcpWrittenForm(raw, string(st.canon)) {
			altered = append(altered, name)
		}
		served[name] = st
	}
	sort.Strings(altered)
	return served, altered
}

// mcpWrittenForm reports whether raw is a text some agentform writes for
// the canonical definition canon: ExactJSON (this version), or the text
// normalised as it was (earlier versions, whose entries still hold the
// digest's value when normalising changed nothing).
func mcpWrittenForm(raw, canon string) bool {
	return raw == lockfile.ExactJSON(canon) || raw == lockfile.Canonical(canon)
}

// mcpToolCount is "1 tool" or "n tools".
func mcpToolCount(n int) string {
	if n == 1 {
		return "1 tool"
	}
	return fmt.Sprintf("%d tools", n)
}

// mcpAddressKnown reports whether the server of an mcp block is known at
// plan time: its url (http), or its command and arguments (stdio), but for
// secret() arguments, which are credentials: no runtime() value among them
// left unset. A plan that reaches the server with the block's credentials
// set pins it.
func mcpAddressKnown(req Request, transport string) bool {
	m := req.Tool.MCP
	if transport == manifest.TransportHTTP {
		_, ok := req.String(m.URL)
		return ok
	}
	if _, ok := req.String(m.Command); !ok {
		return false
	}
	if ref := m.Args.Runtime; ref != nil && !ref.Secret {
		if _, ok := req.lookup(ref); !ok {
			return false
		}
	}
	for _, ref := range m.Args.ElemRuntime {
		if ref != nil && !ref.Secret {
			if _, ok := req.String(manifest.String{Runtime: ref}); !ok {
				return false
			}
		}
	}
	return true
}

// mcpFallback answers from the lock entry, or marks the block unresolved
// when there is none. reason says why the server was not used; it must
// not hold a runtime value. s holds the runtime values that could be read
// for the block: a lock entry quoting a secret among them is refused, as
// the server's own answer would be. pinnable says that the server's
// address is known (mcpAddressKnown), so that a plan reaching it with the
// block's credentials set pins its tools: a lockfile without an entry for
// the block is out of date then, an error under -lockfile=readonly as it
// is when the server answers.
func mcpFallback(req Request, s *mcpSession, reason string, pinnable bool) (*Resolved, hcl.Diagnostics) {
	reason = strings.TrimSuffix(reason, ".")
	locked := req.Locked
	if locked == nil || locked.Kind != manifest.KindMCP {
		// An entry of another kind is reported by the plan's lock
		// comparison (the block changed kind).
		if pinnable && req.LockReadonly && locked == nil {
			return &Resolved{Unresolved: true}, hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Lockfile out of date",
				Detail: fmt.Sprintf("-lockfile=readonly: %s has no entry for %q, and its served tools could not be listed. %s Run agentform lock where the server can be reached, with the block's runtime values set, review the change and commit %s.",
					lockfile.FileName, req.Tool.Name, sentence(reason), lockfile.FileName),
				Subject: req.Tool.DeclRange.Ptr(),
			}}
		}
		entry := fmt.Sprintf("There is no entry for it in %s either", lockfile.FileName)
		if locked != nil {
			entry = fmt.Sprintf("Its entry in %s is for %s tool", lockfile.FileName, manifest.KindWithArticle(locked.Kind))
		}
		return &Resolved{Unresolved: true, Unpinned: pinnable && locked == nil}, hcl.Diagnostics{{
			Severity: hcl.DiagWarning,
			Summary:  "MCP tools unresolved",
			Detail: fmt.Sprintf("Served tools of %q could not be listed. %s %s, so the plan shows the block as one unresolved tool. Run agentform lock where the server can be reached, with the block's runtime values set, so that its tools are listed and pinned in %s; review them and commit it.",
				req.Tool.Name, sentence(reason), entry, lockfile.FileName),
			Subject: req.Tool.DeclRange.Ptr(),
		}}
	}
	if d := mcpFieldsNarrowed(req.Tool.Name, locked, req.Tool.DeclRange); d != nil {
		return &Resolved{Unresolved: true}, hcl.Diagnostics{d}
	}
	served, altered := mcpServedFromLock(locked)
	if len(altered) > 0 {
		return &Resolved{Unresolved: true}, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "MCP lock entry does not match its digests",
			Detail: fmt.Sprintf("Served tools of %q could not be listed. %s The entry in %s records no definition, or not the one its digest names in a form agentform writes, for %s: the file was edited, or written by an earlier agentform, which stored definitions with their text normalised. agentform does not build from them. Run agentform lock where the server can be reached, review the change and commit %s.",
				req.Tool.Name, sentence(reason), lockfile.FileName, mcpQuotedList(altered, s.redact), lockfile.FileName),
			Subject: req.Tool.DeclRange.Ptr(),
		}}
	}
	res, diags := mcpRegister(req, served, true, s.redact)
	// A lock pinned before agentform refused such definitions (or by hand)
	// may quote a secret the block now gives: checked as a live answer is,
	// every tool it records, with the runtime values that could be read,
	// except that a whole secret value counts from 8 bytes: plans that
	// skip the server (-refresh=false in CI) often run with placeholder
	// values, and a "test" or "none" is no credential a lock could hold.
	if d := s.lockedSecret(locked, served, 8); d != nil {
		return &Resolved{Unresolved: true}, hcl.Diagnostics{d}
	}
	if diags.HasErrors() {
		return &Resolved{Unresolved: true}, diags
	}
	// The pin covers the registered tools, as a live one does: a tool
	// expose no longer lists leaves the lock.
	pin := *locked
	pin.HashedFields = append([]string(nil), locked.HashedFields...)
	pin.Served, pin.Definitions = map[string]string{}, map[string]string{}
	for _, tl := range res.Tools {
		pin.Served[tl.Served] = locked.Served[tl.Served]
		pin.Definitions[tl.Served] = locked.Definitions[tl.Served]
	}
	res.Pin = &pin
	warn := &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  "Served tools taken from " + lockfile.FileName,
		Detail: fmt.Sprintf("%s The plan uses the %s pinned for %q in %s and cannot tell whether the server changed them.",
			sentence(reason), mcpToolCount(len(res.Tools)), req.Tool.Name, lockfile.FileName),
		Subject: req.Tool.DeclRange.Ptr(),
	}
	return res, append(hcl.Diagnostics{warn}, diags...)
}

// mcpSession is one discovery session with an MCP server.
type mcpSession struct {
	req       Request
	transport string

	// secrets are the runtime values read for this session (and the
	// auth token), each with the variable that supplied it, scrubbed from
	// any error text.
	secrets []mcpSecret
	// scrub hides the runtime values in secrets from messages (redact),
	// with the credentials inside them and the parts of a URL given at
	// runtime (secretparts.URLParts: host, user name, a secret URL's
	// path), which are left out of messages only: a definition may name
	// its server's host or path.
	scrub *secretparts.Scrubber

	// stdio
	command string
	args    []string
	env     []string
	cmd     *exec.Cmd
	server  proctree.Proc   // the stdio server once connected
	tree    []proctree.Proc // what it started, found before it was closed
	untrack func()          // forgets server once killed (proctree.Track)
	stderr  *mcpwire.Tail

	// http
	endpoint string
	headers  map[string]string
	token    string
	rt       *mcpRoundTripper

	// capture sees the session's messages, and the error reading one
	// failed with.
	capture *mcpwire.Capture

	serverName    string
	serverVersion string
}

type mcpSecret struct {
	value, env string
	// secret is set for a secret(runtime()) value.
	secret bool
}

// needles are what text must not quote of the value: the credentials
// inside it (secretparts.Credentials) and, for a secret of minWhole bytes
// or more, the whole value.
func (sv mcpSecret) needles(minWhole int) []string {
	parts := secretparts.Credentials(sv.value, sv.secret)
	if sv.secret && len(sv.value) >= minWhole {
		parts = append(parts, sv.value)
	}
	// Each as written and re-encoded (a definition quoting a secret
	// percent-encoded quotes it all the same).
	var needles []string
	for _, p := range parts {
		needles = append(needles, secretparts.Forms(p)...)
	}
	return needles
}

// secretInDefinitions refuses a server whose pinned tool definitions, or
// whose reported name or version, quote a secret given to it (the auth
// token always counts as one) or a credential inside a runtime value
// (secretparts.Credentials): they would be pinned in the lockfile, which is
// committed, and shipped in artifacts. A plain runtime value quoted whole
// (a port, a host) is not refused: a server may well name it. The error
// names the variable, never the value. A whole secret value is looked for
// when it is at least minWhole bytes long.
func (s *mcpSession) secretInDefinitions(served map[string]*mcpServedTool, registered []Tool, minWhole int, fromLock bool) *hcl.Diagnostic {
	t := s.req.Tool
	refuse := func(what, env string) *hcl.Diagnostic {
		if fromLock {
			return &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Lock entry quotes a secret",
				Detail: fmt.Sprintf("The entry for %q in %s, pinned by an earlier plan or edited by hand, quotes the value of %s, which the block gives as a secret (or a credential in it): %s. agentform does not print, build from or write it again. Rotate the credential, then run agentform lock -upgrade where the server can be reached.",
					t.Name, lockfile.FileName, env, strings.ToLower(what[:1])+what[1:]),
				Subject: t.DeclRange.Ptr(),
			}
		}
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "MCP tool definition holds a secret",
			Detail: fmt.Sprintf("%s, served by tool %q, quotes the value of %s, which the block gives as a secret (or a credential in it). agentform does not write secrets into the lockfile, plans or artifacts, so it cannot pin this server. Fix the server so that what it reports does not quote its credentials.",
				what, t.Name, env),
			Subject: t.DeclRange.Ptr(),
		}
	}
	for _, sv := range s.secrets {
		needles := sv.needles(minWhole)
		if len(needles) == 0 {
			continue
		}
		if quotes([]any{s.serverName, s.serverVersion}, needles) {
			return refuse("The server's reported name or version", sv.env)
		}
		// Only what is pinned counts: the registered tools, not those
		// expose leaves out.
		for _, rt := range registered {
			name := rt.Served
			st := served[name]
			if quotes(st.name, needles) {
				return refuse("The name of a served tool", sv.env)
			}
			if quotes(st.def, needles) {
				return refuse(fmt.Sprintf("The definition of %q", s.redact(name)), sv.env)
			}
		}
	}
	return nil
}

// redact replaces every runtime value in text, every credential inside
// one, the lines of a secret of several and every part of a runtime URL
// that messages quote, as written or re-encoded, by a reference to its
// variable (secretparts.Scrubber, as serve hides them).
func (s *mcpSession) redact(text string) string {
	text = s.scrub.Text(text)
	if s.transport == manifest.TransportHTTP && s.endpoint != "" {
		text = scrubURLCredentials(text, s.endpoint, s.req.Tool.MCP.URL.Runtime == nil)
	}
	return text
}

func (s *mcpSession) addSecret(value string, ref *manifest.RuntimeRef) {
	if ref != nil && value != "" {
		s.secrets = append(s.secrets, mcpSecret{value: value, env: ref.Env, secret: ref.Secret})
		if s.scrub == nil {
			s.scrub = &secretparts.Scrubber{}
		}
		s.scrub.Add(value, ref.Env, ref.Secret)
		// Longest first, so that a value containing another is replaced
		// whole.
		sort.SliceStable(s.secrets, func(i, j int) bool { return len(s.secrets[i].value) > len(s.secrets[j].value) })
	}
}

// runtimeMap reads a string map like Request.StringMap and records which
// values came from runtime references.
func (s *mcpSession) runtimeMap(d manifest.Dynamic) (map[string]string, []string) {
	values, missing := s.req.StringMap(d)
	if d.Value != cty.NilVal && !d.Value.IsNull() {
		if ref, ok := refOf(d.Value); ok {
			for _, v := range values {
				s.addSecret(v, ref)
			}
		} else if d.Value.CanIterateElements() {
			for it := d.Value.ElementIterator(); it.Next(); {
				k, ev := it.Element()
				if ref, ok := refOf(ev); ok {
					s.addSecret(values[k.AsString()], ref)
				}
			}
		}
	}
	return values, missing
}

func (s *mcpSession) prepareStdio() (missing []string) {
	m := s.req.Tool.MCP
	cmd, ok := s.req.String(m.Command)
	if !ok && m.Command.Runtime != nil {
		missing = append(missing, m.Command.Runtime.Env)
	}
	s.command = cmd
	s.addSecret(cmd, m.Command.Runtime)
	args, miss := s.req.Strings(m.Args)
	missing = append(missing, miss...)
	s.args = args
	if m.Args.Runtime != nil {
		for _, a := range args {
			s.addSecret(a, m.Args.Runtime)
		}
	}
	for _, ref := range m.Args.ElemRuntime {
		if ref == nil {
			continue
		}
		if v, ok := s.req.String(manifest.String{Runtime: ref}); ok {
			s.addSecret(v, ref)
		}
	}
	config, miss := s.runtimeMap(s.req.Tool.Config)
	missing = append(missing, miss...)
	envMap := map[string]string{}
	for _, k := range []string{"PATH", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			envMap[k] = v
		}
	}
	for k, v := range config {
		envMap[k] = v
	}
	for _, k := range sortedKeys(envMap) {
		s.env = append(s.env, k+"="+envMap[k])
	}
	return missing
}

func (s *mcpSession) prepareHTTP() (missing []string) {
	m := s.req.Tool.MCP
	u, ok := s.req.String(m.URL)
	if !ok && m.URL.Runtime != nil {
		missing = append(missing, m.URL.Runtime.Env)
	}
	s.endpoint = u
	s.addSecret(u, m.URL.Runtime)
	if m.AuthToken.Set || m.AuthToken.Runtime != nil {
		tok, ok := s.req.String(m.AuthToken)
		if !ok && m.AuthToken.Runtime != nil {
			missing = append(missing, m.AuthToken.Runtime.Env)
		}
		s.token = tok
		// A token is a credential even when written literally.
		ref := &manifest.RuntimeRef{Env: "auth_token", Secret: true}
		if r := m.AuthToken.Runtime; r != nil {
			ref = &manifest.RuntimeRef{Env: r.Env, Secret: true}
		}
		s.addSecret(tok, ref)
	}
	headers, miss := s.runtimeMap(m.Headers)
	missing = append(missing, miss...)
	s.headers = headers
	return missing
}

// check validates what can be checked before connecting: the stdio
// command exists, the URL is an http(s) URL, the token and headers can be
// sent.
func (s *mcpSession) check() *hcl.Diagnostic {
	m := s.req.Tool.MCP
	switch s.transport {
	case manifest.TransportStdio:
		pathEnv := ""
		for _, kv := range s.env {
			if v, ok := strings.CutPrefix(kv, "PATH="); ok {
				pathEnv = v
			}
		}
		if strings.TrimSpace(s.command) == "" {
			// A runtime() value, mostly: the manifest refuses an empty
			// command written in it.
			set := "command"
			if r := m.Command.Runtime; r != nil {
				set = r.Env
			}
			return &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Empty MCP server command",
				Detail:   fmt.Sprintf("%s is empty or only white space. Set %s to the program that runs the MCP server, like \"npx\" or \"./bin/server\".", s.describeCommand(), set),
				Subject:  m.Command.Range.Ptr(),
			}
		}
		path, err := mcpwire.LookCommand(s.command, s.req.Dir, pathEnv)
		if err != nil {
			return &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "MCP server command not found",
				Detail: fmt.Sprintf("%s %s. Install the MCP server on this machine, or fix command.",
					s.describeCommand(), s.redact(err.Error())),
				Subject: m.Command.Range.Ptr(),
			}
		}
		s.command = path
	case manifest.TransportHTTP:
		u, err := url.Parse(s.endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid MCP server URL",
				Detail:   fmt.Sprintf("%s is not an http:// or https:// URL with a host. Set url to the server's streamable HTTP endpoint, like \"https://mcp.example.com/mcp\".", s.describeURL()),
				Subject:  m.URL.Range.Ptr(),
			}
		}
		if m.AuthToken.Set {
			if d := tokenProblem(m.AuthToken, s.token); d != nil {
				return d
			}
		}
		if d := headerProblem(m.Headers, s.headers); d != nil {
			return d
		}
	}
	return nil
}

// describeCommand names the command without revealing a runtime value.
func (s *mcpSession) describeCommand() string {
	m := s.req.Tool.MCP
	if m.Command.Runtime != nil {
		return fmt.Sprintf("The command given by runtime(%q)", m.Command.Runtime.Env)
	}
	return fmt.Sprintf("The command %q", m.Command.Value)
}

// describeURL names the URL without revealing a runtime value, or a
// credential written into it.
func (s *mcpSession) describeURL() string {
	m := s.req.Tool.MCP
	if m.URL.Runtime != nil {
		return fmt.Sprintf("The URL given by runtime(%q)", m.URL.Runtime.Env)
	}
	return fmt.Sprintf("The URL %q", manifest.DisplayURL(m.URL.Value))
}

// run connects, lists every tool and closes the session.
func (s *mcpSession) run(ctx context.Context) (map[string]*mcpServedTool, error) {
	capture := mcpwire.NewCapture()
	s.capture = capture
	var inner mcp.Transport
	switch s.transport {
	case manifest.TransportStdio:
		cmd := exec.CommandContext(ctx, s.command, s.args...)
		cmd.Dir = s.req.Dir
		cmd.Env = s.env
		s.stderr = &mcpwire.Tail{Max: 4096}
		cmd.Stderr = s.stderr
		cmd.SysProcAttr = proctree.GroupAttr()
		// On timeout or cancellation kill the whole process group, so
		// that a wrapper (npx, a shell script) takes its children along.
		cmd.Cancel = func() error { return mcpwire.KillGroup(cmd) }
		cmd.WaitDelay = time.Second
		s.cmd = cmd
		inner = &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
		defer func() {
			// Whatever happened, leave no process of the group behind,
			// nor one that left it (s.tree).
			if cmd.Process != nil {
				_ = mcpwire.KillGroup(cmd)
			}
			proctree.Kill(s.tree)
			if s.untrack != nil {
				s.untrack()
			}
		}()
	case manifest.TransportHTTP:
		// A response over the bound ends the whole listing at once: an
		// event stream the SDK stops reading without an answer would
		// otherwise leave the call waiting until the timeout.
		var abort context.CancelCauseFunc
		ctx, abort = context.WithCancelCause(ctx)
		defer abort(nil)
		s.rt = &mcpRoundTripper{op: ctx, abort: abort, base: resolveTransport, headers: s.headers, token: s.token, capture: capture}
		if u, err := url.Parse(s.endpoint); err == nil {
			rt := s.rt
			rt.trace, rt.blind = reachTrace(u, func() {
				rt.mu.Lock()
				rt.reached = true
				rt.mu.Unlock()
			}, func() {
				rt.mu.Lock()
				rt.attempted = true
				rt.mu.Unlock()
			})
		}
		inner = &mcp.StreamableClientTransport{
			Endpoint:             s.endpoint,
			HTTPClient:           &http.Client{Transport: s.rt, CheckRedirect: sameorigin.CheckRedirect},
			DisableStandaloneSSE: true,
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agentform", Version: mcpClientVersion}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
	})
	cs, err := client.Connect(ctx, &mcpwire.Transport{Inner: inner, Capture: capture}, nil)
	if err != nil {
		return nil, err
	}
	if s.cmd != nil && s.cmd.Process != nil {
		// Connected, so running a moment ago. The MCP library waits for
		// it when the session closes, or when its output ends: a server
		// that ended and was waited for since is not looked at again
		// (its start time no longer matches), unless its pid went to
		// another process in that instant, which pid_max makes
		// unlikely.
		s.server, _ = proctree.Of(s.cmd.Process.Pid)
		s.untrack = proctree.Track(s.cmd.Process)
	}
	var served map[string]*mcpServedTool
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Tools == nil {
		// The server does not offer tools at all.
		served = map[string]*mcpServedTool{}
	} else {
		served, err = s.list(ctx, cs, capture)
	}
	// Close the session cleanly: for stdio this closes the server's stdin
	// and waits for it to exit (SIGTERM, then SIGKILL, after a second
	// each). A server that hangs is killed with its process group when ctx
	// ends, which also ends Close. What the server started and that left
	// its process group (setsid) would outlive it, reparented to init:
	// they are found now, while the server (the process connected to, not
	// yet waited for) is still their ancestor, and killed once it is gone.
	if s.server.Pid != 0 {
		s.tree = s.server.Descendants()
	}
	closed := make(chan struct{})
	go func() {
		_ = cs.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-ctx.Done():
		if s.cmd != nil && s.cmd.Process != nil {
			_ = mcpwire.KillGroup(s.cmd)
		}
		select {
		case <-closed:
		case <-time.After(2 * time.Second):
			// An HTTP session delete that does not answer: abandon it;
			// the SDK bounds it by itself.
		}
	}
	if err != nil {
		return nil, err
	}
	if ir := cs.InitializeResult(); ir != nil && ir.ServerInfo != nil {
		s.serverName = ir.ServerInfo.Name
		s.serverVersion = ir.ServerInfo.Version
	}
	return served, nil
}

// list follows tools/list pagination, reading each page's raw JSON from
// the capture so that the definitions are exactly what the server sent
// (numbers as written, unknown annotation fields kept). What it keeps over
// all pages is bounded (mcpwire.Listing).
// mcpInvalidAnswer is a tools/list answer agentform refuses (a duplicate
// name, a tool it cannot read, endless pages), as opposed to no answer.
type mcpInvalidAnswer string

func (e mcpInvalidAnswer) Error() string { return string(e) }

func (s *mcpSession) list(ctx context.Context, cs *mcp.ClientSession, capture *mcpwire.Capture) (map[string]*mcpServedTool, error) {
	served := map[string]*mcpServedTool{}
	seen := map[string]bool{}
	var kept mcpwire.Listing
	cursor := ""
	for page := 0; ; page++ {
		if page >= mcpMaxPages {
			return nil, mcpInvalidAnswer(fmt.Sprintf("tools/list returned more than %d pages", mcpMaxPages))
		}
		capture.Reset()
		if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor}); err != nil {
			return nil, err
		}
		raw := capture.Take()
		if raw == nil {
			return nil, errors.New("tools/list answer was not seen on the connection")
		}
		var pageResult struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &pageResult); err != nil {
			return nil, mcpInvalidAnswer(fmt.Sprintf("tools/list answer is not valid: %v", err))
		}
		for i, rt := range pageResult.Tools {
			if err := kept.Keep(len(rt)); err != nil {
				return nil, mcpInvalidAnswer(err.Error())
			}
			st, err := mcpParseServedTool(rt)
			if err != nil {
				return nil, mcpInvalidAnswer(fmt.Sprintf("tools/list page %d, tool %d: %v", page+1, i+1, err))
			}
			if _, dup := served[st.name]; dup {
				// Redacted before it is quoted: quoting escapes what the
				// redaction looks for.
				return nil, mcpInvalidAnswer(fmt.Sprintf("tools/list lists the tool %q twice", s.redact(st.name)))
			}
			served[st.name] = st
		}
		if pageResult.NextCursor == "" {
			return served, nil
		}
		if seen[pageResult.NextCursor] {
			return nil, mcpInvalidAnswer("tools/list pagination repeats a cursor")
		}
		seen[pageResult.NextCursor] = true
		cursor = pageResult.NextCursor
	}
}

// mcpParseServedTool reads one tool of a tools/list answer.
func mcpParseServedTool(raw json.RawMessage) (*mcpServedTool, error) {
	v, err := mcpwire.DecodeJSON(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("a tool is not a JSON object")
	}
	name, ok := obj["name"].(string)
	if !ok || name == "" {
		return nil, errors.New("a tool has no name")
	}
	st := &mcpServedTool{name: name, def: map[string]any{}}
	for _, f := range MCPHashedFields {
		if fv, ok := obj[f]; ok && fv != nil {
			st.def[f] = fv
		}
	}
	st.canon, err = mcpwire.CanonicalJSON(st.def)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// MCPToolDigest returns the name of one tool of a tools/list answer, given
// as the raw JSON the server sent, and the digest of its definition exactly
// as ResolveMCP pins it in the lock (the sha256 of the canonical JSON of
// MCPHashedFields). agentform serve compares it with the locked digest.
func MCPToolDigest(raw json.RawMessage) (name, digest string, err error) {
	st, err := mcpParseServedTool(raw)
	if err != nil {
		return "", "", err
	}
	return st.name, SHA256(st.canon), nil
}

// mcpCodeRejected is the JSON-RPC code the SDK gives a request its
// transport could not deliver (jsonrpc2.ErrRejected, "rejected by
// transport"): no answer from the server.
const mcpCodeRejected = -32005

// mcpRejected is that error's message; a server may answer with the same
// code and a message of its own.
const mcpRejected = "rejected by transport"

// mcpFailure is a classified session error.
type mcpFailure struct {
	unreachable bool
	summary     string
	detail      string
	subject     hcl.Range
}

// classify turns a session error into a diagnostic (or an unreachable
// server, which falls back to the lock). Runtime values are scrubbed.
func (s *mcpSession) classify(opCtx, parent context.Context, err error, timeout time.Duration) mcpFailure {
	m := s.req.Tool.MCP
	subject := m.Command.Range
	what := s.describeCommand()
	if s.transport == manifest.TransportHTTP {
		subject = m.URL.Range
		what = s.describeURL()
	}
	// What the SDK's JSON decoder quotes of the server's bytes is cut, so
	// not quoted at all (mcpwire.ErrorText); the rest is redacted whole.
	msg := s.redact(mcpwire.ErrorText(err))
	if parent.Err() != nil {
		return mcpFailure{summary: "MCP server listing cancelled", detail: fmt.Sprintf("Listing the tools of %q was cancelled.", s.req.Tool.Name), subject: subject}
	}
	if s.transport == manifest.TransportHTTP && s.rt != nil {
		if ferr := s.rt.unattempted(); ferr != nil {
			return mcpFailure{summary: "Cannot make the MCP request",
				detail:  fmt.Sprintf("agentform could not make the request that lists the tools of %s: %s. Check the block's headers and auth_token.", strings.ToLower(what[:1])+what[1:], s.redact(requestText(ferr))),
				subject: subject}
		}
		if derr := s.rt.dialError(); derr != nil {
			// A URL given at runtime is not shown, nor its host in the
			// dial error: only what kind of failure it was.
			reason := s.redact(derr.Error())
			if m.URL.Runtime != nil {
				reason = netReason(derr, timeout, false)
			}
			return mcpFailure{unreachable: true, detail: fmt.Sprintf("the MCP server could not be reached (%s)", reason)}
		}
		// A connection attempt that hangs (packets dropped on the way)
		// ends with the timeout and no dial error.
		if opCtx.Err() != nil && s.rt.neverReached() {
			return mcpFailure{unreachable: true, detail: fmt.Sprintf("the MCP server could not be reached (%s)", noReachReason(s.rt.blind, timeout.String()))}
		}
		// The SDK reports a failed handshake as a JSON-RPC error ("rejected
		// by transport"); the certificate is what to fix.
		if terr := s.rt.tlsError(); terr != nil {
			return mcpFailure{
				summary: "MCP server certificate not trusted",
				detail: fmt.Sprintf("%s could not be reached over TLS: %s. Make its certificate authority trusted on this machine (SSL_CERT_FILE or the system store), or check the URL's host.",
					what, s.redact(netReason(terr, timeout, m.URL.Runtime == nil))),
				subject: subject,
			}
		}
		// Failed before any request reached the server (reachTrace): a
		// proxy that refused the tunnel or hung up, or the server's TLS
		// handshake through an https proxy. a2a decides the same way.
		if ferr := s.rt.unreachedError(); ferr != nil {
			reason := s.redact(ferr.Error())
			if m.URL.Runtime != nil {
				reason = netReason(ferr, timeout, false)
			}
			return mcpFailure{unreachable: true, detail: fmt.Sprintf("the MCP server could not be reached (%s)", reason)}
		}
		if code := s.rt.status(); code >= 400 {
			f := mcpFailure{summary: "MCP server refused the request", subject: subject}
			switch code {
			case http.StatusUnauthorized, http.StatusForbidden:
				if m.AuthToken.Set || m.AuthToken.Runtime != nil {
					f.subject = m.AuthToken.Range
				}
				f.summary = "MCP server refused the credentials"
				f.detail = fmt.Sprintf("%s answered HTTP %d %s. Check auth_token and headers (the token is sent as \"Authorization: Bearer <token>\").", what, code, http.StatusText(code))
			case http.StatusNotFound, http.StatusMethodNotAllowed:
				f.summary = "MCP endpoint not found"
				f.detail = fmt.Sprintf("%s answered HTTP %d %s. Set url to the server's streamable HTTP endpoint (often ending in /mcp).", what, code, http.StatusText(code))
			default:
				f.detail = fmt.Sprintf("%s answered HTTP %d %s: %s", what, code, http.StatusText(code), msg)
			}
			return f
		}
		if ct := s.rt.wrongType(); ct != "" {
			shown := "Content-Type " + mcpShow(s.redact(ct))
			if ct == "(none)" {
				shown = "no Content-Type"
			}
			return mcpFailure{summary: "MCP server answered with another content type",
				detail: fmt.Sprintf("%s answered with %s, not JSON (application/json) or an event stream (text/event-stream) as an MCP server over streamable HTTP does: the URL may be a web page, or something in front of the server (a login page, a proxy) answered instead. Set url to the server's streamable HTTP endpoint (often ending in /mcp), and check auth_token and headers.",
					what, shown),
				subject: subject}
		}
		// After the status: an error page too long says less than its
		// status.
		if s.rt.overLarge() {
			return mcpFailure{summary: "MCP server answer too large",
				detail: fmt.Sprintf("%s sent more than %s in one HTTP response, the most agentform reads of one (a JSON answer, or an event stream with all it carries), so agentform stopped reading. No tool list a model could be given is that large: check that url is the server's MCP endpoint.",
					what, mcpwire.MaxAnswerText),
				subject: subject}
		}
	}
	// What a stdio server wrote could not be read as messages: closing
	// the session then stopped it, so it is not one that exited first.
	if s.transport == manifest.TransportStdio && s.capture != nil {
		if rerr := s.capture.ReadError(); rerr != nil {
			// Not a byte of it is quoted: the SDK's error holds its first
			// 32 bytes, cut there, where a secret it printed (a token it
			// echoes) could begin and no redaction would find it whole.
			detail := fmt.Sprintf("%s wrote something on its standard output that is not a JSON-RPC message, so agentform stopped it. An MCP server over stdio writes only JSON-RPC messages there, one per line; logs belong on standard error.",
				what)
			if mcpwire.LineTooLong(rerr) {
				detail = fmt.Sprintf("%s wrote a line longer than %s on its standard output, the most agentform reads of one message, so agentform stopped it. Check the server: no tool list a model could be given is that large.",
					what, mcpwire.MaxAnswerText)
			}
			return mcpFailure{summary: "Invalid MCP answer", detail: detail + s.stderrNote(), subject: subject}
		}
	}
	if opCtx.Err() != nil && s.rt != nil && s.rt.brokenOff() {
		// The SDK tries again after a stream that gave an event id broke
		// off, until the time is up.
		return mcpFailure{summary: "MCP server broke off its answer",
			detail:  fmt.Sprintf("%s broke off an answer it had started and did not take the request again within %s. Check that the server is healthy, or %s.", what, timeout, s.req.raiseTimeout()),
			subject: subject}
	}
	if opCtx.Err() != nil {
		detail := fmt.Sprintf("%s did not answer initialize and tools/list within %s, so agentform stopped it. Check that it is an MCP server speaking the %s transport, or %s.", what, timeout, s.transport, s.req.raiseTimeout())
		if s.transport == manifest.TransportStdio {
			detail += s.stderrNote()
		}
		return mcpFailure{summary: "MCP server did not answer", detail: detail, subject: subject}
	}
	if mc := (*sameorigin.MethodChangedError)(nil); errors.As(err, &mc) {
		status := "a redirect"
		if mc.Status != 0 {
			status = fmt.Sprintf("a redirect (HTTP %d %s)", mc.Status, http.StatusText(mc.Status))
		}
		return mcpFailure{
			summary: "MCP server redirected the request",
			detail:  fmt.Sprintf("%s answered the POST of an MCP message with %s, which HTTP clients follow with a GET that no longer carries the message, so agentform did not follow it. Set url to the server's streamable HTTP endpoint, where the redirect points (a trailing slash is often the difference).", what, status),
			subject: subject,
		}
	}
	if errors.Is(err, sameorigin.ErrCrossOrigin) {
		return mcpFailure{
			summary: "MCP server redirected to another origin",
			detail:  fmt.Sprintf("%s answered with a redirect to another scheme, host or port, which agentform does not follow, so that the block's token and headers are only sent where its url points. Set url to where the server is.", what),
			subject: subject,
		}
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && werr.Code == mcpCodeRejected && werr.Message == mcpRejected {
		// The SDK's wrapping of a request that never got an answer (a
		// hang-up, a proxy, TLS): the server did not answer with an error.
		reason := msg
		if s.transport == manifest.TransportHTTP && m.URL.Runtime != nil {
			reason = netReason(err, timeout, false)
		}
		return mcpFailure{summary: "MCP server failed", detail: fmt.Sprintf("Listing the tools of %s failed: the request got no answer (%s).", strings.ToLower(what[:1])+what[1:], reason), subject: subject}
	}
	if errors.As(err, &werr) {
		return mcpFailure{
			summary: "MCP server answered with an error",
			detail:  fmt.Sprintf("%s answered initialize or tools/list with JSON-RPC error %d: %s. Check that it is an MCP server and that its configuration is complete.", what, werr.Code, s.redact(werr.Message)),
			subject: subject,
		}
	}
	// An answer agentform refused: the server answered, and closing the
	// session then stopped it, so it is not one that exited first.
	var invalid mcpInvalidAnswer
	if errors.As(err, &invalid) {
		return mcpFailure{
			summary: "Invalid MCP tools/list answer",
			detail:  fmt.Sprintf("%s answered tools/list, but the answer cannot be used: %s.", what, msg),
			subject: subject,
		}
	}
	// A result the SDK could not decode (tools that are no list): the
	// SDK then closes the session, and the server, its input ended,
	// exits; it did not exit first.
	if mcpUndecodable(err) {
		detail := fmt.Sprintf("%s answered, but not as the MCP specification describes the answer, so agentform stopped it: %s. Check that it is an MCP server, and its version.", what, msg)
		if s.transport == manifest.TransportStdio {
			detail += s.stderrNote()
		}
		return mcpFailure{summary: "Invalid MCP answer", detail: detail, subject: subject}
	}
	if s.transport == manifest.TransportStdio && s.cmd != nil && s.cmd.ProcessState != nil {
		return mcpFailure{
			summary: "MCP server exited before answering",
			detail:  fmt.Sprintf("%s exited (%s) before listing its tools: %s.%s", what, s.cmd.ProcessState.String(), msg, s.stderrNote()),
			subject: subject,
		}
	}
	detail := fmt.Sprintf("Listing the tools of %s failed: %s.", strings.ToLower(what[:1])+what[1:], msg)
	if s.transport == manifest.TransportStdio {
		detail += s.stderrNote()
	}
	return mcpFailure{summary: "MCP server failed", detail: detail, subject: subject}
}

// mcpUndecodable reports whether err is a JSON decoder's: the server's
// answer was JSON-RPC, but its result did not decode as MCP's.
func mcpUndecodable(err error) bool {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	return errors.As(err, &typeErr) || errors.As(err, &syntaxErr) || strings.Contains(err.Error(), "json: ")
}

// stderrNote returns the end of the server's standard error, scrubbed of
// runtime values, for a diagnostic's detail.
func (s *mcpSession) stderrNote() string {
	if s.stderr == nil {
		return ""
	}
	lines := mcpwire.LastLines(s.redact(s.stderr.String()), 10)
	if len(lines) == 0 {
		return ""
	}
	return "\n\nIts standard error ended with:\n  " + strings.Join(lines, "\n  ")
}

// mcpRoundTripper adds the block's headers and bearer token to every
// request, and notes dial errors and error statuses for diagnostics.
type mcpRoundTripper struct {
	op context.Context
	// abort ends op, when a response is larger than mcpMaxMessage.
	abort   context.CancelCauseFunc
	base    http.RoundTripper
	headers map[string]string
	token   string
	capture *mcpwire.Capture

	mu sync.Mutex
	// firstErr is the first failure: a request's error, or a response
	// broken off that the SDK resumed (broken). brokenAt holds the
	// responses broken off, resumed or not, by the id of the last event
	// read from them.
	firstErr error
	broken   bool
	brokenAt map[string]error
	// tlsErr is a certificate that did not verify: its message names
	// hosts, which a URL given at runtime must not show.
	tlsErr error
	code   int
	// contentType is that of the first answer to a call that was neither
	// JSON nor an event stream (mcpWrongType).
	contentType string
	// tooLarge is set once a response went over mcpMaxMessage.
	tooLarge bool
	// reached is set once a request reached the server (reachTrace):
	// until then, a timeout is a server out of reach (a firewall that
	// drops packets), not one that did not answer. blind says that the
	// requests go through a proxy that hides which it is.
	reached bool
	// attempted is set once a request asked for a connection.
	attempted bool
	trace     *httptrace.ClientTrace
	blind     bool
}

// RoundTrip implements http.RoundTripper.
func (rt *mcpRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for _, k := range sortedKeys(rt.headers) {
		r.Header.Set(k, rt.headers[k])
	}
	if rt.token != "" {
		r.Header.Set("Authorization", "Bearer "+rt.token)
	}
	// The wrapped connection hides the session state from the SDK's
	// streamable transport, so send the negotiated version ourselves.
	if r.Header.Get("Mcp-Protocol-Version") == "" {
		if v := rt.capture.ProtocolVersion(); v != "" {
			r.Header.Set("Mcp-Protocol-Version", v)
		}
	}
	// Every request ends with the operation, whatever context the SDK
	// gave it (its connection context outlives a call).
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(rt.op, cancel)
	// The DELETE that closes the session goes out after a failure, and
	// says nothing about how the listing failed: it is not recorded.
	record := r.Method != http.MethodDelete
	if id := r.Header.Get("Last-Event-ID"); r.Method == http.MethodGet && id != "" {
		// The SDK resumes a stream: if the server broke it off, that
		// break is the failure, whatever this request meets.
		rt.resumed(id)
	}
	if rt.trace != nil && record {
		ctx = httptrace.WithClientTrace(ctx, rt.trace)
	}
	r = r.WithContext(ctx)
	resp, err := rt.base.RoundTrip(r)
	wrongType := ""
	if err != nil {
		stop()
		cancel()
	} else {
		wrongType = mcpWrongType(r, resp)
		body := &mcpBody{ReadCloser: resp.Body, done: func() { stop(); cancel() }, ctx: ctx}
		if record {
			body.failed = rt.noteBroken
			body.over = rt.noteTooLarge
		}
		resp.Body = body
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if err != nil {
		if !record {
			return nil, err
		}
		var cert *tls.CertificateVerificationError
		// The first failure decides (dialError): a connection that could
		// not be made leaves the server out of reach, but not after a
		// failure of a server that was reached (a hang-up on tools/list,
		// then the SDK's reconnecting GET refused).
		if rt.firstErr == nil {
			rt.firstErr = err
		}
		if rt.tlsErr == nil && errors.As(err, &cert) {
			rt.tlsErr = err
		}
		return nil, err
	}
	if resp.StatusCode >= 400 && r.Method == http.MethodPost && rt.code == 0 {
		rt.code = resp.StatusCode
	}
	if record && wrongType != "" && rt.contentType == "" {
		rt.contentType = wrongType
	}
	return resp, nil
}

// mcpWrongType returns the Content-Type of a successful answer to a
// JSON-RPC call that is neither JSON nor an event stream, the two a
// streamable HTTP server answers with ("" when it is one of them, or the
// request was no call: a notification's answer has no body to read);
// "(none)" when the answer has none. The SDK refuses such an answer
// without saying why the call failed.
func mcpWrongType(r *http.Request, resp *http.Response) string {
	if r.Method != http.MethodPost || resp.StatusCode < 200 || resp.StatusCode > 299 ||
		resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent || r.GetBody == nil {
		return ""
	}
	ct := resp.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && (mt == "application/json" || mt == "text/event-stream") {
		return ""
	}
	if _, call := mcpwire.CallID(r); !call {
		return ""
	}
	if ct == "" {
		return "(none)"
	}
	// Whole: it is redacted before it is cut (mcpShow), as a server could
	// echo a header into it.
	return ct
}

// mcpBody releases a request's context when its body is closed, and
// tells failed when reading it fails other than at its end or by the
// request's context ending (a stream the server broke off), with the id
// of the last complete event-stream event read (lastID): the id the SDK
// resumes the stream from. Lines are read as the SDK reads them: split at
// "\n", a trailing "\r" dropped, an event's id taken (trimmed) when the
// blank line ends the event, and only if it has one.
//
// It delivers at most mcpMaxMessage bytes and one more (mcpwire.Limit):
// reading on fails with mcpwire.ErrTooLarge and tells over, so that one
// response of a server answering without end costs a bounded amount of
// memory. That bounds one response only: what a listing keeps over all
// its pages is bounded by list (mcpwire.Listing).
type mcpBody struct {
	io.ReadCloser
	once   sync.Once
	done   func()
	failed func(err error, lastID string)
	over   func()
	// limit reads ReadCloser; the first Read makes it.
	limit   *mcpwire.Limit
	ctx     context.Context
	lastID  string
	eventID string // the id of the event being read
	lines   mcpwire.Lines
}

// mcpMaxIDLine bounds the event-stream line kept to find "id:" lines: far
// above any id a server sends (the SDK takes ids of any length up to its
// event limit), and a bound on what a long data line costs.
const mcpMaxIDLine = 64 << 10

// Read implements io.Reader.
func (b *mcpBody) Read(p []byte) (int, error) {
	if b.limit == nil {
		b.limit = &mcpwire.Limit{R: b.ReadCloser, Max: mcpMaxMessage, Over: b.over}
	}
	n, err := b.limit.Read(p)
	if errors.Is(err, mcpwire.ErrTooLarge) {
		return n, err
	}
	if b.failed == nil {
		return n, err
	}
	if b.lines.Max == 0 {
		b.lines.Max = mcpMaxIDLine
	}
	b.lines.Feed(p[:n], func(line []byte, long bool) {
		switch {
		case long:
		case len(line) == 0:
			if b.eventID != "" {
				b.lastID = b.eventID
			}
			b.eventID = ""
		default:
			if field, value, ok := bytes.Cut(line, []byte(":")); ok && string(field) == "id" {
				b.eventID = strings.TrimSpace(string(value))
			}
		}
	})
	if err != nil && err != io.EOF && b.ctx.Err() == nil {
		b.failed(err, b.lastID)
	}
	return n, err
}

// noteBroken keeps a response the server broke off after the event lastID.
// It counts as a failure only once the SDK resumes that stream (resumed):
// the SDK also reads on after it has its answer, and a break then fails
// nothing; a stream without an event id is not resumed, and the SDK fails
// the call itself.
func (rt *mcpRoundTripper) noteBroken(err error, lastID string) {
	if lastID == "" {
		return
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.brokenAt == nil {
		rt.brokenAt = map[string]error{}
	}
	if _, ok := rt.brokenAt[lastID]; !ok {
		rt.brokenAt[lastID] = err
	}
}

// resumed makes the stream broken off after the event id the first
// failure, if there was none: the server was reached and failed, whatever
// the SDK's reconnecting requests meet. A stream the server ended cleanly
// and the SDK polls again (SEP-1699) was not broken off. Event ids are
// unique within a session (the MCP specification requires it), so an id
// names one stream.
func (rt *mcpRoundTripper) resumed(id string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if err := rt.brokenAt[id]; rt.firstErr == nil && err != nil {
		rt.firstErr = err
		rt.broken = true
	}
}

// noteTooLarge records a response longer than mcpMaxMessage, which fails
// the listing (abort).
func (rt *mcpRoundTripper) noteTooLarge() {
	rt.mu.Lock()
	rt.tooLarge = true
	rt.mu.Unlock()
	if rt.abort != nil {
		rt.abort(mcpwire.ErrTooLarge)
	}
}

// wrongType returns the Content-Type of the first answer to a call that
// was neither JSON nor an event stream, or "".
func (rt *mcpRoundTripper) wrongType() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.contentType
}

// overLarge reports that a response was longer than mcpMaxMessage.
func (rt *mcpRoundTripper) overLarge() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.tooLarge
}

// brokenOff reports that the first failure was a response the server broke
// off.
func (rt *mcpRoundTripper) brokenOff() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.broken
}

// Close implements io.Closer.
func (b *mcpBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

// dialError returns the first failure when it is a connection that could
// not be made (notConnected).
func (rt *mcpRoundTripper) dialError() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.firstErr != nil && notConnected(rt.firstErr) {
		return rt.firstErr
	}
	return nil
}

// neverReached reports that no request reached the server.
func (rt *mcpRoundTripper) neverReached() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return !rt.reached
}

// unreachedError returns the first request's error when no request
// reached the server, though one tried to.
func (rt *mcpRoundTripper) unreachedError() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	// A response, even one broken off, came from the server (or, through
	// a plain http proxy, counts as its answer).
	if rt.reached || !rt.attempted || rt.broken {
		return nil
	}
	return rt.firstErr
}

// unattempted returns the first request's error when requests failed and
// none asked for a connection: the request could not be made. A request
// stopped by the time limit before it asked is not one of those.
func (rt *mcpRoundTripper) unattempted() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.attempted || errors.Is(rt.firstErr, context.Canceled) || errors.Is(rt.firstErr, context.DeadlineExceeded) {
		return nil
	}
	return rt.firstErr
}

func (rt *mcpRoundTripper) tlsError() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.tlsErr
}

func (rt *mcpRoundTripper) status() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.code
}

// mcpCanonField returns the canonical JSON of one field, nil when absent.
func mcpCanonField(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := mcpwire.CanonicalJSON(v)
	if err != nil {
		return nil
	}
	return b
}

// sortedKeys returns a map's keys in ascending order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mcpQuotedList renders names as "a", "b", or "none".
func mcpQuotedList(names []string, redact func(string) string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", redact(n))
	}
	return strings.Join(q, ", ")
}

// mcpListedNames is how many served names a warning lists at most.
const mcpListedNames = 20

// mcpServedList lists the served tools for a warning that compares a name
// written in the manifest with them ("Served tools: …"): the names
// mcpCheckRegistered refuses left out (they are never registered, so
// expose and tool_capabilities cannot apply to them), each redacted whole
// and then quoted by mcpShow, so that a look-alike character shows
// escaped ("d\u0435lete_all" beside "delete_all") and a long name is
// cut; at most mcpListedNames of them, then how many more; "none".
func mcpServedList(served map[string]*mcpServedTool, redact func(string) string) string {
	var shown []string
	for _, name := range sortedKeys(served) {
		if mcpNameError(name) == "" {
			shown = append(shown, mcpShow(redact(name)))
		}
	}
	switch n := len(shown); {
	case n == 0:
		return "none"
	case n > mcpListedNames:
		return strings.Join(shown[:mcpListedNames], ", ") + fmt.Sprintf(" and %d more", n-mcpListedNames)
	}
	return strings.Join(shown, ", ")
}

// mcpDedupe removes adjacent duplicates from a sorted slice.
func mcpDedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
