package artifact

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestMarshalAgentGolden pins the sample's agent.json, which is also the
// full example in docs/agent-json.md. Run with -update after an intended
// change, and paste the result into the doc.
func TestMarshalAgentGolden(t *testing.T) {
	got, err := MarshalAgent(newSample(t).agent)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "agent.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("agent.json\ngot:\n%s\nwant:\n%s", got, want)
	}
}

// TestDocExample checks that docs/agent-json.md's full example is the
// golden agent.json.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "agent-json.md"))
	if err != nil {
		t.Fatal(err)
	}
	const start = "<!-- full example: internal/artifact/testdata/agent.golden.json -->\n```json\n"
	_, rest, ok := strings.Cut(string(doc), start)
	if !ok {
		t.Fatalf("docs/agent-json.md has no %q", start)
	}
	example, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatal("the example is not closed")
	}
	want, err := os.ReadFile(filepath.Join("testdata", "agent.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	if example != string(want) {
		t.Errorf("docs/agent-json.md's example differs from testdata/agent.golden.json\ngot:\n%s\nwant:\n%s", example, want)
	}
}

func TestMarshalAgentIgnoresOrder(t *testing.T) {
	s := newSample(t)
	want, err := MarshalAgent(s.agent)
	if err != nil {
		t.Fatal(err)
	}
	a := s.agent
	snapshot, _ := MarshalAgent(a)
	r := *a
	r.Tools = slices.Clone(a.Tools)
	slices.Reverse(r.Tools)
	for i := range r.Tools {
		r.Tools[i].Requires = slices.Clone(r.Tools[i].Requires)
		slices.Reverse(r.Tools[i].Requires)
		r.Tools[i].RuntimeEnabled = !r.Tools[i].RuntimeEnabled // derived: ignored
	}
	r.Blocks = slices.Clone(a.Blocks)
	slices.Reverse(r.Blocks)
	r.Matrix = slices.Clone(a.Matrix)
	slices.Reverse(r.Matrix)
	r.Runtime = append(slices.Clone(a.Runtime), a.Runtime...) // duplicates: listed once
	slices.Reverse(r.Runtime)
	r.Capabilities = Strings{Values: slices.Clone(a.Capabilities.Values)}
	slices.Reverse(r.Capabilities.Values)
	r.Skills = []Skill{a.Skills[0]}
	r.Skills[0].Files = slices.Clone(r.Skills[0].Files)
	slices.Reverse(r.Skills[0].Files)
	r.FormatVersion = "whatever"
	got, err := MarshalAgent(&r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("agent.json differs\ngot:\n%s\nwant:\n%s", got, want)
	}
	if again, _ := MarshalAgent(a); !bytes.Equal(again, snapshot) || a.Tools[0].Name != "weather" {
		t.Errorf("MarshalAgent modified its argument")
	}
}

func TestParseAgentRoundTrip(t *testing.T) {
	want, err := MarshalAgent(newSample(t).agent)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseAgent(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := MarshalAgent(a)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("round trip\ngot:\n%s\nwant:\n%s", got, want)
	}
	weather := a.Tools[len(a.Tools)-1]
	if weather.Name != "weather" || weather.Enabled.Runtime == nil || weather.Enabled.Runtime.Env != "WEATHER_ENABLED" ||
		a.Model.Name.Runtime == nil || a.Model.Provider.Value != "anthropic" {
		t.Errorf("parsed values\ngot:  %s %+v %+v\nwant: weather's enabled and the model name as runtime references", weather.Name, weather.Enabled, a.Model)
	}
}

func TestParseAgentRejects(t *testing.T) {
	tests := []struct {
		name, input string
		want        error
	}{
		{"no format_version", `{}`, ErrFormatVersion},
		{"other format_version", `{"format_version": "2"}`, ErrFormatVersion},
		{"not JSON", `{`, nil},
		{"reference without env", `{"format_version": "1", "model": {"provider": {"secret": true}}}`, nil},
		{"prompt of the wrong type", `{"format_version": "1", "prompt": 3}`, nil},
		{"prompt object of another source", `{"format_version": "1", "prompt": {"source": "file"}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseAgent([]byte(tt.input))
			if err == nil || a != nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Errorf("ParseAgent\ngot:  %v, %v\nwant: error %v", a, err, tt.want)
			}
		})
	}
}

func TestRuntimeRefJSON(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"plain", RuntimeRef{Env: "X"}, `{"env":"X"}`},
		{"default", RuntimeRef{Env: "X", Default: JSON(`"a<b"`)}, `{"env":"X","default":"a<b"}`},
		{"object default, canonical", RuntimeRef{Env: "X", Default: JSON(`{ "b": 1, "a": [true] }`)}, `{"env":"X","default":{"a":[true],"b":1}}`},
		{"null default", RuntimeRef{Env: "X", Default: JSON(`null`)}, `{"env":"X"}`},
		{"secret", RuntimeRef{Env: "T", Secret: true}, `{"env":"T","secret":true}`},
		{"secret default withheld", RuntimeRef{Env: "T", Secret: true, Default: JSON(`"hunter2"`)}, `{"env":"T","has_default":true,"secret":true}`},
		{"has_default ignored for plain", RuntimeRef{Env: "X", HasDefault: true}, `{"env":"X"}`},
		{"string literal", String{Value: "v"}, `"v"`},
		{"string reference", String{Value: "ignored", Runtime: &RuntimeRef{Env: "U"}}, `{"env":"U"}`},
		{"int", Int{Value: 3}, `3`},
		{"bool reference", Bool{Runtime: &RuntimeRef{Env: "ON", Default: JSON(`false`)}}, `{"env":"ON","default":false}`},
		{"nil list", Strings{}, `[]`},
		{"mixed list", Strings{Values: []String{{Value: "-y"}, {Runtime: &RuntimeRef{Env: "ARG"}}}}, `["-y",{"env":"ARG"}]`},
		{"list reference", Strings{Runtime: &RuntimeRef{Env: "CAPS"}}, `{"env":"CAPS"}`},
		{"text prompt", Prompt{Kind: PromptText, Text: "hi"}, `"hi"`},
		{"messages prompt", Prompt{Kind: PromptMessages}, `[]`},
		{"langfuse prompt", Prompt{Kind: PromptLangfuse, Langfuse: &Langfuse{PromptName: String{Value: "p"}, SecretKey: &String{Runtime: &RuntimeRef{Env: "LF", Secret: true, Default: JSON(`"sk"`)}}}},
			`{"source":"langfuse","prompt_name":"p","secret_key":{"env":"LF","has_default":true,"secret":true}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := marshalCanonical(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("JSON\ngot:  %s\nwant: %s", got, tt.want)
			}
			// And back: decoding then encoding again is stable.
			back := reflect.New(reflect.TypeOf(tt.in))
			if err := jsonUnmarshal(got, back.Interface()); err != nil {
				t.Fatal(err)
			}
			again, err := marshalCanonical(back.Elem().Interface())
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != tt.want {
				t.Errorf("JSON after a round trip\ngot:  %s\nwant: %s", again, tt.want)
			}
		})
	}
}

// TestSecretsNeverWritten checks that a secret's default appears nowhere
// in agent.json, wherever the reference sits.
func TestSecretsNeverWritten(t *testing.T) {
	const secret = "s3cr3t-default"
	sec := &RuntimeRef{Env: "TOKEN", Secret: true, Default: JSON(`"` + secret + `"`)}
	a := newSample(t).agent
	a.Runtime = append(a.Runtime, *sec)
	a.Model.Name = String{Runtime: sec}
	a.Prompt = &Prompt{Kind: PromptLangfuse, Langfuse: &Langfuse{PromptName: String{Value: "p"}, SecretKey: &String{Runtime: sec}}}
	a.Tools[0].Enabled = Bool{Runtime: sec}
	got, err := MarshalAgent(a)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(got, []byte(secret)) {
		t.Errorf("agent.json contains the secret default:\n%s", got)
	}
}

func TestMarshalAgentErrors(t *testing.T) {
	tests := []struct {
		name   string
		change func(a *Agent)
	}{
		{"invalid parameters", func(a *Agent) { a.Tools[0].Parameters = JSON(`{"type":`) }},
		{"two values", func(a *Agent) { a.Tools[0].Parameters = JSON(`{} {}`) }},
		{"unknown prompt kind", func(a *Agent) { a.Prompt = &Prompt{Kind: "file"} }},
		{"langfuse without settings", func(a *Agent) { a.Prompt = &Prompt{Kind: PromptLangfuse} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newSample(t).agent
			tt.change(a)
			if got, err := MarshalAgent(a); err == nil {
				t.Errorf("MarshalAgent\ngot:  %s\nwant: an error", got)
			}
		})
	}
	if _, err := MarshalAgent(nil); err == nil {
		t.Errorf("MarshalAgent(nil)\ngot:  no error\nwant: an error")
	}
}

func TestMarshalAgentKeepsCharacters(t *testing.T) {
	a := newSample(t).agent
	a.Description = `Compares a < b && b > c.`
	a.Tools[0].Parameters = JSON(`{"description":"x < y & z","type":"object"}`)
	got, err := MarshalAgent(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"description": "Compares a < b && b > c."`, `"description": "x < y & z"`} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("agent.json\ngot:  no %s\nwant: it, unescaped", want)
		}
	}
	if !bytes.HasSuffix(got, []byte("}\n")) || bytes.HasSuffix(got, []byte("\n\n")) {
		t.Errorf("agent.json does not end in exactly one newline")
	}
}
