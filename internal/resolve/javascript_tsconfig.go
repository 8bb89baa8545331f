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
		if err := jsTsconfigInside(root, path); err != nil {
			return err
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return err
		}
		if seen[real] {
			return nil // esbuild reports the cycle
		}
		seen[real] = true
		src, err := readInput(real)
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
			next, err := jsTsconfigResolve(filepath.Dir(real), ext)
			if err != nil {
				return err
			}
			if err := jsTsconfigConfined(pkgDir, next); err != nil {
				return err
			}
		}
		if path, err = jsTsconfigResolve(filepath.Dir(real), extends[0]); err != nil {
			return err
		}
	}
}

// jsTsconfigResolve finds the file an "extends" value names, from the
// directory of the tsconfig.json that holds it, as esbuild reads it: a
// path (relative or absolute) is that file, or that path with ".json"
// added when it has none and is not a file ("." and ".." name the
// tsconfig.json there). A package name is refused.
func jsTsconfigResolve(dir, ext string) (string, error) {
	isFile := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	missing := func() (string, error) {
		return "", fmt.Errorf("it extends %q, which does not exist", ext)
	}
	if filepath.IsAbs(ext) || strings.HasPrefix(ext, "./") || strings.HasPrefix(ext, "../") || ext == "." || ext == ".." {
		p := ext
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, filepath.FromSlash(ext))
		}
		if ext == "." || ext == ".." {
			p = filepath.Join(p, "tsconfig.json")
		}
		switch {
		case isFile(p):
			return p, nil
		case !strings.HasSuffix(p, ".json") && isFile(p+".json"):
			return p + ".json", nil
		}
		if _, err := os.Lstat(p); err == nil {
			return "", fmt.Errorf("it extends %q, which is not a file", ext)
		}
		return missing()
	}
	// A package name: esbuild looks it up through mechanisms agentform
	// would have to follow exactly (node_modules directories above the
	// package, Yarn Plug'n'Play manifests anywhere above it, a config
	// package's "exports" and "tsconfig" fields), any of which can lead
	// outside the package. The path of the file is as short to write.
	return "", fmt.Errorf("it extends the package %q, which esbuild looks up in ways that can leave the package (node_modules above it, Yarn Plug'n'Play): write the path of the file in the package's node_modules instead, such as \"./node_modules/%s/tsconfig.json\"", ext, strings.TrimSuffix(ext, "/tsconfig.json"))
}

// jsTsconfigInside reports a file that is not inside the package root
// once its symbolic links are resolved.
func jsTsconfigInside(root, path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	if !within(root, real) {
		return fmt.Errorf("it extends %s, which is outside the package: a file outside the package would change the bundle without changing the package's hash; copy what it sets into the package", path)
	}
	return nil
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
