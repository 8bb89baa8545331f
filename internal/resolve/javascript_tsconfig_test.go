package resolve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSTsconfigConfined: a package's tsconfig.json may extend files
// inside the package (by path, with or without ".json", or by a package
// name in its own node_modules, in a chain or an array), and nothing
// outside it: esbuild reads the whole chain, and a file outside would
// change the bundle without changing the package's hash.
func TestJSTsconfigConfined(t *testing.T) {
	write := func(t *testing.T, root string, files map[string]string) {
		t.Helper()
		for name, data := range files {
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	const base = `{"compilerOptions": {"jsx": "react"}}`
	tests := []struct {
		name  string
		files map[string]string
		want  string // "" for confined, else a part of the error
	}{
		{"no extends", map[string]string{"pkg/tsconfig.json": `{"compilerOptions": {}}`}, ""},
		{"comments and trailing commas", map[string]string{"pkg/tsconfig.json": "{\n  // c\n  /* d */ \"extends\": \"./base.json\",\n}\n", "pkg/base.json": base}, ""},
		{"without .json", map[string]string{"pkg/tsconfig.json": `{"extends": "./conf/base"}`, "pkg/conf/base.json": base}, ""},
		{"chain inside", map[string]string{"pkg/tsconfig.json": `{"extends": "./a.json"}`, "pkg/a.json": `{"extends": "./b.json"}`, "pkg/b.json": base}, ""},
		{"path in node_modules", map[string]string{"pkg/tsconfig.json": `{"extends": "./node_modules/@tsconfig/strictest/tsconfig.json"}`, "pkg/node_modules/@tsconfig/strictest/tsconfig.json": base}, ""},
		// A package name is looked up by esbuild in ways that can leave
		// the package (node_modules above it, Yarn Plug'n'Play, a config
		// package's exports): refused, with the path to write instead.
		{"package name", map[string]string{"pkg/tsconfig.json": `{"extends": "@tsconfig/strictest/tsconfig.json"}`, "pkg/node_modules/@tsconfig/strictest/tsconfig.json": base}, `write the path of the file in the package's node_modules instead, such as "./node_modules/@tsconfig/strictest/tsconfig.json"`},
		{"package directory", map[string]string{"pkg/tsconfig.json": `{"extends": "cfg"}`, "pkg/node_modules/cfg/tsconfig.json": base}, `it extends the package "cfg"`},
		{"outside", map[string]string{"pkg/tsconfig.json": `{"extends": "../base.json"}`, "base.json": base}, "which is outside the package"},
		{"outside later in the chain", map[string]string{"pkg/tsconfig.json": `{"extends": "./a.json"}`, "pkg/a.json": `{"extends": "../base.json"}`, "base.json": base}, "which is outside the package"},
		{"outside in an array", map[string]string{"pkg/tsconfig.json": `{"extends": ["./a.json", "../base.json"]}`, "pkg/a.json": base, "base.json": base}, "which is outside the package"},
		{"package only above", map[string]string{"pkg/tsconfig.json": `{"extends": "cfg/tsconfig.json"}`, "node_modules/cfg/tsconfig.json": base}, `it extends the package "cfg/tsconfig.json"`},
		{"package name later in the chain", map[string]string{"pkg/tsconfig.json": `{"extends": "./node_modules/foo/tsconfig.json"}`, "pkg/node_modules/foo/tsconfig.json": `{"extends": "bar"}`, "pkg/node_modules/node_modules/bar/tsconfig.json": base}, `it extends the package "bar"`},
		{"not a string", map[string]string{"pkg/tsconfig.json": `{"extends": 5}`}, `"extends" is not a string`},
		{"not an object", map[string]string{"pkg/tsconfig.json": `[1]`}, "not a JSON object"},
		{"not JSON", map[string]string{"pkg/tsconfig.json": `{"extends": `}, "is not JSON"},
		{"code is not run", map[string]string{"pkg/tsconfig.json": `{"extends": (function(){ while(true){} })()}`}, `"extends" is not a string`},
		{"dot names tsconfig.json", map[string]string{"pkg/sub/tsconfig.json": base, "pkg/tsconfig.json": `{"extends": "./sub/x.json"}`, "pkg/sub/x.json": `{"extends": "."}`}, ""},
		{"missing", map[string]string{"pkg/tsconfig.json": `{"extends": "./nope.json"}`}, `it extends "./nope.json", which does not exist`},
		{"a directory", map[string]string{"pkg/tsconfig.json": `{"extends": "./conf"}`, "pkg/conf/x": ""}, "which is not a file"},
		{"config package with a map", map[string]string{"pkg/tsconfig.json": `{"extends": "cfg"}`, "pkg/node_modules/cfg/package.json": `{"tsconfig": "../../../outside.json"}`, "pkg/node_modules/cfg/tsconfig.json": base, "outside.json": base}, `it extends the package "cfg"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, tt.files)
			pkg := filepath.Join(root, "pkg")
			err := jsTsconfigConfined(pkg, filepath.Join(pkg, "tsconfig.json"))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got:  %v\nwant: confined", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got:  %v\nwant: an error with %q", err, tt.want)
			}
		})
	}
	t.Run("symbolic link out", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, map[string]string{"pkg/tsconfig.json": `{"extends": "./base.json"}`, "base.json": base})
		if err := os.Symlink(filepath.Join(root, "base.json"), filepath.Join(root, "pkg", "base.json")); err != nil {
			t.Skip("no symbolic links:", err)
		}
		pkg := filepath.Join(root, "pkg")
		if err := jsTsconfigConfined(pkg, filepath.Join(pkg, "tsconfig.json")); err == nil || !strings.Contains(err.Error(), "outside the package") {
			t.Errorf("got:  %v\nwant: outside the package", err)
		}
	})
}

// TestResolveJavaScriptTsconfigOutside: a package whose tsconfig.json
// extends a file outside it is refused at its source attribute.
func TestResolveJavaScriptTsconfigOutside(t *testing.T) {
	root := t.TempDir()
	w := newJSWorkspace(t, root, "ts-tool", "tool", "  export = \"adder\"\n")
	if err := os.WriteFile(filepath.Join(root, "base.json"), []byte(`{"compilerOptions": {"jsxFactory": "h"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "tools", "tool", "tsconfig.json"), []byte("{\n  \"extends\": \"../../base.json\",\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, diags := ResolveJavaScript(context.Background(), w.req)
	jsWantDiag(t, diags, "Invalid tsconfig.json", w.sourceLine, "tools/tool/tsconfig.json: it extends", "which is outside the package")
}
