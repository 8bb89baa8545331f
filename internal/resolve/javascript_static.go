package resolve

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"sync"
	"unicode/utf16"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/ftoa"
	"github.com/dop251/goja/token"
	"github.com/dop251/goja/unistring"
)

// Reading a definition without running it.
//
// Most tools' bundles are nothing but declarations: functions, and
// variables initialised with literals, functions, and earlier variables
// (the tool object itself). Evaluating such a module cannot fail, loop or
// reach anything, and what the prelude's reader would report is fixed by
// its syntax tree, so jsStaticRead reads it from there; for 200 tools that
// spares a fresh runtime, the prelude, the run and the reader, most of the
// cost of reading them. Anything else declines (ok false), and the script
// is evaluated as before: any other statement (an expression, a class,
// a loop, an import helper call), a reference to a global or to a binding
// not yet initialised, a getter, a spread, a computed key, __proto__, a
// toJSON method, a BigInt, a string with an unpaired surrogate, a declared
// name the runtime already defines (or the helper's), a name declared
// twice, an export named __esModule (the helper defines it) or twice, a
// helper call jsScript would not write, or an export that is not an object
// literal. A declined read costs one walk of the top-level statements,
// stopping at the first it cannot take.
//
// What it reports is what evaluation reports, field for field: a test
// (TestJSStaticReadMatchesEvaluation) and a fuzz target compare the two on
// generated modules. Early errors are goja's: the caller compiles the
// program before it takes a static read, as evaluation would.

// jsStaticFunction is a function value; JSON leaves it out.
type jsStaticFunction struct{}

// jsStaticUndefined is undefined.
type jsStaticUndefined struct{}

// jsStaticObject is an object literal, or a regular expression (regexp set),
// which JSON writes as {}.
type jsStaticObject struct {
	props  map[string]any
	regexp bool
}

// get is o[key] for one of the keys the reader reads, none of which
// Object.prototype has.
func (o *jsStaticObject) get(key string) any {
	if v, ok := o.props[key]; ok {
		return v
	}
	return jsStaticUndefined{}
}

// jsStaticArray is an array literal.
type jsStaticArray []any

// jsStaticEnv holds the module's top-level bindings while it is read.
type jsStaticEnv struct {
	functions map[unistring.String]bool
	values    map[unistring.String]any
}

// jsStaticRead reads export from prog, a script from jsScript whose first
// statement calls helper, as the prelude's reader would after evaluating it.
func jsStaticRead(prog *ast.Program, helper, export string) (r jsRead, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if len(prog.Body) == 0 {
		return jsRead{}, false
	}
	exports, ok := jsStaticExports(prog.Body[0], helper)
	if !ok {
		return jsRead{}, false
	}
	env := &jsStaticEnv{functions: map[unistring.String]bool{}, values: map[unistring.String]any{}}
	reserved := jsGlobalNames()
	declared := map[unistring.String]bool{}
	declare := func(name unistring.String) bool {
		if declared[name] || reserved[name.String()] || name.String() == helper {
			return false
		}
		declared[name] = true
		return true
	}
	body := prog.Body[1:]
	for _, st := range body {
		switch st := st.(type) {
		case *ast.FunctionDeclaration:
			if st.Function.Name == nil || !declare(st.Function.Name.Name) {
				return jsRead{}, false
			}
			env.functions[st.Function.Name.Name] = true
		case *ast.VariableStatement:
			for _, b := range st.List {
				if id, isID := b.Target.(*ast.Identifier); !isID || !declare(id.Name) {
					return jsRead{}, false
				}
			}
		case *ast.LexicalDeclaration:
			for _, b := range st.List {
				if id, isID := b.Target.(*ast.Identifier); !isID || !declare(id.Name) {
					return jsRead{}, false
				}
			}
		case *ast.EmptyStatement:
		default:
			return jsRead{}, false
		}
	}
	for _, st := range body {
		var list []*ast.Binding
		switch st := st.(type) {
		case *ast.VariableStatement:
			list = st.List
		case *ast.LexicalDeclaration:
			list = st.List
		}
		for _, b := range list {
			var v any = jsStaticUndefined{}
			if b.Initializer != nil {
				if v, ok = env.value(b.Initializer); !ok {
					return jsRead{}, false
				}
			}
			env.values[b.Target.(*ast.Identifier).Name] = v
		}
	}

	names := make([]string, len(exports))
	var local unistring.String
	found := false
	for i, e := range exports {
		names[i] = e.exported
		if e.exported == export {
			local, found = e.local, true
		}
	}
	tool, isObject := env.values[local].(*jsStaticObject)
	if !found || !isObject || tool.regexp {
		return jsRead{}, false
	}
	r = jsRead{ExportsType: "object", Names: names, Found: true, ToolType: "object"}
	r.Name = jsStaticField(tool.get("name"))
	r.Description = jsStaticField(tool.get("description"))
	p := tool.get("parameters")
	r.Parameters = &jsParameterField{jsField: *jsStaticField(p)}
	if r.Parameters.Type == "object" {
		var buf bytes.Buffer
		if !jsStaticJSON(&buf, p) {
			return jsRead{}, false
		}
		s := buf.String()
		r.Parameters.JSON = &s
	}
	return r, true
}

// jsStaticExport is one pair of jsScript's helper call.
type jsStaticExport struct {
	exported string
	local    unistring.String
}

// jsStaticExports reads the pairs of jsScript's helper call,
// helper(["exported", function () { return local; }, ...]).
func jsStaticExports(st ast.Statement, helper string) ([]jsStaticExport, bool) {
	es, ok := st.(*ast.ExpressionStatement)
	if !ok {
		return nil, false
	}
	call, ok := es.Expression.(*ast.CallExpression)
	if !ok || len(call.ArgumentList) != 1 {
		return nil, false
	}
	if callee, ok := call.Callee.(*ast.Identifier); !ok || callee.Name.String() != helper {
		return nil, false
	}
	pairs, ok := call.ArgumentList[0].(*ast.ArrayLiteral)
	if !ok || len(pairs.Value)%2 != 0 {
		return nil, false
	}
	var out []jsStaticExport
	seen := map[string]bool{}
	for i := 0; i < len(pairs.Value); i += 2 {
		name, ok := pairs.Value[i].(*ast.StringLiteral)
		if !ok {
			return nil, false
		}
		// The helper defines __esModule itself; defining it, or any name,
		// twice throws.
		exported := name.Value.String()
		if exported == "__esModule" || seen[exported] {
			return nil, false
		}
		seen[exported] = true
		fn, ok := pairs.Value[i+1].(*ast.FunctionLiteral)
		if !ok || fn.Async || fn.Generator || fn.Body == nil || len(fn.Body.List) != 1 ||
			fn.ParameterList == nil || len(fn.ParameterList.List) != 0 || fn.ParameterList.Rest != nil {
			return nil, false
		}
		ret, ok := fn.Body.List[0].(*ast.ReturnStatement)
		if !ok {
			return nil, false
		}
		id, ok := ret.Argument.(*ast.Identifier)
		if !ok {
			return nil, false
		}
		out = append(out, jsStaticExport{exported: exported, local: id.Name})
	}
	return out, true
}

// value is what evaluating e gives, when that is certain to run no code
// and not to fail.
func (env *jsStaticEnv) value(e ast.Expression) (any, bool) {
	switch e := e.(type) {
	case *ast.StringLiteral:
		return jsStaticString(e.Value)
	case *ast.NumberLiteral:
		switch n := e.Value.(type) {
		case int64:
			return float64(n), true
		case float64:
			return n, true
		}
		return nil, false // a BigInt: JSON refuses it
	case *ast.BooleanLiteral:
		return e.Value, true
	case *ast.NullLiteral:
		return nil, true
	case *ast.RegExpLiteral:
		// Compiling the program checked the pattern.
		return &jsStaticObject{regexp: true}, true
	case *ast.TemplateLiteral:
		if e.Tag != nil || len(e.Expressions) != 0 || len(e.Elements) != 1 || !e.Elements[0].Valid {
			return nil, false
		}
		return jsStaticString(e.Elements[0].Parsed)
	case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
		return jsStaticFunction{}, true
	case *ast.Identifier:
		if env.functions[e.Name] {
			return jsStaticFunction{}, true
		}
		v, ok := env.values[e.Name]
		return v, ok
	case *ast.UnaryExpression:
		if e.Postfix {
			return nil, false
		}
		v, ok := env.value(e.Operand)
		if !ok {
			return nil, false
		}
		switch e.Operator {
		case token.VOID:
			return jsStaticUndefined{}, true
		case token.NOT:
			return !jsStaticTruthy(v), true
		case token.MINUS, token.PLUS:
			n, isNumber := v.(float64)
			if !isNumber {
				return nil, false
			}
			if e.Operator == token.MINUS {
				n = -n
			}
			return n, true
		}
		return nil, false
	case *ast.ArrayLiteral:
		out := make(jsStaticArray, len(e.Value))
		for i, el := range e.Value {
			if el == nil {
				out[i] = jsStaticUndefined{}
				continue
			}
			if _, spread := el.(*ast.SpreadElement); spread {
				return nil, false
			}
			v, ok := env.value(el)
			if !ok {
				return nil, false
			}
			out[i] = v
		}
		return out, true
	case *ast.ObjectLiteral:
		obj := &jsStaticObject{props: make(map[string]any, len(e.Value))}
		for _, p := range e.Value {
			key, v, ok := env.property(p)
			if !ok {
				return nil, false
			}
			obj.props[key] = v
		}
		return obj, true
	}
	return nil, false
}

// property is the key and value of one property of an object literal.
func (env *jsStaticEnv) property(p ast.Property) (string, any, bool) {
	switch p := p.(type) {
	case *ast.PropertyShort:
		if p.Initializer != nil || p.Name.Name == "__proto__" {
			return "", nil, false
		}
		v, ok := env.value(&p.Name)
		return p.Name.Name.String(), v, ok
	case *ast.PropertyKeyed:
		if p.Computed {
			return "", nil, false
		}
		var key string
		switch k := p.Key.(type) {
		case *ast.StringLiteral:
			s, ok := jsStaticString(k.Value)
			if !ok {
				return "", nil, false
			}
			key = s.(string)
		case *ast.NumberLiteral:
			n, ok := env.value(k)
			if !ok {
				return "", nil, false
			}
			key = jsNumberString(n.(float64))
		default:
			return "", nil, false
		}
		// __proto__: sets the prototype, a getter or setter runs code.
		if key == "__proto__" {
			return "", nil, false
		}
		switch p.Kind {
		case ast.PropertyKindValue:
			v, ok := env.value(p.Value)
			return key, v, ok
		case ast.PropertyKindMethod:
			return key, jsStaticFunction{}, true
		}
	}
	return "", nil, false
}

// jsStaticString is a string literal's value, refused when it holds an
// unpaired surrogate (JSON writes those as escapes the canonical form does
// not keep).
func jsStaticString(s unistring.String) (any, bool) {
	if u := s.AsUtf16(); u != nil {
		u = u[1:]
		for i := 0; i < len(u); i++ {
			switch {
			case utf16.IsSurrogate(rune(u[i])) && u[i] < 0xdc00 && i+1 < len(u) && u[i+1] >= 0xdc00 && u[i+1] <= 0xdfff:
				i++
			case utf16.IsSurrogate(rune(u[i])):
				return nil, false
			}
		}
	}
	return s.String(), true
}

// jsStaticTruthy is ToBoolean.
func jsStaticTruthy(v any) bool {
	switch v := v.(type) {
	case nil, jsStaticUndefined:
		return false
	case bool:
		return v
	case float64:
		return v != 0 && !math.IsNaN(v)
	case string:
		return v != ""
	}
	return true
}

// jsStaticField is the reader's field(v).
func jsStaticField(v any) *jsField {
	f := &jsField{}
	switch v := v.(type) {
	case nil:
		f.Type = "null"
	case jsStaticUndefined:
		f.Type = "undefined"
	case bool:
		f.Type = "boolean"
	case float64:
		f.Type = "number"
	case string:
		f.Type = "string"
		f.Value = &v
	case jsStaticArray:
		f.Type = "array"
	case jsStaticFunction:
		f.Type = "function"
	case *jsStaticObject:
		f.Type = "object"
	}
	return f
}

// jsStaticJSON writes JSON.stringify(v) for an object or array, up to the
// order of keys and the escaping of strings, which jsCanonicalJSON
// normalises. ok is false where JSON.stringify would run code (toJSON).
func jsStaticJSON(buf *bytes.Buffer, v any) bool {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if v {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			buf.WriteString("null")
		} else {
			buf.WriteString(jsNumberString(v))
		}
	case string:
		b, _ := json.Marshal(v)
		buf.Write(b)
	case jsStaticArray:
		buf.WriteByte('[')
		for i, el := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			switch el.(type) {
			case jsStaticUndefined, jsStaticFunction:
				buf.WriteString("null")
				continue
			}
			if !jsStaticJSON(buf, el) {
				return false
			}
		}
		buf.WriteByte(']')
	case *jsStaticObject:
		if _, has := v.props["toJSON"]; has {
			return false
		}
		keys := make([]string, 0, len(v.props))
		for k, el := range v.props {
			switch el.(type) {
			case jsStaticUndefined, jsStaticFunction:
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			b, _ := json.Marshal(k)
			buf.Write(b)
			buf.WriteByte(':')
			if !jsStaticJSON(buf, v.props[k]) {
				return false
			}
		}
		buf.WriteByte('}')
	default:
		return false
	}
	return true
}

// jsNumberString is ToString(n) as goja computes it: an integer up to 2^53
// as an integer (goja keeps those as integers), anything else by goja's
// own ftoa.
func jsNumberString(n float64) string {
	const maxInt = 1 << 53
	switch {
	case n == 0:
		return "0" // -0 too
	case math.IsNaN(n):
		return "NaN"
	case math.IsInf(n, 1):
		return "Infinity"
	case math.IsInf(n, -1):
		return "-Infinity"
	case n == math.Trunc(n) && n >= -maxInt && n <= maxInt:
		return strconv.FormatInt(int64(n), 10)
	}
	return string(ftoa.FToStr(n, ftoa.ModeStandard, 0, nil))
}

// jsGlobalNames are the global object's properties once the prelude has
// run: a top-level declaration of one of them behaves unlike a fresh
// binding (var undefined keeps undefined; let NaN throws), so a module
// declaring one is evaluated.
var jsGlobalNames = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	vm := goja.New()
	if _, err := jsRunFunction(vm, jsPreludeProgram); err != nil {
		panic("agentform: the prelude does not run: " + err.Error())
	}
	v, err := vm.RunString("Object.getOwnPropertyNames(globalThis)")
	if err != nil {
		panic("agentform: listing the global object: " + err.Error())
	}
	var list []string
	if err := vm.ExportTo(v, &list); err != nil {
		panic("agentform: listing the global object: " + err.Error())
	}
	for _, n := range list {
		names[n] = true
	}
	return names
})
