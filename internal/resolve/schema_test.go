package resolve

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestCheckInputSchema(t *testing.T) {
	// A file a $ref names is never read: the schema fails to compile.
	ref := filepath.Join(t.TempDir(), "defs.json")
	if err := os.WriteFile(ref, []byte(`{"type":"string"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, schema string
		typeOptional bool
		want         string // "" for a valid schema
	}{
		{name: "object schema", schema: `{"type":"object","properties":{"n":{"type":"integer"}}}`},
		{name: "array", schema: `[1,2]`, want: "it is an array, not a JSON object"},
		{name: "string", schema: `"str"`, want: "it is a string, not a JSON object"},
		{name: "boolean schema", schema: `true`, want: "it is a boolean, not a JSON object"},
		{name: "null", schema: `null`, want: "it is null, not a JSON object"},
		{name: "string schema", schema: `{"type":"string"}`, want: `its "type" is "string", but a tool's arguments are an object`},
		{name: "type list", schema: `{"type":["object","null"]}`, want: `its "type" is ["object","null"]`},
		{name: "no type", schema: `{"properties":{}}`, want: `it has no "type"`},
		{name: "no type, optional", schema: `{"properties":{}}`, typeOptional: true},
		{name: "does not compile", schema: `{"type":"object","properties":{"a":{"type":5}}}`, want: `it is not a valid JSON Schema: at "/properties/a/type"`},
		{name: "$ref to a file", schema: `{"type":"object","properties":{"a":{"$ref":"file://` + filepath.ToSlash(ref) + `"}}}`, want: "it is not a valid JSON Schema"},
		{name: "not JSON", schema: `{"type":`, want: "it is not JSON"},
		// Patterns are ECMAScript regular expressions: a lookahead (zod
		// emits them) was refused while they were compiled as RE2.
		{name: "lookahead pattern", schema: `{"type":"object","properties":{"slug":{"type":"string","pattern":"^(?!-)[a-z0-9-]+$"}}}`},
		{name: "lookbehind and back reference", schema: `{"type":"object","patternProperties":{"(?<=x)y":{}},"properties":{"a":{"pattern":"^(a)\\1$"}}}`},
		{name: "RE2 named group", schema: `{"type":"object","properties":{"a":{"pattern":"^(?P<n>[0-9]+)$"}}}`},
		{name: "invalid pattern", schema: `{"type":"object","properties":{"a":{"pattern":"[a-"}}}`, want: "it is not a valid JSON Schema"},
		{name: "invalid patternProperties", schema: `{"type":"object","patternProperties":{"a{2,1}":{}}}`, want: "it is not a valid JSON Schema"},
		// math/big refuses an exponent over a million, and the JSON Schema
		// library crashed on what it then got (nil).
		{name: "multipleOf 1e-100000000", schema: `{"type":"object","properties":{"n":{"type":"number","multipleOf":1e-100000000}}}`,
			want: `it is beyond what agentform checks of a schema: at "/properties/n/multipleOf" a number has an exponent beyond ±1000`},
		{name: "minimum 1E+100000000", schema: `{"type":"object","properties":{"n":{"minimum":-1E+100000000}}}`, want: `at "/properties/n/minimum" a number has an exponent beyond ±1000`},
		{name: "exponent with leading zeros", schema: `{"type":"object","properties":{"n":{"minimum":1e-00000000000000000000999999}}}`, want: "a number has an exponent beyond ±1000"},
		{name: "exponents at the bound", schema: `{"type":"object","properties":{"n":{"minimum":1e-1000,"maximum":1E+1000,"multipleOf":0.01}}}`},
		{name: "a number of 1001 digits", schema: `{"type":"object","default":{"n":1` + strings.Repeat("0", 1000) + `}}`, want: `at "/default/n" a number has more than 1000 digits`},
		{name: "a number of 1000 digits", schema: `{"type":"object","default":{"n":0.` + strings.Repeat("0", 998) + `}}`},
		{name: "nested 64 levels", schema: nestedSchema(64)},
		{name: "nested 65 levels", schema: nestedSchema(65), want: "it is beyond what agentform checks of a schema: at \"" + strings.Repeat("/not", 64) + "\" it nests deeper than 64 levels"},
		{name: "4096 objects", schema: `{"type":"object","properties":{` + manyProperties(4094) + `}}`},
		{name: "4097 objects", schema: `{"type":"object","properties":{` + manyProperties(4095) + `}}`, want: "it holds more than 4096 objects and booleans (each a possible subschema)"},
		{name: "booleans count", schema: `{"type":"object","properties":{"a":true,` + manyProperties(4094) + `}}`, want: "it holds more than 4096 objects and booleans"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkInputSchema([]byte(tc.schema), tc.typeOptional)
			shown := tc.schema
			if len(shown) > 200 {
				shown = shown[:200] + "…"
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("checkInputSchema(%s)\ngot:  %v\nwant: no error", shown, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("checkInputSchema(%s)\ngot:  %v\nwant: an error containing %q", shown, err, tc.want)
			}
		})
	}
}

// nestedSchema is an object schema whose objects nest depth levels deep
// ("not" in "not").
func nestedSchema(depth int) string {
	return `{"type":"object"` + strings.Repeat(`,"not":{"type":"object"`, depth-1) + strings.Repeat(`}`, depth-1) + `}`
}

// manyProperties is n properties, each an empty schema: n objects.
func manyProperties(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%d":{}`, i)
	}
	return b.String()
}

// A crash of the JSON Schema library is an error saying whose bug it is,
// not a crash of agentform. Without the bounds this number crashed it.
func TestCompileSchemaLibraryPanic(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"type":"object","properties":{"n":{"multipleOf":1e-100000000}}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = compileChecked(doc, &patternClock{})
	want := "the JSON Schema library crashed (\"runtime error: invalid memory address or nil pointer dereference\"): this is a bug in that library"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("compileChecked\ngot:  %v\nwant: an error containing %q", err, want)
	}
	err = checkInputSchema([]byte(`{"type":"object","properties":{"n":{"multipleOf":1e-100000000}}}`), false)
	if err == nil || strings.Contains(err.Error(), "crashed") {
		t.Errorf("checkInputSchema: the bounds should refuse the number before the library sees it, got %v", err)
	}
	if got := libraryCrash("holds SECRET").Error(); strings.Contains(got, "SECRET") || !strings.Contains(got, "(a string)") {
		t.Errorf("libraryCrash quotes a value that is no runtime error: %s", got)
	}
}

// FuzzCheckInputSchema feeds any bytes, as an MCP server, a package or a
// lock entry could give them as a tool's input schema, through the checks
// plan makes of it. Nothing may panic or take long (the bounds keep the
// JSON Schema library's work small), and the answer is the same each time,
// with typeOptional only ever accepting more.
func FuzzCheckInputSchema(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object","properties":{"n":{"type":"number","multipleOf":1e-100000000}}}`,
		`{"type":"object","properties":{"n":{"type":"number","minimum":1.50,"maximum":1e308,"multipleOf":0.01}}}`,
		`{"type":"object","properties":{"slug":{"type":"string","pattern":"^(?!-)[a-z0-9-]+$"}},"required":["slug"]}`,
		`{"type":"object","$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","enum":[1e999,1E999]}`,
		`{"type":"object","patternProperties":{"^x-":{"type":"integer","maxLength":1e400}}}`,
		`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`,
		nestedSchema(64),
		nestedSchema(65),
		`[1, 2]`, `true`, `{"type":`, `{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		start := time.Now()
		err := checkInputSchema(schema, false)
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("checking a schema of %d bytes took %v", len(schema), took)
		}
		again := checkInputSchema(schema, false)
		if fmt.Sprint(err) != fmt.Sprint(again) {
			t.Fatalf("two checks of the same schema disagree:\n%v\n%v", err, again)
		}
		if err == nil {
			if optional := checkInputSchema(schema, true); optional != nil {
				t.Fatalf("accepted with type required, refused with type optional: %v", optional)
			}
		}
	})
}

// TestSchemaPatterns: a schema's patterns match as ECMAScript regular
// expressions do, and a pattern that backtracks without end fails the
// validation after PatternBudget, once for all the strings it is matched
// against, leaving the next validation its whole budget.
func TestSchemaPatterns(t *testing.T) {
	compile := func(schema string) *Schema {
		t.Helper()
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
		if err != nil {
			t.Fatal(err)
		}
		sch, err := CompileSchema(doc)
		if err != nil {
			t.Fatal(err)
		}
		return sch
	}
	validate := func(sch *Schema, args string) error {
		t.Helper()
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
		if err != nil {
			t.Fatal(err)
		}
		return sch.Validate(inst)
	}
	slug := compile(`{"type":"object","properties":{"slug":{"type":"string","pattern":"^(?!-)[a-z0-9-]+$"},"d":{"pattern":"^\\d{2}\\u0041$"}}}`)
	for args, valid := range map[string]bool{
		`{"slug":"a-b"}`: true, `{"slug":"-ab"}`: false, `{"slug":"A"}`: false,
		`{"d":"12A"}`: true, `{"d":"١٢A"}`: false, // \d is ASCII in ECMAScript
	} {
		if err := validate(slug, args); (err == nil) != valid {
			t.Errorf("%s: %v, want valid %v", args, err, valid)
		}
	}

	hostile := compile(`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","pattern":"^(a+)+$"}}}}`)
	bad := `"` + strings.Repeat("a", 40) + `!"`
	start := time.Now()
	err := validate(hostile, `{"l":[`+strings.Repeat(bad+",", 9)+bad+`]}`)
	took := time.Since(start)
	var slow *PatternTimeoutError
	if !errors.As(err, &slow) || strings.Contains(err.Error(), "aaaa") {
		t.Errorf("a catastrophic pattern\ngot:  %v\nwant: a PatternTimeoutError quoting no argument", err)
	}
	if took > PatternBudget+2*time.Second {
		t.Errorf("ten strings against a catastrophic pattern took %v, want about %v in all", took, PatternBudget)
	}
	if err := validate(hostile, `{"l":["aaa","a"]}`); err != nil {
		t.Errorf("after a validation that timed out, valid arguments: %v", err)
	}
}

func compileTestSchema(t *testing.T, schema string) (*Schema, error) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	return CompileSchema(doc)
}

func validateTestArgs(t *testing.T, sch *Schema, args string) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

// TestSchemaExpandedSize: a schema whose references fan out (each
// definition naming the next twice) is small but expands to 2^27
// subschemas, and each validation took a minute; it is refused when
// compiled. A recursive schema, for tree-shaped arguments, is not.
func TestSchemaExpandedSize(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","$ref":"#/$defs/d0","$defs":{`)
	for i := range 26 {
		fmt.Fprintf(&b, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	b.WriteString(`"d26":{"type":"object"}}}`)
	start := time.Now()
	_, err := compileTestSchema(t, b.String())
	var be *SchemaBoundError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "with its references expanded it is more than 100000 subschemas") || !strings.HasPrefix(be.At, "/$defs/d") {
		t.Errorf("a fan-out of references\ngot:  %v\nwant: a SchemaBoundError at a definition", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("refusing the fan-out took %v", took)
	}
	if err := checkInputSchema([]byte(b.String()), false); err == nil || !strings.Contains(err.Error(), "it is beyond what agentform checks of a schema") {
		t.Errorf("checkInputSchema of the fan-out: %v", err)
	}

	tree, err := compileTestSchema(t, `{"type":"object","$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name"]}}}`)
	if err != nil {
		t.Fatalf("a recursive tree schema: %v", err)
	}
	if err := validateTestArgs(t, tree, `{"name":"a","children":[{"name":"b","children":[{"name":"c"}]},{"name":"d"}]}`); err != nil {
		t.Errorf("a valid tree: %v", err)
	}
	if err := validateTestArgs(t, tree, `{"name":"a","children":[{"name":"b","children":[{"nom":"c"}]}]}`); err == nil {
		t.Errorf("a tree with a nameless node deep down: valid")
	}
	dynamic, err := compileTestSchema(t, `{"type":"object","$dynamicAnchor":"n","properties":{"kids":{"type":"array","items":{"$dynamicRef":"#n"}}}}`)
	if err != nil {
		t.Fatalf("a recursive schema by $dynamicRef: %v", err)
	}
	if err := validateTestArgs(t, dynamic, `{"kids":[{"kids":[{}]}]}`); err != nil {
		t.Errorf("a valid tree by $dynamicRef: %v", err)
	}
}

// TestSchemaPatternsConcurrent: calls validated at the same time against
// one schema each have their own PatternBudget. A valid call made while
// eight calls backtrack without end does not wait for them: it used to
// wait for each in turn (8 s).
func TestSchemaPatternsConcurrent(t *testing.T) {
	sch, err := compileTestSchema(t, `{"type":"object","properties":{"s":{"type":"string","pattern":"^(a+)+$"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	hostile := `{"s":"` + strings.Repeat("a", 30) + `!"}`
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(hostile))
	if err != nil {
		t.Fatal(err)
	}
	valid, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"s":"aaa"}`))
	if err != nil {
		t.Fatal(err)
	}
	hostileDone := make(chan error, 8)
	for range 8 {
		go func() { hostileDone <- sch.Validate(inst) }()
	}
	time.Sleep(50 * time.Millisecond) // the hostile calls are matching
	start := time.Now()
	if err := sch.Validate(valid); err != nil {
		t.Errorf("the valid call: %v", err)
	}
	took := time.Since(start)
	if len(hostileDone) > 0 {
		t.Errorf("a hostile call finished before the valid one")
	}
	if took > PatternBudget/2 {
		t.Errorf("the valid call took %v, waiting for the hostile ones", took)
	}
	for range 8 {
		var slow *PatternTimeoutError
		if err := <-hostileDone; !errors.As(err, &slow) || slow.Stack {
			t.Errorf("a hostile call: %v, want a PatternTimeoutError for time", err)
		}
	}
}

// TestSchemaPatternsLongArguments: valid long arguments match ordinary
// patterns; the engine's default backtracking stack refused them at
// ~100 KB, as if they had timed out. Past the bound on the stack the
// error says so, and quotes nothing of the arguments.
func TestSchemaPatternsLongArguments(t *testing.T) {
	sch, err := compileTestSchema(t, `{"type":"object","properties":{`+
		`"b64":{"type":"string","pattern":"^([0-9a-zA-Z+/]{4})*(([0-9a-zA-Z+/]{2}==)|([0-9a-zA-Z+/]{3}=))?$"},`+
		`"ab":{"type":"string","pattern":"^(a|b)*$"},`+
		`"words":{"type":"string","pattern":"^(\\w+\\s?)*$"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(make([]byte, 750_001))
	for name, args := range map[string]string{
		"base64 of 1 MB":   `{"b64":"` + b64 + `"}`,
		"(a|b)* of 100 KB": `{"ab":"` + strings.Repeat("ab", 50_000) + `"}`,
		"words of 100 KB":  `{"words":"` + strings.Repeat("word ", 20_000) + `"}`,
	} {
		if err := validateTestArgs(t, sch, args); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := validateTestArgs(t, sch, `{"b64":"`+b64[:len(b64)-1]+`"}`); err == nil || errors.As(err, new(*PatternTimeoutError)) {
		t.Errorf("invalid base64: %v, want the pattern not matched", err)
	}
	// The stack fills in well under PatternBudget on an idle machine, not
	// always on a busy one: the time may not count here.
	defer func(b time.Duration) { patternBudget = b }(patternBudget)
	patternBudget = 5 * time.Minute
	err = validateTestArgs(t, sch, `{"ab":"`+strings.Repeat("ab", 8<<20)+`"}`)
	var slow *PatternTimeoutError
	if !errors.As(err, &slow) || !strings.Contains(err.Error(), "backtracking memory") || strings.Contains(err.Error(), "abab") {
		t.Errorf("(a|b)* of 16 MiB\ngot:  %v\nwant: a PatternTimeoutError about the stack", err)
	}
}
