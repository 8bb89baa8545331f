package resolve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaLocation is where a compiled input schema claims to live: a name
// no loader resolves, so that errors name no real file.
const schemaLocation = "urn:agentform:parameters"

// Schema is a tool's input schema compiled by CompileSchema: what serve
// validates a call's arguments against (Validate). Its patterns are
// ECMAScript regular expressions, as JSON Schema's are, matched by a
// backtracking engine; Validate bounds the time they take.
type Schema struct {
	// first is the schema compiled by CompileSchema.
	first *schemaCopy
	// doc is what first was compiled from, kept to compile more copies
	// when the schema has patterns; nil when it has none.
	doc any
	// mu guards free, and is held only to take or put back a copy, never
	// while one validates.
	mu   sync.Mutex
	free []*schemaCopy
}

// schemaCopy is one compilation of a schema, with the clock its patterns
// read. A schema without patterns has one copy, which any number of
// validations use at once; one with patterns gives each validation a
// copy of its own, so that each has its own PatternBudget.
type schemaCopy struct {
	compiled *jsonschema.Schema
	patterns *patternClock
}

// schemaMaxFreeCopies bounds the copies of a schema with patterns kept
// for later validations: as many as validate at once, up to this many.
const schemaMaxFreeCopies = 16

// CompileSchema compiles a tool's input schema, as jsonschema.UnmarshalJSON
// decodes it, with draft 2020-12 unless its "$schema" names another. It
// reads nothing: a "$ref" to a file or URL fails to compile instead of
// making a plan (or serve) read it. It does not check that the schema
// describes an object; checkInputSchema does.
//
// A schema outside the bounds schemaBounds checks is refused before the
// JSON Schema library sees it (a *SchemaBoundError): the library's time
// grows faster than the schema's size with its depth and its number of
// subschemas, and it crashes on some numbers. Should the library crash on
// anything else, that is a *LibraryCrashError, never a crash of agentform.
//
// A schema whose size with its references expanded passes
// SchemaMaxExpandedSize is refused too (a *SchemaBoundError), after it is
// compiled: each validation would take that long.
//
// A "pattern" (or a "patternProperties" name) is compiled as an
// ECMAScript regular expression (patternClock.compile).
func CompileSchema(doc any) (*Schema, error) {
	if err := schemaBounds(doc); err != nil {
		return nil, err
	}
	patterns := &patternClock{}
	compiled, err := compileChecked(doc, patterns)
	if err != nil {
		return nil, err
	}
	if err := schemaExpandedBound(compiled); err != nil {
		return nil, err
	}
	s := &Schema{first: &schemaCopy{compiled: compiled, patterns: patterns}}
	if patterns.patterns > 0 {
		s.doc = doc
		s.free = []*schemaCopy{s.first}
	}
	return s, nil
}

// compileChecked compiles a schema within the bounds, turning a panic of
// the JSON Schema library into a *LibraryCrashError. Only the library's
// calls run here, so what the error blames is the library.
func compileChecked(doc any, patterns *patternClock) (sch *jsonschema.Schema, err error) {
	defer func() {
		if p := recover(); p != nil {
			sch, err = nil, libraryCrash(p)
		}
	}()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	c.UseRegexpEngine(patterns.compile)
	if err := c.AddResource(schemaLocation, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaLocation)
}

// Validate validates a call's arguments, decoded with
// jsonschema.UnmarshalJSON, for serve: a number beyond the bounds on
// numbers is a *SchemaBoundError (the library would take long over it, or
// crash: 1e-100000000 against a minimum), patterns that take more than
// PatternBudget in all, or a match that needs more backtracking stack
// than PatternMaxBacktrackSlots, a *PatternTimeoutError, a panic of the
// library a *LibraryCrashError, and otherwise the error is the library's
// *jsonschema.ValidationError. Arguments a client sends must never stop
// serve, nor hold it for long.
//
// Validations may run at once, and do not wait for one another: each has
// PatternBudget of its own, on a copy of the compiled schema that no other
// validation uses at the time (compiled again when all are in use; a
// schema without patterns is shared).
func (s *Schema) Validate(inst any) (err error) {
	if err := CheckJSONNumbers(inst); err != nil {
		return err
	}
	if s.doc == nil {
		// No patterns: nothing in the compiled schema changes while it
		// validates, and validations share it.
		return validateChecked(s.first.compiled, inst)
	}
	c, err := s.take()
	if err != nil {
		return err
	}
	defer s.put(c)
	c.patterns.start(patternBudget)
	defer c.patterns.stop()
	err = validateChecked(c.compiled, inst)
	if c.patterns.failed {
		return &PatternTimeoutError{Stack: c.patterns.stack}
	}
	return err
}

// validateChecked validates inst against compiled, turning a panic of the
// JSON Schema library into a *LibraryCrashError.
func validateChecked(compiled *jsonschema.Schema, inst any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = libraryCrash(p)
		}
	}()
	return compiled.Validate(inst)
}

// take returns a copy of a schema with patterns that no other validation
// uses, compiling one when all are in use: validations never wait for
// one another. Compiling the schema again cannot fail as it did not the
// first time, but should it, that is the error.
func (s *Schema) take() (*schemaCopy, error) {
	s.mu.Lock()
	if n := len(s.free); n > 0 {
		c := s.free[n-1]
		s.free = s.free[:n-1]
		s.mu.Unlock()
		return c, nil
	}
	s.mu.Unlock()
	patterns := &patternClock{}
	compiled, err := compileChecked(s.doc, patterns)
	if err != nil {
		return nil, err
	}
	return &schemaCopy{compiled: compiled, patterns: patterns}, nil
}

// put gives back a copy take returned, keeping at most
// schemaMaxFreeCopies.
func (s *Schema) put(c *schemaCopy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.free) < schemaMaxFreeCopies {
		s.free = append(s.free, c)
	}
}

// LibraryCrashError is a panic of the JSON Schema library, compiling a
// schema or validating arguments, turned into an error that says whose bug
// it is.
type LibraryCrashError struct {
	// What the library panicked with: a runtime error's text, quoted (it
	// holds no data: "invalid memory address or nil pointer
	// dereference"), or any other value's type only, since the library
	// could have put a piece of the schema or the arguments in it.
	What string
}

func (e *LibraryCrashError) Error() string {
	return fmt.Sprintf("the JSON Schema library crashed (%s): this is a bug in that library, not in what agentform checks; please report it to agentform", e.What)
}

func libraryCrash(p any) *LibraryCrashError {
	if re, ok := p.(runtime.Error); ok {
		return &LibraryCrashError{What: fmt.Sprintf("%q", re.Error())}
	}
	return &LibraryCrashError{What: fmt.Sprintf("a %T", p)}
}

// checkInputSchema checks that schema, the JSON text of a tool's input
// schema, can describe the arguments of a tool, which are a JSON object:
// it is a JSON object (not an array, a string or a boolean schema), its
// "type" is "object" (MCP requires that it says so; with typeOptional a
// schema without "type" passes too), and it compiles (CompileSchema). Every
// kind of tool that reads a schema (javascript, python, mcp) checks it
// here, so that what agent.json ships as a tool's parameters means the same
// whatever the tool's kind.
//
// The error is a clause about the schema, to follow the caller's naming of
// it: "it is an array, not a JSON object".
func checkInputSchema(schema []byte, typeOptional bool) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return fmt.Errorf("it is not JSON: %v", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("it is %s, not a JSON object", jsonKind(doc))
	}
	typ, ok := obj["type"]
	switch {
	case !ok && !typeOptional:
		return errors.New(`it has no "type": a tool's arguments are an object, so set "type" to "object"`)
	case ok && typ != "object":
		t, _ := json.Marshal(typ)
		return fmt.Errorf(`its "type" is %s, but a tool's arguments are an object: set "type" to "object"`, t)
	}
	if _, err := CompileSchema(doc); err != nil {
		var be *SchemaBoundError
		if errors.As(err, &be) {
			return fmt.Errorf("it is beyond what agentform checks of a schema: %s", be)
		}
		return fmt.Errorf("it is not a valid JSON Schema: %s", schemaErrorText(err))
	}
	return nil
}

// jsonKind names the kind of a JSON value decoded with numbers as
// json.Number (mcpwire.DecodeJSON, jsonschema.UnmarshalJSON), with an
// article: "an array".
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// schemaErrorText reports a jsonschema compile error by its innermost
// causes, each with the place in the schema it is about.
func schemaErrorText(err error) string {
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if !errors.As(err, &sve) || !errors.As(sve.Err, &ve) {
		return strings.ReplaceAll(err.Error(), schemaLocation, "parameters")
	}
	p := message.NewPrinter(language.English)
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, fmt.Sprintf("at %q: %s", "/"+strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(p)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(leaves)
	if len(leaves) > 3 {
		leaves = append(leaves[:3], fmt.Sprintf("and %d more", len(leaves)-3))
	}
	return strings.Join(leaves, "; ")
}
