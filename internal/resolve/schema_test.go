package resolve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkInputSchema([]byte(tc.schema), tc.typeOptional)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("checkInputSchema(%s)\ngot:  %v\nwant: no error", tc.schema, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("checkInputSchema(%s)\ngot:  %v\nwant: an error containing %q", tc.schema, err, tc.want)
			}
		})
	}
}
