package planner

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/lockfile"
)

// Attributes are an address's displayable configuration: what a plan diffs
// against state and shows as "source: h1:ab… → h1:cd…". Runtime values
// appear as references and sensitive literals as digests (auth tokens,
// headers, a config's credential keys), so attributes never hold a secret
// and can be stored in state.
type Attributes map[string]string

// fingerprint is the digest of the attributes: equal attributes, equal
// fingerprint.
func (a Attributes) fingerprint() string {
	b, _ := json.Marshal(map[string]string(a)) // map keys are sorted
	return resolve.SHA256(b)
}

func (a Attributes) set(key, value string) {
	if value != "" {
		a[key] = value
	}
}

func refString(r *manifest.RuntimeRef) string {
	if r.Secret {
		if r.HasDefault() {
			// agent.json marks a secret that has a default (has_default:
			// the host must set it all the same), so the attribute does
			// too; the default itself, as sensitive as the value, is
			// never shown.
			return fmt.Sprintf("secret(runtime(%q, (default withheld)))", r.Env)
		}
		return fmt.Sprintf("secret(runtime(%q))", r.Env)
	}
	if r.HasDefault() {
		d, _ := json.Marshal(manifest.Dynamic{Value: r.Default}.JSON())
		return fmt.Sprintf("runtime(%q, %s)", r.Env, d)
	}
	return fmt.Sprintf("runtime(%q)", r.Env)
}

func str(s manifest.String) string {
	if s.Runtime != nil {
		return refString(s.Runtime)
	}
	return literal(s.Value)
}

// literalMark starts a literal that would read as a reference (refString)
// or as another such literal.
const literalMark = "(literal) "

// literal is a string written in the manifest as an attribute shows it:
// as it is, unless it reads as a runtime reference (url = "runtime(\"URL\")"
// against url = runtime("URL"), which agent.json writes as a reference
// object), when literalMark comes first. Any other value keeps the
// attribute earlier states recorded.
func literal(v string) string {
	for _, p := range []string{"runtime(", "secret(", literalMark} {
		if strings.HasPrefix(v, p) {
			return literalMark + v
		}
	}
	return v
}

// sensitive shows a literal that may be a credential only as a digest.
func sensitive(s manifest.String) string {
	if s.Runtime != nil {
		return refString(s.Runtime)
	}
	if s.Value == "" {
		return ""
	}
	return "(sensitive " + short(resolve.SHA256([]byte(s.Value))) + ")"
}

func boolStr(b manifest.Bool) string {
	if b.Runtime != nil {
		return refString(b.Runtime)
	}
	return fmt.Sprint(b.Value)
}

func intStr(i manifest.Int) string {
	if !i.Set {
		return ""
	}
	if i.Runtime != nil {
		return refString(i.Runtime)
	}
	return fmt.Sprint(i.Value)
}

func list(l manifest.StringList) string {
	if l.Runtime != nil {
		return refString(l.Runtime)
	}
	vals := make([]string, len(l.Values))
	for i, v := range l.Values {
		vals[i] = literal(v)
		if i < len(l.ElemRuntime) && l.ElemRuntime[i] != nil {
			vals[i] = refString(l.ElemRuntime[i])
		}
	}
	if joinAmbiguous(vals) {
		return jsonOf(vals)
	}
	return strings.Join(vals, ", ")
}

// joinAmbiguous reports whether vals joined with ", " could be read as
// another list, which agent.json writes differently: an item that
// contains ", " (["--tags", "a, b"] against ["--tags", "a", "b"]), the
// one empty item of [""] (against []), or a first item that starts
// with "[" (against the JSON form list then takes). list writes such a
// list as JSON instead, so that its attribute, in a form no other list
// has, changes when the list does; any other list keeps the attribute
// earlier states recorded.
func joinAmbiguous(vals []string) bool {
	if len(vals) == 1 && vals[0] == "" || len(vals) > 0 && strings.HasPrefix(vals[0], "[") {
		return true
	}
	return slices.ContainsFunc(vals, func(v string) bool { return strings.Contains(v, ", ") })
}

// listItems returns the items of a list attribute, as list wrote them.
func listItems(s string) []string {
	if s == "" {
		return nil
	}
	if strings.HasPrefix(s, "[") {
		var items []string
		if json.Unmarshal([]byte(s), &items) == nil {
			return items
		}
	}
	return strings.Split(s, ", ")
}

func sortedList(l manifest.StringList) string {
	if l.Runtime != nil {
		return refString(l.Runtime)
	}
	return strings.Join(normTags(l.Values), ", ")
}

// dynamicDigest shows a free-form value (config, headers) as canonical
// JSON with references, hashed when it may hold credentials.
func dynamicJSON(d manifest.Dynamic, hashed bool) string {
	if !d.Set {
		return ""
	}
	b, _ := json.Marshal(d.JSON())
	if hashed {
		return hashedAttribute(b)
	}
	return string(b)
}

// configAttribute shows a tool's config as canonical JSON with references
// (dynamicJSON), but for credentials (hideConfigCredentials): the
// attributes are stored in state and shown by plan.
func configAttribute(d manifest.Dynamic) string {
	return hideConfigCredentials(dynamicJSON(d, false))
}

// hideConfigCredentials replaces, in a config attribute, the value of
// every key that names a credential (manifest.CredentialConfigKey, the
// rule the audit redacts by), at any depth, by its digest:
// "(sensitive sha256:…)". A runtime reference stays one, but the default of
// one that is not secret becomes a digest too. A changed credential still
// shows as a change, of its digest.
//
// It reads the attribute's JSON, so that it applies the same to a config
// attribute an earlier agentform stored in state with credentials in the
// clear (AppliedFromState): what it recorded then reads as what a plan
// computes now. Text that is not JSON is returned as it is.
func hideConfigCredentials(config string) string {
	if config == "" {
		return ""
	}
	dec := json.NewDecoder(strings.NewReader(config))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return config
	}
	found := false
	v = hideCredentialValues(v, &found)
	if !found {
		// As it was: a config without credentials keeps the attribute,
		// and the fingerprint, an earlier agentform recorded.
		return config
	}
	return jsonOf(v)
}

// hideCredentialValues walks a decoded config: objects' credential keys
// get digests (hideCredential), and found is set; runtime references are
// left as they are.
func hideCredentialValues(v any, found *bool) any {
	switch x := v.(type) {
	case map[string]any:
		if runtimeRefShaped(x) {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if manifest.CredentialConfigKey(k) {
				out[k] = hideCredential(e)
				*found = true
			} else {
				out[k] = hideCredentialValues(e, found)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = hideCredentialValues(e, found)
		}
		return out
	}
	return v
}

// hideCredential is the value of a credential key as attributes show it:
// its digest, or a runtime reference with its default (if not secret,
// the reference shows it) as a digest.
func hideCredential(v any) any {
	if m, ok := v.(map[string]any); ok && runtimeRefShaped(m) {
		if d, ok := m["default"]; ok {
			m = maps.Clone(m)
			m["default"] = credentialDigest(d)
		}
		return m
	}
	return credentialDigest(v)
}

func credentialDigest(v any) string {
	if s, ok := v.(string); ok && credentialDigestForm.MatchString(s) {
		// Digested already: a state this version wrote is read through
		// hideConfigCredentials too, and a digest of the digest would
		// name another value as the one that changed.
		return s
	}
	return "(sensitive " + short(resolve.SHA256([]byte(jsonOf(v)))) + ")"
}

// hideURLCredentials shows a url attribute (str) without the credentials
// its url carries (manifest.URLCredentials: a password, a token in the
// user information or the query), written as a literal or as the default
// of a runtime() reference: they read REDACTED, and a digest of the whole
// url follows it ("… (sensitive sha256:…)"), so that a rotated credential
// still shows as a change, of the digest. Like hideConfigCredentials it
// reads the attribute's text, so that a url an earlier agentform stored
// in state with its credentials in the clear reads as a plan computes it
// now (StoredAttributes); one hidden already is returned as it is.
func hideURLCredentials(attr string) string {
	hide := func(u string) string {
		if urlDigestForm.MatchString(u) || len(manifest.URLCredentials(u)) == 0 {
			return u
		}
		return manifest.DisplayURL(u) + " " + credentialDigest(u)
	}
	if m := runtimeStringDefault.FindStringSubmatch(attr); m != nil {
		var def string
		if json.Unmarshal([]byte(m[2]), &def) != nil {
			return attr
		}
		if h := hide(def); h != def {
			b, _ := json.Marshal(h)
			return "runtime(" + m[1] + ", " + string(b) + ")"
		}
		return attr
	}
	for _, p := range []string{"runtime(", "secret(", literalMark} {
		if strings.HasPrefix(attr, p) {
			return attr
		}
	}
	return hide(attr)
}

// runtimeStringDefault matches a runtime() reference with a string
// default as refString writes it: the variable's name quoted by Go, the
// default as JSON.
var runtimeStringDefault = regexp.MustCompile(`^runtime\(("(?:[^"\\]|\\.)*"), ("(?:[^"\\]|\\.)*")\)$`)

// urlDigestForm matches the end of a url hideURLCredentials has hidden.
var urlDigestForm = regexp.MustCompile(` \(sensitive sha256:[0-9a-f]{9}…\)$`)

// credentialDigestForm matches what credentialDigest returns.
var credentialDigestForm = regexp.MustCompile(`^\(sensitive sha256:[0-9a-f]{9}…\)$`)

// runtimeRefShaped reports whether a decoded object is shaped as a runtime
// reference marshals (manifest.RuntimeRef): "env" with a string, and only
// "secret", "has_default" and "default" besides.
func runtimeRefShaped(m map[string]any) bool {
	if _, ok := m["env"].(string); !ok {
		return false
	}
	for k := range m {
		switch k {
		case "env", "secret", "has_default", "default":
		default:
			return false
		}
	}
	return true
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// short abbreviates a value for display: "h1:Pigh27TpDe8T…". Text is cut
// between characters, never inside one.
func short(s string) string {
	if len(s) <= 16 {
		return s
	}
	cut := 16
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func toolAttributes(t *manifest.Tool, res *resolve.Resolved, registered []string) Attributes {
	a := Attributes{"kind": t.Kind, "enabled": boolStr(t.Enabled)}
	a.set("description", descriptionAttribute(t, res))
	a.set("capabilities", sortedList(t.Capabilities))
	a.set("config", configAttribute(t.Config))
	switch {
	case t.JavaScript != nil:
		a.set("export", str(t.JavaScript.Export))
	case t.Python != nil:
		a.set("export", str(t.Python.Export))
		a.set("interpreter", str(t.Python.Interpreter))
	case t.Bash != nil:
		b := t.Bash
		a.set("commands", list(b.Commands))
		a.set("cwd", str(b.Cwd))
		a.set("shared", boolStr(b.Shared))
		if b.FS != nil {
			a.set("fs", jsonOf([]string{str(b.FS.Kind), str(b.FS.Path), str(b.FS.Cwd)}))
		}
		if b.Env != nil {
			a.set("env", jsonOf([]string{str(b.Env.Kind), list(b.Env.Vars)}))
		}
		if b.Limits != nil {
			l := b.Limits
			a.set("limits", jsonOf([]string{intStr(l.MaxExecutionTimeSecs), intStr(l.MaxOutputSize), intStr(l.MaxCommandCount), intStr(l.MaxLoopIterations)}))
		}
		if b.Network != nil {
			n := b.Network
			a.set("network", jsonOf([]string{boolStr(n.Enabled), list(n.AllowedURLPrefixes), list(n.AllowedMethods), intStr(n.MaxRedirects), intStr(n.MaxResponseSize), intStr(n.NetworkTimeoutSecs)}))
		}
	case t.MCP != nil:
		m := t.MCP
		a.set("transport", str(m.Transport))
		a.set("command", str(m.Command))
		a.set("args", list(m.Args))
		a.set("url", hideURLCredentials(str(m.URL)))
		a.set("auth_token", sensitive(m.AuthToken))
		a.set("headers", dynamicJSON(m.Headers, true))
		a.set("expose", list(m.Expose))
		if len(m.ToolCapabilities) > 0 {
			tc := map[string][]string{}
			for k, v := range m.ToolCapabilities {
				tc[k] = normTags(v.Values)
			}
			a.set("tool_capabilities", jsonOf(tc))
		}
	case t.A2A != nil:
		x := t.A2A
		a.set("url", hideURLCredentials(str(x.URL)))
		a.set("auth_token", sensitive(x.AuthToken))
		a.set("headers", dynamicJSON(x.Headers, true))
		a.set("timeout_secs", intStr(x.TimeoutSecs))
		a.set("default_accepted_output_modes", list(x.DefaultAcceptedOutputModes))
		a.set("target_agent", str(x.TargetAgent))
		if x.Tenant != nil {
			a.set("tenant", jsonOf([]string{str(x.Tenant.Policy), str(x.Tenant.ID)}))
		}
	}
	if res != nil && res.Pin != nil {
		pinAttributes(a, res.Pin)
	}
	// The registered tools and their schemas: what the model sees.
	a.set("registered", strings.Join(registered, ", "))
	if res != nil {
		var schemas []any
		for _, rt := range res.Tools {
			schemas = append(schemas, []any{rt.Name, rt.Description, rt.InputSchema})
		}
		if len(schemas) > 0 {
			a.set("definitions", resolve.SHA256([]byte(jsonOf(schemas))))
		}
	}
	return a
}

// descriptionAttribute is a tool block's description when a registered
// tool is described by it, else "": a description no tool uses is not part
// of what an agent ships (the definitions digest covers what the model is
// told). diffState keeps a tool as applied when such a description is all
// that differs from its state, so that adding, changing or removing one
// changes nothing, and so does the state an earlier agentform recorded
// with the block's text in it.
func descriptionAttribute(t *manifest.Tool, res *resolve.Resolved) string {
	if descriptionUnused(res) {
		return ""
	}
	return str(t.Description)
}

// descriptionUnused reports whether a resolved block's description is used
// by none of its registered tools.
func descriptionUnused(res *resolve.Resolved) bool {
	return res != nil && !res.Unresolved && res.DescriptionUnused
}

// onlyUnusedDescription reports whether a tool's attributes as applied
// differ from its attributes now only in the description, which is unused
// now.
func onlyUnusedDescription(applied, now Attributes, res *resolve.Resolved) bool {
	if !descriptionUnused(res) {
		return false
	}
	without := func(a Attributes) Attributes {
		c := maps.Clone(a)
		delete(c, "description")
		return c
	}
	return maps.Equal(without(applied), without(now))
}

func pinAttributes(a Attributes, p *lockfile.Tool) {
	a.set("source", p.Source)
	a.set("deps", p.Deps)
	a.set("bundle", p.Bundle)
	a.set("bundler", p.Bundler)
	a.set("uv_lock", p.UVLock)
	a.set("card", p.Card)
	if p.ServerName != "" {
		a.set("server", p.ServerName+" "+p.ServerVersion)
	}
	names := make([]string, 0, len(p.Served))
	for name := range p.Served {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		a.set(fmt.Sprintf("tools[%q]", name), p.Served[name])
	}
}

func skillAttributes(s *manifest.Skill, res *resolve.ResolvedSkill) Attributes {
	a := Attributes{}
	if s.Inline() {
		a.set("description", s.Description.Value)
		a.set("content", resolve.SHA256([]byte(s.Content.Value)))
		if len(s.Resources) > 0 {
			a.set("resources", resolve.SHA256([]byte(jsonOf(s.Resources))))
		}
	} else {
		a.set("source_path", s.Source.Value)
	}
	if res != nil && res.Pin != nil {
		a.set("source", res.Pin.Source)
	}
	return a
}

// digestOf returns one digest over named fingerprints, in name order.
func digestOf(fps map[string]string) string {
	names := make([]string, 0, len(fps))
	for name := range fps {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		b.WriteString(name)
		b.WriteByte(0)
		b.WriteString(fps[name])
		b.WriteByte(0)
	}
	return resolve.SHA256([]byte(b.String()))
}

// workspaceReferences is the digest of the runtime() references
// agent.json's runtime list takes for ag from the workspace's own blocks
// (the config and params of its model's providers entry, http_server and
// runtime), as agent.json writes them; "" when there are none. A
// digest: a plain reference's default may be a credential written in a
// config.
func workspaceReferences(cfg *manifest.Config, ag *manifest.Agent) string {
	refs := newRefSet()
	refs.workspace(cfg, ag)
	if len(refs.refs) == 0 {
		return ""
	}
	return hashedAttribute([]byte(jsonOf(refs.refs)))
}

// networkFingerprint is the digest of the network block as agent.json
// carries it (runtime values as references, a secret's default left
// out); "" without one. Its headers may hold credentials.
func networkFingerprint(n *manifest.Network) string {
	if n == nil {
		return ""
	}
	b, err := json.Marshal(artNetwork(n))
	if err != nil {
		return ""
	}
	return hashedAttribute(b)
}

// hashedAttribute is how an attribute that may hold a credential shows
// b, as mcp and a2a headers do (dynamicJSON): a digest cut short, which
// tells a change and keeps the value out of state and plans.
func hashedAttribute(b []byte) string {
	return "(" + short(resolve.SHA256(b)) + ")"
}

func agentAttributes(ag *manifest.Agent, toolsDigest, skillsDigest, lockFP string) Attributes {
	a := Attributes{
		"version":           str(ag.Version),
		"capabilities":      sortedList(ag.Capabilities),
		"capability_policy": str(ag.CapabilityPolicy),
		"graph":             str(ag.Graph.Type),
		"model":             str(ag.Model.Provider) + " " + str(ag.Model.Name),
	}
	a.set("description", str(ag.Description))
	if ag.Graph.Model != nil {
		m := ag.Graph.Model
		policy := []string{intStr(m.Timeout)}
		if m.Retry != nil {
			policy = append(policy, intStr(m.Retry.MaxAttempts), intStr(m.Retry.InitialBackoff), intStr(m.Retry.MaxBackoff))
		}
		a.set("graph_model", jsonOf(policy))
	}
	if p := ag.Prompt; p != nil {
		switch p.Kind {
		case manifest.PromptText:
			a.set("prompt", resolve.SHA256([]byte(p.Text)))
		case manifest.PromptMessages:
			a.set("prompt", resolve.SHA256([]byte(jsonOf(p.Messages))))
		case manifest.PromptLangfuse:
			lf := p.Langfuse
			parts := []string{"langfuse", str(lf.PromptName), str(lf.BaseURL), str(lf.Label), intStr(lf.Version), str(lf.PublicKey), sensitive(lf.SecretKey)}
			// How the prompt is fetched is in agent.json too; written only
			// when set, so that a prompt without them keeps the value
			// earlier states recorded.
			if lf.CacheTTLSeconds.Set || lf.FetchTimeoutSeconds.Set || lf.MaxRetries.Set {
				parts = append(parts, intStr(lf.CacheTTLSeconds), intStr(lf.FetchTimeoutSeconds), intStr(lf.MaxRetries))
			}
			a.set("prompt", jsonOf(parts))
		}
	}
	// An agent's artifact carries every tool and skill, so their
	// fingerprints are part of its own: one digest over all of them, the
	// same for every agent (computed once per plan).
	a["tools"] = toolsDigest
	a["skills"] = skillsDigest
	// The artifact embeds the lockfile's digest too (every entry, not only
	// its own tools'), so any change to the lockfile rebuilds it: else
	// verify would find the artifact and the lockfile disagree.
	a.set("lockfile", lockFP)
	return a
}
