package lockfile

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"strings"
	"testing"
)

// validates holds Validate to Parse: Validate accepts f exactly when
// f.Bytes() parses without errors. It holds Stored to Parse too: each
// entry of a file both accept is read back as its Stored copy.
func validates(t *testing.T, f *File) error {
	t.Helper()
	err := f.Validate()
	b := f.Bytes()
	parsed, diags := Parse(b, FileName)
	if (err == nil) != !diags.HasErrors() {
		t.Fatalf("Validate: %v\nParse of Bytes: %v\nwant: both to accept or both to refuse:\n%s", err, diags, b)
	}
	if err == nil && f != nil {
		// The entries Bytes writes: of names the same once canonical, one.
		for _, e := range entries(f.Tools, func(t *Tool) bool { return t.empty() }) {
			if got, want := parsed.Tools[e.name], e.value.Stored(); !reflect.DeepEqual(got, want) {
				t.Fatalf("entry %q read back:\n%#v\nStored:\n%#v\nwant: the same, parsing:\n%s", e.name, got, want, b)
			}
		}
	}
	return err
}

// FuzzValidate builds lockfiles from fuzzed strings, each field empty, a
// valid value or the fuzzed string as sel says, and holds Validate to
// Parse(Bytes()) on each.
func FuzzValidate(f *testing.F) {
	f.Add(uint64(0x9249_2492_4924_9249), uint64(0), uint8(0), "adder", "x", "y", "{}")
	f.Add(uint64(0x9249_2492_4924_9249), uint64(0), uint8(1), "py", "embedded", "static", "[1]")
	f.Add(uint64(0x9249_2492_4924_9249), uint64(0), uint8(2), "gh", "", "create_issue", `{"name":"a"}`)
	f.Add(uint64(0x9249_2492_4924_9249), uint64(0), uint8(3), "card", "1.0", "Planner", `{"name":"p"}`)
	f.Add(uint64(0x2492_4924_9249_2492), uint64(0), uint8(4), "", "h1:"+strings.Repeat("A", 43)+"=", "sha256:"+strings.Repeat("0", 64), "\xff")
	f.Add(uint64(0xffff_ffff_ffff_ffff), uint64(0), uint8(2), "e\u0301", "\u037e", "${x}", `{"a":"\u212b"}`)
	// Every field valid but one, fuzzed to an invalid value, for each
	// kind: the field alone decides.
	const allValid = 0x2492_4924_9249_2492 // 21 fields of 0b010
	for field := range 42 {
		sel := [2]uint64{allValid, allValid}
		sel[field/21] = sel[field/21]&^(7<<(3*(field%21))) | 1<<(3*(field%21))
		for kind := range 6 {
			for _, s2 := range []string{"", "y"} {
				f.Add(sel[0], sel[1], uint8(kind), "t", "x", s2, "{")
			}
		}
	}
	// Every field valid, fields of other kinds kept.
	for kind := range 6 {
		f.Add(uint64(allValid), uint64(allValid), uint8(kind|0x80), "t", "x", "y", "{")
	}
	f.Fuzz(func(t *testing.T, sel, sel2 uint64, kindSel uint8, name, s1, s2, s3 string) {
		field := 0
		// pick returns "" (0), the fuzzed string (1) or a valid value
		// (2 to 7), as the next three bits of sel (then sel2) say: most
		// fields are valid, so that one bad field is not hidden by
		// another.
		pick := func(valid, fuzzed string) string {
			bits := sel
			if field%42 >= 21 {
				bits = sel2
			}
			v := bits >> (3 * (field % 21)) & 7
			field++
			switch v {
			case 0:
				return ""
			case 1:
				return fuzzed
			}
			return valid
		}
		kinds := []string{kindJavaScript, kindPython, kindMCP, kindA2A, "", s1}
		tool := &Tool{
			Kind:          kinds[int(kindSel&0x7f)%len(kinds)],
			Source:        pick(h1(s1), s1),
			Deps:          pick(sha(s2), s2),
			Bundle:        pick(sha(s3), s3),
			Bundler:       pick("esbuild 0.28.2", s1),
			UVLock:        pick(sha(s1), s2),
			Interpreter:   pick(pythonInterpreters[len(s1)%2], s3),
			ServerName:    pick("server", s1),
			ServerVersion: pick("1.0.0", s2),
			Card:          pick(sha(s3), s3),
			CardName:      pick("card", s1),
			CardVersion:   pick("1", s2),
			CardJSON:      pick(`{"name":"card"}`, s3),
		}
		if f := pick("name", s1); f != "" {
			tool.HashedFields = []string{f, pick("description", s2)}
		}
		if sel2>>63 == 0 {
			key := pick("a", s2)
			tool.Served = map[string]string{key: pick(sha(key), s3), pick("b", s1): sha("b")}
			key = pick("a", s2)
			tool.Definitions = map[string]string{key: pick(`{"name":"a"}`, s3), s1: pick("{}", s2)}
		}
		// Fields of other kinds make every entry invalid; they stay
		// only when kindSel's top bit is set.
		if kindSel&0x80 == 0 {
			tool = onlyFieldsOf(tool)
		}
		// Each entry alone, then all of them.
		all := New()
		for _, lf := range []*File{
			{Tools: map[string]*Tool{name: tool}},
			{Tools: map[string]*Tool{pick("other", s2): {Kind: pick(kindJavaScript, s3), Source: pick(h1("o"), s1)}}},
			{Skills: map[string]*Skill{pick("skill", name): {Source: pick(h1(name), s3)}}},
		} {
			validates(t, lf)
			maps.Copy(all.Tools, lf.Tools)
			maps.Copy(all.Skills, lf.Skills)
		}
		validates(t, all)
	})
}

// onlyFieldsOf returns t with only the fields its kind has (all of them
// for an unknown kind).
func onlyFieldsOf(t *Tool) *Tool {
	o := &Tool{Kind: t.Kind}
	switch t.Kind {
	case kindJavaScript:
		o.Source, o.Deps, o.Bundle, o.Bundler = t.Source, t.Deps, t.Bundle, t.Bundler
	case kindPython:
		o.Source, o.UVLock, o.Interpreter = t.Source, t.UVLock, t.Interpreter
	case kindMCP:
		o.ServerName, o.ServerVersion, o.HashedFields, o.Served, o.Definitions = t.ServerName, t.ServerVersion, t.HashedFields, t.Served, t.Definitions
	case kindA2A:
		o.Card, o.CardName, o.CardVersion, o.CardJSON = t.Card, t.CardName, t.CardVersion, t.CardJSON
	default:
		return t
	}
	return o
}

// TestValidate: each File is refused by Validate, with a message naming
// the entry and the reason, and by Parse of its encoding; valid ones are
// accepted by both.
func TestValidate(t *testing.T) {
	js := func(mod func(*Tool)) *File {
		f := New()
		tool := &Tool{Kind: kindJavaScript, Source: h1("a"), Bundle: sha("a"), Bundler: "esbuild 0.28.2"}
		mod(tool)
		f.Tools["adder"] = tool
		return f
	}
	for _, tc := range []struct {
		name string
		file *File
		want string // "" means accepted
	}{
		{"nil", nil, ""},
		{"empty", New(), ""},
		{"full", fullFile(), ""},
		{"big", bigFile(), ""},
		{"an empty tool is left out", &File{Tools: map[string]*Tool{"": {}, "x": nil}}, ""},
		{"no kind", js(func(t *Tool) { t.Kind = "" }), `tool "adder": it has no kind`},
		{"bash", js(func(t *Tool) { t.Kind = "bash" }), `tool "adder": the kind is one of "a2a", "javascript", "mcp", "python"; got "bash"`},
		{"attribute of another kind", js(func(t *Tool) { t.CardName = "x" }), `tool "adder": a javascript entry has no "card_name" argument`},
		{"malformed source", js(func(t *Tool) { t.Source = "h1:abc" }), `tool "adder": the "source" value must be a dirhash "h1:" digest`},
		{"uppercase bundle", js(func(t *Tool) { t.Bundle = strings.ToUpper(sha("a")) }), `tool "adder": the "bundle" value must be "sha256:"`},
		{"unknown interpreter", &File{Tools: map[string]*Tool{"py": {Kind: kindPython, Interpreter: "pypy"}}}, `tool "py": the interpreter is one of "embedded", "static"; got "pypy"`},
		{"served digest", &File{Tools: map[string]*Tool{"gh": {Kind: kindMCP, Served: map[string]string{"a": "sha256:x"}}}}, `tool "gh": the "tools[\"a\"]" value must be`},
		{"served name empty", &File{Tools: map[string]*Tool{"gh": {Kind: kindMCP, Served: map[string]string{"": sha("a")}}}}, `tool "gh": a served tool name in "tools" is empty`},
		{"definition not JSON", &File{Tools: map[string]*Tool{"gh": {Kind: kindMCP, Definitions: map[string]string{"a": "{"}}}}, `tool "gh": the definition of "a" is not valid JSON`},
		{"card_json not JSON", &File{Tools: map[string]*Tool{"c": {Kind: kindA2A, CardJSON: "nope"}}}, `tool "c": card_json is not valid JSON`},
		{"tool name empty", &File{Tools: map[string]*Tool{"": {Kind: kindA2A, CardName: "x"}}}, `a tool entry has an empty name`},
		{"skill source", &File{Skills: map[string]*Skill{"s": {Source: sha("s")}}}, `skill "s": the "source" value must be a dirhash "h1:" digest`},
		{"skill name empty", &File{Skills: map[string]*Skill{"": {Source: h1("s")}}}, `a skill entry has an empty name`},
		// Strings are checked as Parse reads them back: canonical.
		{"a definition valid once invalid bytes are replaced", &File{Tools: map[string]*Tool{"gh": {Kind: kindMCP, Definitions: map[string]string{"a": "\"\xff\""}}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validates(t, tc.file)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got:  %v\nwant: accepted", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got:  %v\nwant: an error containing %q", err, tc.want)
			}
		})
	}
}

func BenchmarkValidate(b *testing.B) {
	f := bigFile()
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStored: entries whose strings change when stored (not NFC, an escape
// followed by a combining mark in JSON, hashed fields out of order, an
// empty map value) are read back as their Stored copies, which differ from
// them.
func TestStored(t *testing.T) {
	nfd := "cafe\u0301"
	def := `{"description":"` + nfd + " \\n\u0301" + `","name":"` + nfd + `"}`
	f := New()
	f.Tools["mcp"] = &Tool{Kind: kindMCP, ServerName: nfd, ServerVersion: "v\u212b",
		HashedFields: []string{"name", nfd, "description", "name"},
		Served:       map[string]string{nfd: sha("a"), "empty": ""},
		Definitions:  map[string]string{nfd: def}}
	f.Tools["a2a"] = &Tool{Kind: kindA2A, Card: sha("card"), CardName: nfd, CardVersion: "\u212b",
		CardJSON: `{"name":"` + nfd + "\\t\u0301" + `"}`}
	f.Tools["js"] = &Tool{Kind: kindJavaScript, Source: h1("js"), Bundle: sha("b"), Bundler: "esbuild 0.28.2"}
	if err := validates(t, f); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	for _, name := range []string{"mcp", "a2a"} {
		if reflect.DeepEqual(f.Tools[name].Stored(), f.Tools[name]) {
			t.Errorf("%s: Stored returned the entry unchanged; the test needs strings that change when stored", name)
		}
	}
	if js := f.Tools["js"]; !reflect.DeepEqual(js.Stored(), js) {
		t.Errorf("js: Stored changed an entry of ASCII strings:\n%#v", js.Stored())
	}
	if (*Tool)(nil).Stored() != nil {
		t.Error("Stored of nil is not nil")
	}
}

// FuzzExactJSON: a definition in ExactJSON's form is read back from the
// lockfile as the same text, which is the same JSON value as the
// definition it came from.
func FuzzExactJSON(f *testing.F) {
	for _, s := range []string{"plain", "caf\u00e9", "cafe\u0301", "\u212b", "日本語", "\n\u0301", "\"\u0301", "\xff", "🧮e\u0301", "\u0301"} {
		f.Add(s)
	}
	f.Add("<a & b>́")
	f.Fuzz(func(t *testing.T, s string) {
		// As MCP definitions are encoded: <, > and & as they are.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string]any{"description": s, "k" + s: []string{s}}); err != nil {
			t.Skip()
		}
		text := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		exact := ExactJSON(string(text))
		lf := New()
		lf.Tools["m"] = &Tool{Kind: kindMCP, ServerName: "s", Served: map[string]string{"a": sha("a")}, Definitions: map[string]string{"a": exact}}
		parsed, diags := Parse(lf.Bytes(), FileName)
		if diags.HasErrors() {
			t.Fatalf("got: %v\nwant: no errors", diags)
		}
		if got := parsed.Tools["m"].Definitions["a"]; got != exact {
			t.Fatalf("read back:\n%q\nwant:\n%q", got, exact)
		}
		var want, got any
		if err := json.Unmarshal(text, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(exact), &got); err != nil {
			t.Fatalf("ExactJSON gave no JSON: %v\n%q", err, exact)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ExactJSON changed the value:\ngot:  %#v\nwant: %#v", got, want)
		}
	})
}

// TestExactJSONReadable: text the lockfile keeps as it is stays readable;
// text it would normalise is escaped.
func TestExactJSONReadable(t *testing.T) {
	for in, want := range map[string]string{
		`{"d":"caf` + "\u00e9" + `"}`:          `{"d":"caf` + "\u00e9" + `"}`,
		`{"d":"日本語 🧮"}`:                        `{"d":"日本語 🧮"}`,
		`{"d":"cafe` + "\u0301" + `"}`:         `{"d":"cafe\u0301"}`,
		`{"d":"\n` + "\u0301" + ` caf\u00e9"}`: `{"d":"\n\u0301 caf\u00e9"}`,
		`{"d":"x\"` + "\u0301" + `"}`:          `{"d":"x\"\u0301"}`,
	} {
		if got := ExactJSON(in); got != want {
			t.Errorf("ExactJSON(%q)\ngot:  %q\nwant: %q", in, got, want)
		}
	}
}

// TestASCIIJSON: the escaped text is ASCII, decodes to the same value, and
// the lockfile keeps it byte for byte.
func TestASCIIJSON(t *testing.T) {
	in := `{"d":"Café ☕ 🚀 e\u0301","k\u00e9":[1,"\\u00e9"]}`
	out := ASCIIJSON(in)
	for _, c := range []byte(out) {
		if c >= 0x80 {
			t.Fatalf("got non-ASCII output: %s", out)
		}
	}
	var a, b any
	if json.Unmarshal([]byte(in), &a) != nil || json.Unmarshal([]byte(out), &b) != nil || !reflect.DeepEqual(a, b) {
		t.Errorf("decoded\ngot:  %v\nwant: %v", b, a)
	}
	lf := New()
	lf.Tools["p"] = &Tool{Kind: kindA2A, Card: sha("p"), CardJSON: out}
	back, diags := Parse(lf.Bytes(), FileName)
	if diags.HasErrors() || back.Tools["p"].CardJSON != out {
		t.Errorf("through the lockfile\ngot:  %q %v\nwant: %q", back.Tools["p"].CardJSON, diags, out)
	}
}
