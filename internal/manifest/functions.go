package manifest

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/agentform/agentform/internal/safefile"
)

// runtimeRefType is the capsule type that carries a *RuntimeRef through HCL
// evaluation. Capsules cannot be converted to strings, numbers or used in
// operators, so a runtime() value used anywhere but as a whole argument (or
// a whole element of a free-form object) is an evaluation error.
var runtimeRefType = cty.CapsuleWithOps("runtime value", reflect.TypeOf(RuntimeRef{}), &cty.CapsuleOps{
	GoString: func(v any) string {
		return fmt.Sprintf("runtime(%q)", v.(*RuntimeRef).Env)
	},
	TypeGoString: func(reflect.Type) string { return "manifest.runtimeRefType" },
})

func refFromValue(v cty.Value) (*RuntimeRef, bool) {
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() || !v.Type().Equals(runtimeRefType) {
		return nil, false
	}
	return v.EncapsulatedValue().(*RuntimeRef), true
}

// runtimeFunc implements runtime("ENV"[, default]).
var runtimeFunc = function.New(&function.Spec{
	Description: "A value supplied from the environment when the agent starts.",
	// env is dynamic so that runtime(true) is an error rather than the
	// environment variable "true".
	// A bare null has no type: without AllowDynamicType cty would not call
	// Impl and would give an unknown value, which dropped the attribute
	// without a word.
	Params: []function.Parameter{
		{Name: "env", Type: cty.DynamicPseudoType, AllowNull: true, AllowDynamicType: true},
	},
	VarParam: &function.Parameter{Name: "default", Type: cty.DynamicPseudoType, AllowNull: true, AllowDynamicType: true},
	Type:     function.StaticReturnType(runtimeRefType),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if len(args) > 2 {
			return cty.NilVal, function.NewArgErrorf(2, "runtime() takes an environment variable name and an optional default, got %d arguments", len(args))
		}
		if args[0].IsNull() {
			return cty.NilVal, function.NewArgErrorf(0, "the environment variable name must be a string, like runtime(\"API_URL\"), not null")
		}
		if args[0].Type() != cty.String {
			return cty.NilVal, function.NewArgErrorf(0, "the environment variable name must be a string, like runtime(\"API_URL\"), not %s", typeName(args[0].Type()))
		}
		env := args[0].AsString()
		if err := checkEnvName(env); err != nil {
			return cty.NilVal, function.NewArgError(0, err)
		}
		ref := &RuntimeRef{Env: env}
		if len(args) == 2 {
			if _, isRef := refFromValue(args[1]); isRef {
				return cty.NilVal, function.NewArgErrorf(1, "the default of runtime() must be a constant, not another runtime() value")
			}
			if args[1].IsNull() {
				return cty.NilVal, function.NewArgErrorf(1, "the default of runtime() cannot be null: leave it out, as in runtime(%q), for a value that must be set", env)
			}
			ref.Default = args[1]
		}
		return cty.CapsuleVal(runtimeRefType, ref), nil
	},
})

// secretFunc implements secret(runtime(...)).
var secretFunc = function.New(&function.Spec{
	Description: "Marks a runtime value as sensitive.",
	Params: []function.Parameter{
		{Name: "value", Type: cty.DynamicPseudoType, AllowNull: true, AllowDynamicType: true},
	},
	Type: function.StaticReturnType(runtimeRefType),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		ref, ok := refFromValue(args[0])
		if !ok {
			return cty.NilVal, function.NewArgErrorf(0, "secret() must wrap runtime(): a literal secret would be stored in the manifest; use secret(runtime(\"ENV\")) to read it when the agent starts")
		}
		out := *ref
		out.Secret = true
		return cty.CapsuleVal(runtimeRefType, &out), nil
	},
})

// buildTimeFunc stands in for runtime() and secret() where only build-time
// constants are allowed (locals).
func buildTimeFunc(name, where string) function.Function {
	return function.New(&function.Spec{
		VarParam: &function.Parameter{Name: "args", Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true},
		Type:     function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
			return cty.NilVal, fmt.Errorf("%s() cannot be used in %s: they are build-time constants; move the %s() call to the argument that uses the value", name, where, name)
		},
	})
}

func checkEnvName(env string) error {
	if env == "" {
		return fmt.Errorf("the environment variable name must not be empty")
	}
	for i, r := range env {
		ok := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("%q is not a valid environment variable name: use letters, digits and underscores, not starting with a digit", env)
		}
	}
	return nil
}

// maxFileFuncSize bounds what file() reads: prompts and skill texts, not
// data sets.
const maxFileFuncSize = 1 << 20

// fileFunc implements file("path"): the text of a file inside the
// workspace, read at build time.
func (d *decoder) fileFunc() function.Function {
	return function.New(&function.Spec{
		Description: "Reads a text file inside the workspace at build time.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			rel := args[0].AsString()
			if d.dir == "" {
				return cty.NilVal, fmt.Errorf("file() is not available here")
			}
			if rel == "" || filepath.IsAbs(rel) || strings.Contains(filepath.ToSlash(filepath.Clean(rel)), "../") || filepath.Clean(rel) == ".." {
				return cty.NilVal, function.NewArgErrorf(0, "file() takes a path relative to the workspace that stays inside it, not %q", rel)
			}
			// Both absolute: EvalSymlinks keeps a relative workspace
			// (".") relative, and a link leading to an absolute path is
			// then not "inside" it by any relative path (Rel fails).
			abs, err := filepath.Abs(d.dir)
			if err != nil {
				return cty.NilVal, function.NewArgErrorf(0, "resolving the workspace directory: %s", err)
			}
			root, err := filepath.EvalSymlinks(abs)
			if err != nil {
				return cty.NilVal, function.NewArgErrorf(0, "resolving the workspace directory: %s", err)
			}
			path, err := filepath.EvalSymlinks(filepath.Join(root, rel))
			if err != nil {
				return cty.NilVal, function.NewArgErrorf(0, "no file %q in the workspace", rel)
			}
			if inside, err := filepath.Rel(root, path); err != nil || inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)) {
				return cty.NilVal, function.NewArgErrorf(0, "%q leads outside the workspace (through a symbolic link)", rel)
			}
			b, err := safefile.Read(path, maxFileFuncSize)
			var refused *safefile.ReadError
			switch {
			case errors.Is(err, safefile.ErrNotRegular):
				return cty.NilVal, function.NewArgErrorf(0, "%q is not a regular file", rel)
			case errors.Is(err, safefile.ErrTooLarge) && errors.As(err, &refused):
				return cty.NilVal, function.NewArgErrorf(0, "%q %s for file()", rel, refused.Reason)
			case err != nil:
				return cty.NilVal, function.NewArgErrorf(0, "reading %q: %s", rel, err)
			}
			if !utf8.Valid(b) {
				return cty.NilVal, function.NewArgErrorf(0, "%q is not UTF-8 text", rel)
			}
			return cty.StringVal(string(b)), nil
		},
	})
}
