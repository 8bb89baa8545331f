package serve

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzContextPatch: any state update either is refused or touches only
// /context/, and applying an accepted one never panics.
func FuzzContextPatch(f *testing.F) {
	for _, seed := range []string{
		`[{"op": "add", "path": "/context/a", "value": 1}]`,
		`[{"op": "move", "from": "/context/a", "path": "/context/b"}]`,
		`[{"op": "add", "path": "/messages/0", "value": 1}]`,
		`[{"op": "test", "path": "/context/a", "value": {"x": [1, 2]}}]`,
		`{}`, `null`, `[]`, `[{}]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		patch, err := contextPatch(json.RawMessage(raw))
		if err != nil {
			return
		}
		for _, op := range patch {
			for _, field := range []string{"path", "from"} {
				if p, ok := op[field]; ok && p != nil {
					var s string
					if json.Unmarshal(*p, &s) == nil && !strings.HasPrefix(s, "/context/") {
						t.Fatalf("accepted %s %q outside /context/", field, s)
					}
				}
			}
		}
		if out, err := patch.Apply([]byte(`{"context":{"a":1,"l":[1,2]},"messages":["m"]}`)); err == nil {
			var v map[string]json.RawMessage
			if json.Unmarshal(out, &v) != nil || string(v["messages"]) != `["m"]` {
				t.Fatalf("an accepted patch changed the messages: %s", out)
			}
		}
	})
}

// FuzzResolve: resolving references in any JSON never panics and never
// invents a value for a secret.
func FuzzResolve(f *testing.F) {
	for _, seed := range []string{
		`{"a": {"env": "SET"}}`, `[{"env": "UNSET", "default": [1]}]`, `{"env": "SECRET", "secret": true}`,
		`{"env": 1}`, `"plain"`, `{"x": {"env": "SET", "default": {"deep": true}, "extra": 1}}`,
	} {
		f.Add(seed)
	}
	env := testEnv(map[string]string{"SET": "value", "N": "12"})
	f.Fuzz(func(t *testing.T, raw string) {
		out, err := env.Resolve(json.RawMessage(raw))
		if err == nil && !json.Valid(out) {
			t.Fatalf("Resolve(%s) = %s, not JSON", raw, out)
		}
	})
}

// FuzzValidateArgs: schema validation of any arguments never panics and
// never quotes a string value in its error.
func FuzzValidateArgs(f *testing.F) {
	sch, err := compileSchema([]byte(`{"type":"object","properties":{"code":{"type":"string","pattern":"^[0-9]+$","format":"email"},"n":{"enum":[1,2]}},"required":["code"],"additionalProperties":false}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(`{"code": "12"}`)
	f.Add(`{"code": "zzSECRETzz", "n": 3}`)
	f.Add(`{"other": "zzSECRETzz"}`)
	f.Add(`{"n": 1e-100000000, "code": "1"}`)
	f.Fuzz(func(t *testing.T, raw string) {
		err := validateArgs(sch, json.RawMessage(raw))
		if err != nil && strings.Contains(raw, "zzSECRETzz") && strings.Contains(err.Error(), "zzSECRETzz") && !strings.Contains(raw, `"zzSECRETzz":`) {
			t.Fatalf("the error quotes a value: %v", err)
		}
	})
}
