package resolve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// jsTsconfigMaxExtends bounds a chain of tsconfig.json files extending
// each other.
const jsTsconfigMaxExtends = 16

// jsTsconfigConfined checks that the tsconfig.json at path, and every
// file it extends, is inside the package directory pkgDir: esbuild reads
// the whole "extends" chain, and a file outside the package would change
// the bundle without changing the package's hash (so a plan served from
// the resolution cache, or the lockfile, would not notice). It returns
// the first file outside, or an error saying why the chain cannot be
// read.
func jsTsconfigConfined(pkgDir, path string) error {
	root, err := filepath.EvalSymlinks(pkgDir)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for depth := 0; ; depth++ {
		if depth > jsTsconfigMaxExtends {
			return fmt.Errorf("its \"extends\" chain is longer than %d files", jsTsconfigMaxExtends)
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return err
		}
		if !within(root, real) {
			return fmt.Errorf("it extends %s, which is outside the package: a file outside the package would change the bundle without changing the package's hash; copy what it sets into the package", path)
		}
		if seen[real] {
			return nil // esbuild reports the cycle
		}
		seen[real] = true
		src, err := os.ReadFile(real)
		if err != nil {
			return err
		}
		extends, err := jsTsconfigExtends(src)
		if err != nil {
			return fmt.Errorf("%s cannot be read: %w", path, err)
		}
		if len(extends) == 0 {
			return nil
		}
		// Every file of an array is read; each is checked in turn.
		for _, ext := range extends[1:] {
			next, err := jsTsconfigResolve(root, filepath.Dir(real), ext)
			if err != nil {
				return err
			}
			if err := jsTsconfigConfined(pkgDir, next); err != nil {
				return err
			}
		}
		if path, err = jsTsconfigResolve(root, filepath.Dir(real), extends[0]); err != nil {
			return err
		}
	}
}

// jsTsconfigResolve finds the file an "extends" value names, from the
// directory of the tsconfig.json that holds it: a path (relative or
// absolute), with ".json" added when the file has none; or a package
// name, looked up in the node_modules directories from there up to the
// package root only (one above it would be outside).
func jsTsconfigResolve(root, dir, ext string) (string, error) {
	candidates := func(p string) []string {
		out := []string{p}
		if filepath.Ext(p) != ".json" {
			out = append(out, p+".json")
		}
		return append(out, filepath.Join(p, "tsconfig.json"))
	}
	var tries []string
	if filepath.IsAbs(ext) || strings.HasPrefix(ext, "./") || strings.HasPrefix(ext, "../") || ext == "." || ext == ".." {
		p := ext
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, filepath.FromSlash(ext))
		}
		tries = candidates(p)
	} else {
		for d := dir; ; d = filepath.Dir(d) {
			tries = append(tries, candidates(filepath.Join(d, "node_modules", filepath.FromSlash(ext)))...)
			if d == root || !within(root, d) || filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, p := range tries {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	if len(tries) > 0 && !filepath.IsAbs(ext) && !strings.HasPrefix(ext, ".") {
		return "", fmt.Errorf("it extends %q, which is not installed in the package's node_modules: one outside the package would change the bundle without changing the package's hash", ext)
	}
	// Outside the package, or missing: said as outside when it is.
	return tries[0], nil
}

// jsTsconfigExtends returns the "extends" of a tsconfig.json: JSON with
// comments and trailing commas, read as a JavaScript object literal with
// goja's parser (nothing is run). A file whose "extends" is not a string
// or an array of strings is refused.
func jsTsconfigExtends(src []byte) ([]string, error) {
	prog, err := parser.ParseFile(nil, "tsconfig.json", "("+string(src)+"\n)", 0)
	if err != nil {
		return nil, errors.New("it is not JSON (comments and trailing commas aside)")
	}
	if len(prog.Body) != 1 {
		return nil, errors.New("it is not one JSON object")
	}
	stmt, ok := prog.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return nil, errors.New("it is not one JSON object")
	}
	obj, ok := stmt.Expression.(*ast.ObjectLiteral)
	if !ok {
		return nil, errors.New("it is not a JSON object")
	}
	for _, p := range obj.Value {
		kp, ok := p.(*ast.PropertyKeyed)
		if !ok || kp.Computed {
			continue
		}
		key, ok := kp.Key.(*ast.StringLiteral)
		if !ok || key.Value.String() != "extends" {
			continue
		}
		switch v := kp.Value.(type) {
		case *ast.StringLiteral:
			return []string{v.Value.String()}, nil
		case *ast.ArrayLiteral:
			var out []string
			for _, e := range v.Value {
				s, ok := e.(*ast.StringLiteral)
				if !ok {
					return nil, errors.New(`its "extends" is not a string or an array of strings`)
				}
				out = append(out, s.Value.String())
			}
			return out, nil
		default:
			return nil, errors.New(`its "extends" is not a string or an array of strings`)
		}
	}
	return nil, nil
}
