package serve

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/artifact"
)

func testEnv(vars map[string]string) *Env {
	return NewEnv(func(name string) (string, bool) { v, ok := vars[name]; return v, ok })
}

func TestEnvCheck(t *testing.T) {
	refs := []artifact.RuntimeRef{
		{Env: "MODEL", Default: artifact.JSON(`"claude"`)},
		{Env: "TOKEN", Secret: true, HasDefault: true},
		{Env: "URL"},
		{Env: "SET"},
	}
	err := testEnv(map[string]string{"SET": "x"}).Check(refs)
	var missing *MissingError
	if !errors.As(err, &missing) || strings.Join(missing.Vars, ",") != "TOKEN,URL" {
		t.Fatalf("Check: got %v, want TOKEN and URL missing (a secret's default is not in the artifact)", err)
	}
	if err := testEnv(map[string]string{"SET": "x", "TOKEN": "t", "URL": "u"}).Check(refs); err != nil {
		t.Errorf("Check with everything set: %v", err)
	}
}

func TestEnvValues(t *testing.T) {
	env := testEnv(map[string]string{"N": "42", "B": "true", "L": "a, b", "LJ": `["x","y"]`, "S": "secret-value", "BAD": "nope"})
	if n, err := env.Int(artifact.Int{Runtime: &artifact.RuntimeRef{Env: "N", Default: artifact.JSON("1")}}); err != nil || n != 42 {
		t.Errorf("Int: %d %v", n, err)
	}
	if n, err := env.Int(artifact.Int{Runtime: &artifact.RuntimeRef{Env: "UNSET", Default: artifact.JSON("7")}}); err != nil || n != 7 {
		t.Errorf("Int default: %d %v", n, err)
	}
	if b, err := env.Bool(artifact.Bool{Runtime: &artifact.RuntimeRef{Env: "B"}}); err != nil || !b {
		t.Errorf("Bool: %v %v", b, err)
	}
	for _, name := range []string{"L", "LJ"} {
		l, err := env.Strings(artifact.Strings{Runtime: &artifact.RuntimeRef{Env: name, Default: artifact.JSON(`[]`)}})
		if err != nil || len(l) != 2 {
			t.Errorf("Strings %s: %v %v", name, l, err)
		}
	}
	_, err := env.Int(artifact.Int{Runtime: &artifact.RuntimeRef{Env: "BAD", Default: artifact.JSON("1")}})
	if err == nil || strings.Contains(err.Error(), "nope") {
		t.Errorf("a bad number: got %v, want an error that names the variable, not its value", err)
	}
	cfg, err := env.Resolve(json.RawMessage(`{"token": {"env": "S", "secret": true}, "plain": {"env": "x", "other": 1}, "list": [{"env": "UNSET", "default": 3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(cfg, &got)
	if got["token"] != "secret-value" || got["list"].([]any)[0] != float64(3) || got["plain"].(map[string]any)["env"] != "x" {
		t.Errorf("Resolve: %s", cfg)
	}
	if _, err := env.Resolve(json.RawMessage(`{"k": {"env": "UNSET_SECRET", "secret": true}}`)); err == nil {
		t.Error("Resolve of an unset secret: no error")
	}
}
