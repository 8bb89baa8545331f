package resolve

import (
	"fmt"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// PatternBudget bounds the time a schema's patterns take to match one
// call's arguments, in all. A pattern is an ECMAScript regular expression,
// which needs a backtracking engine (lookahead, back references), and such
// an engine can take exponential time on a hostile pattern
// ("^(a+)+$" against "aaaa…b"); serve validates every call against its
// tool's schema, which an MCP server may have written.
const PatternBudget = time.Second

// PatternTimeoutError is arguments whose validation ran out of
// PatternBudget: a pattern could not be matched against them in time.
type PatternTimeoutError struct{}

func (*PatternTimeoutError) Error() string {
	return fmt.Sprintf("the schema's patterns could not be matched against the arguments within %s, the most agentform spends on one call's (a pattern that backtracks without end, or one the matcher gave up on)", PatternBudget)
}

// patternClock is the deadline the patterns of one compiled schema share:
// set by Validate for the time of one validation (Schema.mu makes them
// take turns), zero otherwise.
type patternClock struct {
	deadline time.Time
	// failed is set when a match timed out or failed: the validation's
	// verdict is then not to be trusted.
	failed bool
}

func (c *patternClock) start(budget time.Duration) {
	c.deadline, c.failed = time.Now().Add(budget), false
}

func (c *patternClock) stop() { c.deadline = time.Time{} }

// compile is the schema's regexp engine (jsonschema's UseRegexpEngine): a
// pattern is compiled as an ECMAScript regular expression with the "u"
// flag, as JSON Schema says and as validators in JavaScript read it, so
// that a lookahead ("^(?!-)[a-z0-9-]+$", which zod emits) or a back
// reference is accepted. A pattern that is not ECMAScript but is in the
// syntax of RE2 (Go's regexp, which these checks used before: a named
// group written "(?P<name>…)", as Python programs write it) is read in
// that syntax. One that is neither is refused.
func (c *patternClock) compile(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript|regexp2.Unicode)
	if err != nil {
		var rerr error
		if re, rerr = regexp2.Compile(pattern, regexp2.RE2); rerr != nil {
			return nil, err
		}
	}
	return &schemaPattern{re: re, clock: c}, nil
}

// schemaPattern is a compiled pattern of a schema, matched within its
// clock's deadline.
type schemaPattern struct {
	re    *regexp2.Regexp
	clock *patternClock
}

// patternMatchTimeout bounds a match outside a validation, which nothing
// does today: no match may run without a bound.
const patternMatchTimeout = 100 * time.Millisecond

// MatchString implements jsonschema.Regexp. Past the deadline, or when a
// match times out or fails (regexp2 bounds its backtracking stack), it
// reports no match and marks the clock failed, so that Validate reports
// the time out rather than a pattern not matched.
func (p *schemaPattern) MatchString(s string) bool {
	c := p.clock
	left := patternMatchTimeout
	if !c.deadline.IsZero() {
		if c.failed {
			return false
		}
		if left = time.Until(c.deadline); left <= 0 {
			c.failed = true
			return false
		}
	}
	p.re.MatchTimeout = left
	ok, err := p.re.MatchString(s)
	if err != nil {
		c.failed = true
		return false
	}
	return ok
}

func (p *schemaPattern) String() string { return p.re.String() }
