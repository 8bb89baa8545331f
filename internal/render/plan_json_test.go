package render

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestPlanJSONChangedAttributes: changed_attributes names the attributes
// that changed, sorted (DESIGN §9, §10); attribute_changes says how, with
// the values the plan text shows, a credential scrubbed before the value
// is abbreviated, so that no part of it shows, in the document or the
// text.
func TestPlanJSONChangedAttributes(t *testing.T) {
	const token = "tok-0123456789abcdef"
	applied := appliedState(testPlan(t, "", nil), nil)
	changed := strings.Replace(planSrc, `  commands     = ["ls"]`, `  commands     = ["ls", "cat"]
  description  = "Lists files."
  config       = { K = "`+token+`" }`, 1)
	p := planOf(t, changed, "", applied)
	red := NewRedaction(nil, []string{token})

	out, err := json.Marshal(PlanJSON(p, nil, red))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ResourceChanges []struct {
			Address           string                `json:"address"`
			ChangedAttributes []string              `json:"changed_attributes"`
			AttributeChanges  []JSONAttributeChange `json:"attribute_changes"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	byAddr := map[string]int{}
	for i, rc := range doc.ResourceChanges {
		byAddr[rc.Address] = i
		if !slices.IsSorted(rc.ChangedAttributes) || len(rc.AttributeChanges) != len(rc.ChangedAttributes) {
			t.Errorf("%s: changed_attributes %q, %d attribute_changes\nwant: sorted names, one change each", rc.Address, rc.ChangedAttributes, len(rc.AttributeChanges))
			continue
		}
		for j, name := range rc.ChangedAttributes {
			if strings.ContainsAny(name, " :→") || rc.AttributeChanges[j].Name != name {
				t.Errorf("%s: changed attribute %d\ngot:  %q (change %q)\nwant: an attribute name, in the order of attribute_changes", rc.Address, j, name, rc.AttributeChanges[j].Name)
			}
		}
	}
	sh := doc.ResourceChanges[byAddr["tool.sh"]]
	for _, want := range []string{"commands", "config", "description"} {
		if !slices.Contains(sh.ChangedAttributes, want) {
			t.Errorf("tool.sh changed_attributes\ngot:  %q\nwant: %q among them", sh.ChangedAttributes, want)
		}
	}
	if a := doc.ResourceChanges[byAddr["agent.a"]]; !slices.Contains(a.ChangedAttributes, "tools") {
		t.Errorf("agent.a changed_attributes\ngot:  %q\nwant: tools among them", a.ChangedAttributes)
	}
	for _, c := range sh.AttributeChanges {
		switch c.Name {
		case "commands":
			if !slices.Equal(c.Added, []string{"cat"}) || c.Removed != nil || c.Before != nil || c.After != nil {
				t.Errorf("commands change\ngot:  %+v\nwant: cat added", c)
			}
		case "description":
			if c.Before != nil || c.After == nil || *c.After != "Lists files." {
				t.Errorf("description change\ngot:  %+v\nwant: none before, Lists files. after", c)
			}
		case "config":
			if c.Before != nil || c.After == nil || *c.After != `{"K":"(redacted)…` {
				t.Errorf("config change\ngot:  %+v\nwant: the credential scrubbed, then abbreviated", c)
			}
		}
	}
	var text strings.Builder
	Plan(&text, p, PlanOptions{Matrix: MatrixFull, Redaction: red})
	for _, s := range []string{string(out), text.String()} {
		if strings.Contains(s, "tok-") {
			t.Errorf("output shows part of the credential\ngot:\n%s", s)
		}
	}
	for _, want := range []string{"      commands: + cat\n", "      description: (none) → Lists files.\n", "      tool.sh changed\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("plan text lacks %q\ngot:\n%s", want, text.String())
		}
	}
}
