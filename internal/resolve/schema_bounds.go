package resolve

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The bounds on an input schema that CompileSchema checks before the JSON
// Schema library sees it. The library's work grows faster than the
// schema's size: compiling a subschema looks through every subschema queued
// before it, and each level of nesting adds to what every subschema below
// it costs (a schema 1,000 levels deep takes seconds, 4,000 levels
// minutes; 100,000 flat properties two minutes). It reads each number as
// an exact fraction, in time and memory that grow with the number's
// exponent (1e-999999 takes tens of milliseconds), and crashes on an
// exponent of more than a million (1e-100000000), which math/big refuses.
// No tool's schema comes near these bounds; within them a schema is
// checked in well under a second.
const (
	// SchemaMaxDepth is how deeply a schema's objects and arrays may nest,
	// the schema itself being level 1.
	SchemaMaxDepth = 64
	// SchemaMaxNodes is how many objects and booleans (each of which can be
	// a subschema) a schema may hold in all.
	SchemaMaxNodes = 4096
	// JSONNumberMaxDigits and JSONNumberMaxExponent bound a number of a
	// schema, or of arguments checked against one: its digits, and its
	// exponent either way (1e1000 and 1e-1000 are the furthest). A 64-bit
	// float, what a tool reads a number as, ends near 1e308.
	JSONNumberMaxDigits   = 1000
	JSONNumberMaxExponent = 1000
)

// SchemaBoundError is a schema, or arguments, outside the bounds: where
// (a JSON pointer, "" for the whole document) and what.
type SchemaBoundError struct {
	At, Problem string
}

func (e *SchemaBoundError) Error() string {
	if e.At == "" {
		return e.Problem
	}
	return fmt.Sprintf("at %q %s", e.At, e.Problem)
}

// schemaBounds checks a decoded schema against SchemaMaxDepth,
// SchemaMaxNodes and the bounds on numbers.
func schemaBounds(doc any) error {
	return jsonBounds(doc, true)
}

// CheckJSONNumbers checks every number in v, a JSON document decoded with
// numbers as json.Number, against JSONNumberMaxDigits and
// JSONNumberMaxExponent: a call's arguments are checked with it before
// they are validated, for the same reasons as a schema's numbers, and
// also refused beyond a 64-bit float's range.
func CheckJSONNumbers(v any) error {
	return jsonBounds(v, false)
}

// jsonBounds walks a decoded document, checking its numbers and, for a
// schema, its depth and its count of objects and booleans. The walk stops
// at the first problem, so it costs at most the size of the document; for
// a schema, its recursion is at most SchemaMaxDepth+1 levels deep (the
// JSON decoder bounds any document's depth).
func jsonBounds(doc any, schema bool) error {
	nodes := 0
	var walk func(v any, at []string) error
	walk = func(v any, at []string) error {
		switch x := v.(type) {
		case map[string]any:
			if schema {
				if err := schemaNode(&nodes, at, true); err != nil {
					return err
				}
			}
			for _, k := range sortedKeys(x) {
				if err := walk(x[k], append(at, k)); err != nil {
					return err
				}
			}
		case []any:
			if schema && len(at) >= SchemaMaxDepth {
				return schemaTooDeep(at)
			}
			for i, e := range x {
				if err := walk(e, append(at, strconv.Itoa(i))); err != nil {
					return err
				}
			}
		case bool:
			if schema {
				return schemaNode(&nodes, at, false)
			}
		case json.Number:
			if problem := jsonNumberProblem(string(x)); problem != "" {
				return &SchemaBoundError{At: pointer(at), Problem: problem}
			}
			if !schema && beyondFloat64(string(x)) {
				// A schema may say "maximum": 1e400; an argument of 1e400
				// would reach the tool as infinity (JavaScript's and
				// Python's JSON readers both make it one), which an
				// "integer" schema takes for a whole number.
				return &SchemaBoundError{At: pointer(at), Problem: "a number is beyond the range of a 64-bit float (about ±1.8e308), the most a tool can read"}
			}
		}
		return nil
	}
	return walk(doc, nil)
}

// schemaNode counts one object or boolean of a schema at at, and checks
// the bounds on how many there are and, for an object, how deep it is.
func schemaNode(nodes *int, at []string, object bool) error {
	if object && len(at) >= SchemaMaxDepth {
		return schemaTooDeep(at)
	}
	if *nodes++; *nodes > SchemaMaxNodes {
		return &SchemaBoundError{Problem: fmt.Sprintf("it holds more than %d objects and booleans (each a possible subschema), the most agentform accepts", SchemaMaxNodes)}
	}
	return nil
}

func schemaTooDeep(at []string) error {
	return &SchemaBoundError{At: pointer(at), Problem: fmt.Sprintf("it nests deeper than %d levels, the most agentform accepts", SchemaMaxDepth)}
}

// jsonNumberProblem says how a JSON number's text is beyond the bounds, or
// returns "". The text is never quoted: it could be thousands of digits.
func jsonNumberProblem(n string) string {
	mantissa, exp, _ := strings.Cut(strings.ToLower(n), "e")
	digits := 0
	for _, c := range mantissa {
		if '0' <= c && c <= '9' {
			digits++
		}
	}
	if digits > JSONNumberMaxDigits {
		return fmt.Sprintf("a number has more than %d digits, the most agentform accepts", JSONNumberMaxDigits)
	}
	exp = strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")
	if len(exp) > len(strconv.Itoa(JSONNumberMaxExponent)) {
		return jsonExponentProblem()
	}
	if e, _ := strconv.Atoi(exp); e > JSONNumberMaxExponent {
		return jsonExponentProblem()
	}
	return ""
}

// beyondFloat64 reports whether a JSON number, within the bounds above,
// is too large in magnitude for a 64-bit float. One too small to be told
// from zero is not: it reads as zero, as in any JSON reader.
func beyondFloat64(n string) bool {
	_, err := strconv.ParseFloat(n, 64)
	return err != nil
}

func jsonExponentProblem() string {
	return fmt.Sprintf("a number has an exponent beyond ±%d, the most agentform accepts", JSONNumberMaxExponent)
}

// pointer renders a location in a JSON document as the JSON Schema
// library's errors show it: "/properties/a".
func pointer(at []string) string {
	return "/" + strings.Join(at, "/")
}
