package planner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/lockfile"
)

const stateBase = `
agent "a" {
  capabilities = ["shell"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
tool "sh" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["shell::exec"]
}
`

func planSrc(t *testing.T, src string, applied *Applied) *Plan {
	t.Helper()
	cfg, diags := manifest.LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ws, _ := resolve.Run(context.Background(), cfg, resolve.Options{})
	return New(context.Background(), cfg, Options{Resolution: ws, Applied: applied})
}

// appliedFrom turns a plan into the state an apply of it would record.
func appliedFrom(p *Plan) *Applied {
	a := &Applied{Lineage: "l", Serial: 1, Resources: map[string]AppliedResource{}, Matrix: map[string][]string{}}
	for _, ad := range p.Addresses {
		a.Resources[ad.Address] = AppliedResource{Type: ad.Type, Name: ad.Name, Kind: ad.Kind, Fingerprint: ad.Fingerprint, Attributes: ad.Attributes}
	}
	for ai, ag := range p.Agents {
		a.Matrix[ag.Name] = p.Matrix().Reachable(ai)
	}
	return a
}

func actionOf(p *Plan, addr string) ResourceChange {
	for _, rc := range p.ResourceChanges {
		if rc.Address == addr {
			return rc
		}
	}
	return ResourceChange{}
}

// shownLines is what plan prints under rc's address.
func shownLines(rc ResourceChange) []string {
	var out []string
	for _, c := range rc.AttributeChanges {
		out = append(out, c.Shown(nil).Lines()...)
	}
	return out
}

func TestPlanAgainstState(t *testing.T) {
	first := planSrc(t, stateBase, nil)
	if got := actionOf(first, "tool.sh").Actions; !slices.Equal(got, []string{ActionCreate}) {
		t.Fatalf("without state got: %v\nwant: create", got)
	}
	applied := appliedFrom(first)

	same := planSrc(t, stateBase, applied)
	if same.HasChanges() {
		t.Errorf("unchanged configuration got changes: %+v %+v", same.ResourceChanges, same.CapabilityChanges)
	}

	// A new command and a revoked capability.
	changed := strings.Replace(stateBase, `commands     = ["ls"]`, `commands     = ["ls", "cat"]`, 1)
	changed = strings.Replace(changed, `capabilities = ["shell"]`, `capabilities = ["web"]`, 1)
	p := planSrc(t, changed, applied)
	sh := actionOf(p, "tool.sh")
	if !slices.Equal(sh.Actions, []string{ActionUpdate}) || !slices.Contains(shownLines(sh), "commands: + cat") || !slices.Equal(sh.ChangedAttributes, []string{"commands"}) {
		t.Errorf("tool.sh got: %+v\nwant: update with commands: + cat", sh)
	}
	ag := actionOf(p, "agent.a")
	if !slices.Equal(ag.Actions, []string{ActionUpdate}) || !slices.Contains(shownLines(ag), "capabilities: + web, - shell") || !slices.Contains(shownLines(ag), "tool.sh changed") ||
		!slices.Equal(ag.ChangedAttributes, []string{"capabilities", "tools"}) {
		t.Errorf("agent.a got: %+v\nwant: update naming the capability change and tool.sh", ag)
	}
	if len(p.CapabilityChanges) != 1 || p.CapabilityChanges[0] != (CapabilityChange{Agent: "a", Tool: "sh", Change: "revoked"}) {
		t.Errorf("got: %+v\nwant: a → sh revoked", p.CapabilityChanges)
	}

	// A removed tool is a delete; a new one a create.
	renamed := strings.Replace(stateBase, `tool "sh"`, `tool "shell"`, 1)
	p = planSrc(t, renamed, applied)
	if got := actionOf(p, "tool.sh"); !slices.Equal(got.Actions, []string{ActionDelete}) {
		t.Errorf("tool.sh got: %+v\nwant: delete", got)
	}
	if got := actionOf(p, "tool.shell"); !slices.Equal(got.Actions, []string{ActionCreate}) {
		t.Errorf("tool.shell got: %+v\nwant: create", got)
	}
	want := []CapabilityChange{{Agent: "a", Tool: "sh", Change: "revoked"}, {Agent: "a", Tool: "shell", Change: "granted"}}
	if !slices.Equal(p.CapabilityChanges, want) {
		t.Errorf("got: %+v\nwant: %+v", p.CapabilityChanges, want)
	}
}

func TestArtifactDrift(t *testing.T) {
	dir := t.TempDir()
	art := filepath.Join(dir, "dist", "a.agent.tgz")
	if err := os.MkdirAll(filepath.Dir(art), 0o755); err != nil {
		t.Fatal(err)
	}
	data := []byte("artifact bytes")
	if err := os.WriteFile(art, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := manifest.LoadSources(dir, map[string][]byte{"agent.acl": []byte(stateBase)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	first := New(context.Background(), cfg, Options{})
	applied := appliedFrom(first)
	r := applied.Resources["agent.a"]
	r.Artifact = &AppliedArtifact{Path: "dist/a.agent.tgz", SHA256: resolve.SHA256(data), Size: int64(len(data))}
	applied.Resources["agent.a"] = r

	if p := New(context.Background(), cfg, Options{Applied: applied}); p.HasChanges() {
		t.Fatalf("artifact intact got: %+v\nwant: no changes", p.ResourceChanges)
	}
	for name, mutate := range map[string]func(){
		"altered": func() { _ = os.WriteFile(art, []byte("artifact bytez"), 0o644) },
		"removed": func() { _ = os.Remove(art) },
	} {
		t.Run(name, func(t *testing.T) {
			mutate()
			p := New(context.Background(), cfg, Options{Applied: applied})
			rc := actionOf(p, "agent.a")
			if !slices.Equal(rc.Actions, []string{ActionUpdate}) || !slices.Contains(rc.Reasons, ReasonArtifactDrift) {
				t.Errorf("got: %+v\nwant: update, %q", rc, ReasonArtifactDrift)
			}
		})
	}
}

func TestCheckSaved(t *testing.T) {
	first := planSrc(t, stateBase, nil)
	applied := appliedFrom(first)
	p := planSrc(t, stateBase, applied)
	saved := p.Save([]byte("{}"), "text")
	if err := planSrc(t, stateBase, applied).CheckSaved(saved); err != nil {
		t.Fatalf("same inputs got: %v\nwant: nil", err)
	}
	moved := *applied
	moved.Serial = 2
	other := *applied
	other.Lineage = "1e0b5a3c-0000-4000-8000-000000000000"
	for _, tt := range []struct {
		name    string
		applied *Applied
		want    string
	}{
		{"moved", &moved, fmt.Sprintf("it was made against state serial %d, and the state is now at serial 2: something was applied or removed from state since", applied.Serial)},
		{"no state", nil, fmt.Sprintf("it was made against state serial %d (lineage %q), and this workspace has no state: was it planned in another workspace", applied.Serial, applied.Lineage)},
		{"another lineage", &other, fmt.Sprintf("it was made against another state (lineage %q, serial %d) than this workspace's (lineage %q, serial %d)", applied.Lineage, applied.Serial, other.Lineage, other.Serial)},
	} {
		err := planSrc(t, stateBase, tt.applied).CheckSaved(saved)
		if !errors.Is(err, ErrStalePlan) || !strings.Contains(fmt.Sprint(err), tt.want) {
			t.Errorf("%s got: %v\nwant: ErrStalePlan saying %q", tt.name, err, tt.want)
		}
	}
	if err := planSrc(t, stateBase, applied).CheckSaved(first.Save([]byte("{}"), "text")); !errors.Is(err, ErrStalePlan) || !strings.Contains(err.Error(), "it was made before anything was applied") {
		t.Errorf("plan saved before the first apply got: %v\nwant: ErrStalePlan saying it was made before anything was applied", err)
	}
	changed := strings.Replace(stateBase, `["ls"]`, `["ls", "cat"]`, 1)
	err := planSrc(t, changed, applied).CheckSaved(saved)
	if !errors.Is(err, ErrPlanInputsChanged) || !strings.Contains(err.Error(), "tool.sh changed") {
		t.Errorf("changed inputs got: %v\nwant: ErrPlanInputsChanged naming tool.sh", err)
	}
	// A tool's fingerprint covers what it resolved to as well as its
	// block: the message must not blame the configuration alone.
	if err != nil && (strings.Contains(err.Error(), "configuration changed") || !strings.Contains(err.Error(), "what it resolves to")) {
		t.Errorf("changed inputs got: %v\nwant: a message naming both the manifest and what a tool resolves to", err)
	}
}

// TestLockfileChangeUpdatesAgents: an agent's artifact embeds the
// lockfile's digest, so an agent applied against another lockfile, or by
// a version that did not record it, is updated.
func TestLockfileChangeUpdatesAgents(t *testing.T) {
	first := planSrc(t, stateBase, nil)
	ad := first.Addresses[slices.IndexFunc(first.Addresses, func(a Address) bool { return a.Address == "agent.a" })]
	if !strings.HasPrefix(ad.Attributes["lockfile"], "sha256:") {
		t.Fatalf("agent attributes %v\nwant: the lockfile's fingerprint", ad.Attributes)
	}
	for _, tc := range []struct {
		name, lockfile, want string
	}{
		{"other lockfile", "sha256:" + strings.Repeat("0", 64), "lockfile: sha256:000000"},
		{"not recorded", "", "lockfile: (none) → sha256:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			applied := appliedFrom(first)
			r := applied.Resources["agent.a"]
			attrs := maps.Clone(r.Attributes)
			if tc.lockfile == "" {
				delete(attrs, "lockfile")
			} else {
				attrs["lockfile"] = tc.lockfile
			}
			r.Attributes, r.Fingerprint = attrs, attrs.fingerprint()
			applied.Resources["agent.a"] = r
			rc := actionOf(planSrc(t, stateBase, applied), "agent.a")
			if !slices.Equal(rc.Actions, []string{ActionUpdate}) || !slices.ContainsFunc(shownLines(rc), func(s string) bool { return strings.HasPrefix(s, tc.want) }) || !slices.Contains(rc.ChangedAttributes, "lockfile") {
				t.Errorf("agent.a got: %+v\nwant: update, %q", rc, tc.want)
			}
		})
	}
}

// TestEncodeLockEarly: with EncodeLock the lockfile is encoded while the
// rest of the plan is computed; what LockBytes and LockDigest return is
// the encoding of the plan's lockfile all the same (run with -race).
func TestEncodeLockEarly(t *testing.T) {
	cfg, diags := manifest.LoadSources("", map[string][]byte{"agent.acl": []byte(stateBase)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ws, _ := resolve.Run(context.Background(), cfg, resolve.Options{})
	for range 20 {
		p := New(context.Background(), cfg, Options{Resolution: ws, EncodeLock: true})
		want := p.Lock.Bytes()
		if got := p.LockBytes(); !bytes.Equal(got, want) {
			t.Fatalf("LockBytes:\n%s\nwant:\n%s", got, want)
		}
		if got, want := p.LockDigest(), lockfile.DigestOf(want); got != want {
			t.Fatalf("LockDigest: got %s, want %s", got, want)
		}
	}
}

// TestDescriptionAttribute: a tool block's description counts in its
// fingerprint only when a registered tool is described by it.
func TestDescriptionAttribute(t *testing.T) {
	block := &manifest.Tool{Name: "adder", Kind: manifest.KindJavaScript, Description: manifest.String{Value: "Adds.", Set: true}}
	one := func(desc string, unused bool) *resolve.Resolved {
		return &resolve.Resolved{Tools: []resolve.Tool{{Name: "adder", Description: desc}}, DescriptionUnused: unused}
	}
	for _, tc := range []struct {
		name string
		res  *resolve.Resolved
		want string
	}{
		{"used", one("Adds.", false), "Adds."},
		{"unresolved", &resolve.Resolved{Unresolved: true, DescriptionUnused: true}, "Adds."},
		{"not resolved", nil, "Adds."},
		{"own, the same", one("Adds.", true), ""},
		{"own, another", one("Sums two numbers.", true), ""},
	} {
		if got := descriptionAttribute(block, tc.res); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		if _, set := toolAttributes(block, tc.res, nil)["description"]; set != (tc.want != "") {
			t.Errorf("%s: description attribute set = %v, want %v", tc.name, set, tc.want != "")
		}
	}
}

// TestUnusedDescriptionKeepsApplied: when a description no tool uses is
// all that differs from the state (it was added, edited or removed, or an
// earlier agentform recorded it), the tool and every agent are as
// applied: no-op, with the applied fingerprint carried on. A description
// in use that changes is an update.
func TestUnusedDescriptionKeepsApplied(t *testing.T) {
	src := func(desc string) string {
		return strings.Replace(stateBase, `  kind         = "bash"`, `  kind         = "bash"`+"\n"+desc, 1)
	}
	// plan resolves the workspace with the block's description line body;
	// own, when set, stands for the tool's own description, as a
	// javascript tool that describes itself resolves; unused is what this
	// version says of the block's description then (an earlier version
	// said nothing: false).
	plan := func(t *testing.T, body, own string, unused bool, applied *Applied) *Plan {
		t.Helper()
		cfg, diags := manifest.LoadSources("", map[string][]byte{"agent.acl": []byte(src(body))})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		ws, _ := resolve.Run(context.Background(), cfg, resolve.Options{})
		if own != "" {
			ws.Tools["sh"].Tools[0].Description = own
		}
		ws.Tools["sh"].DescriptionUnused = unused
		return New(context.Background(), cfg, Options{Resolution: ws, Applied: applied})
	}
	const lists, shows = `  description = "Lists."`, `  description = "Shows."`
	for _, tc := range []struct {
		name              string
		before, ownBefore string
		unusedBefore      bool
		after, own        string
		unused            bool
		want              string
	}{
		{"recorded by an earlier version", lists, "Lists.", false, lists, "Lists.", true, ActionNoOp},
		{"recorded by an earlier version, another text", lists, "Runs ls.", false, lists, "Runs ls.", true, ActionNoOp},
		{"edited", lists, "Runs ls.", true, shows, "Runs ls.", true, ActionNoOp},
		{"removed", lists, "Runs ls.", true, ``, "Runs ls.", true, ActionNoOp},
		{"added", ``, "Runs ls.", true, lists, "Runs ls.", true, ActionNoOp},
		{"the tool's own edited", lists, "Runs ls.", true, lists, "Lists files.", true, ActionUpdate},
		{"recorded by an earlier version, the tool's own edited", lists, "Runs ls.", false, lists, "Lists files.", true, ActionUpdate},
		{"not used from now on", lists, "", false, lists, "Runs ls.", true, ActionUpdate},
		{"removed as the tool describes itself", lists, "", false, ``, "Runs ls.", true, ActionUpdate},
		{"in use, edited", lists, "", false, shows, "", false, ActionUpdate},
		{"in use from now on", lists, "Runs ls.", true, lists, "", false, ActionUpdate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			applied := appliedFrom(plan(t, tc.before, tc.ownBefore, tc.unusedBefore, nil))
			p := plan(t, tc.after, tc.own, tc.unused, applied)
			for _, addr := range []string{"tool.sh", "agent.a"} {
				if got := actionOf(p, addr).Actions[0]; got != tc.want {
					t.Errorf("%s: got %s, want %s", addr, got, tc.want)
				}
			}
			// A description that was recorded and is not used now shows
			// as not used, not as removed.
			// One that was removed shows as removed.
			want := "description: Lists. → (not used)"
			if tc.after == "" {
				want = "description: Lists. → (none)"
			}
			for _, c := range shownLines(actionOf(p, "tool.sh")) {
				if strings.HasPrefix(c, "description:") && tc.unused && c != want {
					t.Errorf("tool.sh changed attribute %q, want %q", c, want)
				}
			}
			if tc.name == "removed as the tool describes itself" && !slices.Contains(shownLines(actionOf(p, "tool.sh")), want) {
				t.Errorf("tool.sh changed attributes %q: the removed description does not show", shownLines(actionOf(p, "tool.sh")))
			}
			if tc.name == "not used from now on" && !slices.Contains(shownLines(actionOf(p, "tool.sh")), "description: Lists. → (not used)") {
				t.Errorf("tool.sh changed attributes %q: the description the model was told no longer shows", shownLines(actionOf(p, "tool.sh")))
			}
			if tc.want == ActionNoOp {
				for _, ad := range p.Addresses {
					if ad.Address == "tool.sh" && ad.Fingerprint != applied.Resources["tool.sh"].Fingerprint {
						t.Errorf("tool.sh fingerprint %s, want the applied one carried on", ad.Fingerprint)
					}
				}
			}
		})
	}
}

// TestShort: values are cut at 16 bytes, between characters.
func TestShort(t *testing.T) {
	for in, want := range map[string]string{
		"h1:Pigh27TpDe8TOxyz":       "h1:Pigh27TpDe8TO…",
		"short":                     "short",
		"Liste des fichiers à lire": "Liste des fichie…",
		"Liste des fichiéééé":       "Liste des fichi…",
		"0123456789abcdef":          "0123456789abcdef",
	} {
		if got := short(in); got != want || !utf8.ValidString(got) {
			t.Errorf("short(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestShortPair: two long values that differ past the characters short
// keeps are shown from a little before their first difference, so that
// the two sides of a change never read the same.
func TestShortPair(t *testing.T) {
	for _, tc := range []struct{ o, n, wantO, wantN string }{
		{"h1:abcdefghijklmnopqrstuvwxyz", "h1:zbcdefghijklmnopqrstuvwxyz", "h1:abcdefghijklm…", "h1:zbcdefghijklm…"},
		{`{"key":{"env":"JK"},"plain":"plain-NEW"}`, `{"key":{"env":"JK"},"plain":"plain-NEW2"}`, `…lain-NEW"}`, `…lain-NEW2"}`},
		{strings.Repeat("x", 40) + "a" + strings.Repeat("y", 40), strings.Repeat("x", 40) + "b" + strings.Repeat("y", 40), "…xxxxxxxxayyyyyyy…", "…xxxxxxxxbyyyyyyy…"},
		{strings.Repeat("é", 20) + "a", strings.Repeat("é", 20) + "b", "…ééééa", "…ééééb"},
		{"short", "short2", "short", "short2"},
	} {
		o, n := shortPair(tc.o, tc.n)
		if o != tc.wantO || n != tc.wantN || !utf8.ValidString(o) || !utf8.ValidString(n) {
			t.Errorf("shortPair(%q, %q)\ngot:  %q → %q\nwant: %q → %q", tc.o, tc.n, o, n, tc.wantO, tc.wantN)
		}
	}
}

const overrideBase = `
agent "a" {
  capabilities      = ["shell"]
  capability_policy = "extensible"
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
agent "b" {
  capabilities = ["shell"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
tool "sh" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["shell::exec"]
}
tool "web" {
  kind         = "bash"
  commands     = ["curl"]
  capabilities = ["web"]
}
`

// TestSimulatedOverrideIsNotAChange: a simulated session override is the
// session's matrix, with what it gains or loses compared with the
// configuration in Session; CapabilityChanges and HasChanges stay what
// applying the configuration as written would change, and the plan is
// not applyable.
func TestSimulatedOverrideIsNotAChange(t *testing.T) {
	planWith := func(src string, override string, applied *Applied) *Plan {
		t.Helper()
		cfg, diags := manifest.LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		ws, _ := resolve.Run(context.Background(), cfg, resolve.Options{})
		opts := Options{Resolution: ws, Applied: applied}
		if override != "" {
			o, err := capability.ParseOverride(override)
			if err != nil {
				t.Fatal(err)
			}
			opts.Override = &o
		}
		return New(context.Background(), cfg, opts)
	}
	applied := appliedFrom(planWith(overrideBase, "", nil))
	session := []CapabilityChange{{Agent: "a", Tool: "sh", Change: "revoked"}, {Agent: "a", Tool: "web", Change: "granted"}}

	p := planWith(overrideBase, "replace:web", applied)
	if p.HasChanges() || len(p.CapabilityChanges) != 0 {
		t.Errorf("simulation alone got changes: %+v\nwant: none, nothing apply would change", p.CapabilityChanges)
	}
	if p.Applyable {
		t.Error("got: applyable\nwant: a simulated override is never applied")
	}
	if s := p.Session; s == nil || s.Override != "replace:web" || !slices.Equal(s.Honoured, []string{"a"}) || !slices.Equal(s.Ignored, []string{"b"}) || !slices.Equal(s.Changes, session) {
		t.Errorf("got session: %+v\nwant: replace:web honoured for a, ignored for b, with a's gains and losses %+v", s, session)
	}
	if ai, _ := p.Matrix().AgentIndex("a"); !slices.Equal(p.Matrix().Reachable(ai), []string{"web"}) {
		t.Errorf("got: a may call %v\nwant: the session's matrix, web only", p.Matrix().Reachable(ai))
	}

	// A change apply would make stays one, apart from the session's.
	changed := strings.Replace(overrideBase, "capabilities = [\"shell\"]\n  graph", "capabilities = [\"shell\", \"web\"]\n  graph", 1)
	p = planWith(changed, "replace:web", applied)
	if want := []CapabilityChange{{Agent: "b", Tool: "web", Change: "granted"}}; !p.HasChanges() || !slices.Equal(p.CapabilityChanges, want) {
		t.Errorf("got: changes=%v %+v\nwant: %+v, b's edit only", p.HasChanges(), p.CapabilityChanges, want)
	}
	if p.Session == nil || !slices.Equal(p.Session.Changes, session) {
		t.Errorf("got session: %+v\nwant: the same gains and losses %+v", p.Session, session)
	}

	if p = planWith(overrideBase, "", applied); p.Session != nil || !p.Applyable || p.HasChanges() {
		t.Errorf("without an override got: session %+v, applyable %v, changes %v\nwant: no session, applyable, no changes", p.Session, p.Applyable, p.HasChanges())
	}
}

func TestCapabilityChanges(t *testing.T) {
	got := capabilityChanges(map[string][]string{"x": {"b", "a"}, "gone": {"t"}}, map[string][]string{"x": {"a", "c"}, "new": {"u"}})
	want := []CapabilityChange{
		{Agent: "gone", Tool: "t", Change: "revoked"},
		{Agent: "new", Tool: "u", Change: "granted"},
		{Agent: "x", Tool: "b", Change: "revoked"},
		{Agent: "x", Tool: "c", Change: "granted"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:  %+v\nwant: %+v", got, want)
	}
}

// TestConfigCredentialsHidden: a tool's config is stored in state and
// shown by plan with every credential key's value as a digest (a literal,
// or a runtime reference's default that is not secret), so that neither
// holds a credential written in the manifest; a changed credential still
// shows as a change. A state an earlier agentform recorded with the
// literal plans as applied, and shows it as a digest too.
func TestConfigCredentialsHidden(t *testing.T) {
	const key, rotated, pw, def = "Q7vXk29LpZr4TmW8yBn3", "Zr4TmW8yBn3Q7vXk29Lp", "pw-0123456789", "tok-default-9999"
	src := func(apiKey string) string {
		return strings.Replace(stateBase, `  commands     = ["ls"]`, `  commands     = ["ls"]
  config = {
    API_KEY    = "`+apiKey+`"
    REGION     = "eu"
    TOKEN      = runtime("T", "`+def+`")
    SECRET_KEY = secret(runtime("S", "secret-default-1"))
    DB_PASSWORD = "`+pw+`"
    DB_HOST     = "db.internal"
  }`, 1)
	}
	noLiteral := func(what, text string) {
		t.Helper()
		for _, lit := range []string{key, key[:8], rotated[:8], pw, def, "secret-default"} {
			if strings.Contains(text, lit) {
				t.Errorf("%s quotes %q:\n%s", what, lit, text)
			}
		}
	}
	first := planSrc(t, src(key), nil)
	applied := appliedFrom(first)
	config := applied.Resources["tool.sh"].Attributes["config"]
	noLiteral("the config attribute", config)
	for _, want := range []string{`"API_KEY":"(sensitive sha256:`, `"REGION":"eu"`, `"TOKEN":{"default":"(sensitive sha256:`, `"env":"T"`,
		`"SECRET_KEY":{"env":"S","has_default":true,"secret":true}`, `"DB_HOST":"db.internal","DB_PASSWORD":"(sensitive sha256:`} {
		if !strings.Contains(config, want) {
			t.Errorf("config attribute\ngot:  %s\nwant: it to contain %s", config, want)
		}
	}
	if p := planSrc(t, src(key), applied); p.HasChanges() {
		t.Errorf("unchanged configuration got changes: %+v", p.ResourceChanges)
	}
	// A state this version wrote is read through the same hiding: its
	// digests stay as they are (a digest of a digest would name another
	// key as the one that changed).
	if got := hideConfigCredentials(config); got != config {
		t.Errorf("hiding a stored config again\ngot:  %s\nwant: %s", got, config)
	}

	p := planSrc(t, src(rotated), applied)
	sh := actionOf(p, "tool.sh")
	if !slices.Equal(sh.Actions, []string{ActionUpdate}) || !slices.Equal(sh.ChangedAttributes, []string{"config"}) {
		t.Errorf("a rotated API_KEY got: %+v\nwant: an update of config", sh)
	}
	shown := strings.Join(shownLines(sh), "\n")
	noLiteral("the plan", shown)
	if c := sh.AttributeChanges[0]; c.Before == nil || c.After == nil || *c.Before == *c.After {
		t.Errorf("config change %+v: want the two digests", c)
	}

	// An earlier agentform stored the literal, and fingerprinted the tool
	// (and so the agent) with it.
	old := appliedFrom(first)
	oldTool := maps.Clone(old.Resources["tool.sh"].Attributes)
	var cfg manifest.Dynamic
	for _, tl := range mustLoad(t, src(key)).Tools {
		cfg = tl.Config
	}
	oldTool["config"] = dynamicJSON(cfg, false)
	if !strings.Contains(oldTool["config"], key) {
		t.Fatalf("the earlier form should hold the literal: %s", oldTool["config"])
	}
	oldAgent := maps.Clone(old.Resources["agent.a"].Attributes)
	oldAgent["tools"] = digestOf(map[string]string{"sh": oldTool.fingerprint()})
	old.Resources["tool.sh"] = AppliedResource{Type: "tool", Name: "sh", Kind: "bash", Fingerprint: oldTool.fingerprint(), Attributes: StoredAttributes("tool", oldTool)}
	old.Resources["agent.a"] = AppliedResource{Type: "agent", Name: "a", Kind: "agent", Fingerprint: oldAgent.fingerprint(), Attributes: oldAgent}
	noLiteral("the state as read", old.Resources["tool.sh"].Attributes["config"])
	p = planSrc(t, src(key), old)
	if p.HasChanges() {
		t.Errorf("an earlier agentform's state got changes: %+v", p.ResourceChanges)
	}
	for _, ad := range p.Addresses {
		if ad.Address == "tool.sh" && (ad.Fingerprint != oldTool.fingerprint() || ad.Attributes["config"] != config) {
			t.Errorf("tool.sh: fingerprint %s, config %s\nwant: the applied fingerprint carried on, the config as it reads now", ad.Fingerprint, ad.Attributes["config"])
		}
	}
	sh = actionOf(planSrc(t, src(rotated), old), "tool.sh")
	noLiteral("the plan against an earlier state", strings.Join(shownLines(sh), "\n"))

	// A config without credentials keeps its attribute, and its
	// fingerprint, as an earlier agentform recorded them.
	for _, plain := range []string{`{"REGION":"eu","n":1.5,"x":"\u003c\u0026"}`, `not json`} {
		if got := hideConfigCredentials(plain); got != plain {
			t.Errorf("hideConfigCredentials(%s) = %s, want it unchanged", plain, got)
		}
	}
}

func mustLoad(t *testing.T, src string) *manifest.Config {
	t.Helper()
	cfg, diags := manifest.LoadSources("", map[string][]byte{"agent.acl": []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

// TestNetworkChangeUpdatesAgents: every artifact carries the workspace's
// network block, the egress policy serve enforces, so adding, changing
// or removing it updates every agent; an unchanged one does not.
func TestNetworkChangeUpdatesAgents(t *testing.T) {
	const network = `
network {
  policy {
    addresses {
      allow_private = false
    }
  }
}
`
	without := appliedFrom(planSrc(t, stateBase, nil))
	with := appliedFrom(planSrc(t, stateBase+network, nil))
	opened := strings.Replace(network, "allow_private = false", "allow_private = true", 1)
	for _, tc := range []struct {
		name    string
		src     string
		applied *Applied
		update  bool
	}{
		{"added", stateBase + network, without, true},
		{"changed", stateBase + opened, with, true},
		{"removed", stateBase, with, true},
		{"unchanged", stateBase + network, with, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := actionOf(planSrc(t, tc.src, tc.applied), "agent.a")
			if got := slices.Equal(rc.Actions, []string{ActionUpdate}); got != tc.update {
				t.Errorf("agent.a got: %+v\nwant update: %v", rc, tc.update)
			}
			if tc.update && !slices.Contains(rc.ChangedAttributes, "network") {
				t.Errorf("agent.a changed %v, want network among them", rc.ChangedAttributes)
			}
		})
	}
}

// TestAgentJSONChangeUpdatesAgent: an agent whose agent.json would differ
// is updated, so that no artifact is left out of date with the manifest.
// Each case changes something agent.json carries beyond the agent block's
// own attributes: how a langfuse prompt is fetched, and the runtime()
// references the agent takes from the providers entry of its model,
// http_server and runtime.
func TestAgentJSONChangeUpdatesAgent(t *testing.T) {
	agent := func(prompt string) string {
		return `
agent "a" {
  capabilities = ["shell"]
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
` + prompt + `
}
tool "sh" {
  kind         = "bash"
  commands     = ["ls"]
  capabilities = ["shell::exec"]
}
`
	}
	langfuse := func(extra string) string {
		return agent(`
  prompt = {
    source      = "langfuse"
    prompt_name = "helpdesk/triage"
    public_key  = runtime("LANGFUSE_PUBLIC_KEY")
    secret_key  = secret(runtime("LANGFUSE_SECRET_KEY"))
` + extra + `
  }`)
	}
	providers := func(key string) string {
		return `
providers {
  anthropic {
    models = ["claude-haiku-4-5"]
    config {
      api_key = ` + key + `
    }
  }
}
`
	}
	for _, tc := range []struct {
		name, before, after string
		attribute           string
	}{
		{"langfuse cache_ttl_seconds set", langfuse(""), langfuse("    cache_ttl_seconds = 60"), "prompt"},
		{"langfuse fetch_timeout_seconds changed", langfuse("    fetch_timeout_seconds = 5"), langfuse("    fetch_timeout_seconds = 9"), "prompt"},
		{"langfuse max_retries a reference", langfuse("    max_retries = 2"), langfuse(`    max_retries = runtime("LF_RETRIES", 2)`), "prompt"},
		{"providers config reference added", agent(""), providers(`secret(runtime("ANTHROPIC_API_KEY"))`) + agent(""), "workspace_references"},
		{"providers config reference renamed", providers(`secret(runtime("ANTHROPIC_API_KEY"))`) + agent(""), providers(`secret(runtime("CLAUDE_KEY"))`) + agent(""), "workspace_references"},
		{"http_server port a reference", "http_server {\n  port = 8080\n}\n" + agent(""), "http_server {\n  port = runtime(\"PORT\", 8080)\n}\n" + agent(""), "workspace_references"},
		{"runtime default_tenant_id reference", agent(""), "runtime {\n  default_tenant_id = runtime(\"TENANT\", \"main\")\n}\n" + agent(""), "workspace_references"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := planSrc(t, tc.before, nil)
			after := planSrc(t, tc.after, appliedFrom(before))
			if bytes.Equal(agentJSON(t, before), agentJSON(t, after)) {
				t.Fatal("the case does not change agent.json")
			}
			rc := actionOf(after, "agent.a")
			if !slices.Equal(rc.Actions, []string{ActionUpdate}) || !slices.Contains(rc.ChangedAttributes, tc.attribute) {
				t.Errorf("agent.a: %+v; want an update that changes %s", rc, tc.attribute)
			}
		})
	}
	// Left as they are, none of them is a change.
	for _, src := range []string{langfuse(""), providers(`secret(runtime("ANTHROPIC_API_KEY"))`) + agent("")} {
		p := planSrc(t, src, nil)
		if rc := actionOf(planSrc(t, src, appliedFrom(p)), "agent.a"); !slices.Equal(rc.Actions, []string{ActionNoOp}) {
			t.Errorf("unchanged agent.a: %+v, want no-op", rc)
		}
	}
}

// agentJSON is agent "a"'s agent.json as apply would write it from p.
func agentJSON(t *testing.T, p *Plan) []byte {
	t.Helper()
	files, err := p.ArtifactFiles("a")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Path == "agent.json" {
			return f.Data
		}
	}
	t.Fatal("no agent.json")
	return nil
}
