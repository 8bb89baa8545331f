package resolve

import (
	"errors"
	"fmt"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// PatternBudget bounds the time a schema's patterns take to match one
// call's arguments, in all: each match gets what is left of it, so one
// match takes at most PatternBudget and all the matches of a call together
// too. A pattern is an ECMAScript regular expression, which needs a
// backtracking engine (lookahead, back references), and such an engine can
// take exponential time on a hostile pattern ("^(a+)+$" against "aaaa…b");
// serve validates every call against its tool's schema, which an MCP server
// may have written. Each call has its own budget: calls validated at the
// same time against the same schema neither share it nor wait for one
// another (Schema.Validate).
const PatternBudget = time.Second

// patternBudget is the budget Validate gives: PatternBudget, longer in a
// test that must reach the bound on the stack however busy the machine.
var patternBudget = PatternBudget

// PatternMaxBacktrackSlots bounds the backtracking stack of one match, in
// the engine's integer slots (8 bytes each: 128 MiB at most). The engine's
// default (100,000) refused valid arguments of ~100 KB against ordinary
// patterns ("^(a|b)*$", zod's base64 pattern); this bound lets a pattern
// like those match a few megabytes, while keeping the memory of one match
// bounded whatever the arguments (up to 16 MiB).
const PatternMaxBacktrackSlots = 1 << 24

// PatternTimeoutError is arguments that the schema's patterns could not be
// matched against: they ran out of PatternBudget (Stack false), or a match
// needed more than PatternMaxBacktrackSlots of backtracking stack (Stack
// true). Either way the validation has no verdict, and the call is
// refused.
type PatternTimeoutError struct {
	Stack bool
}

func (e *PatternTimeoutError) Error() string {
	if e.Stack {
		return fmt.Sprintf("a pattern of the schema could not be matched against the arguments: the match needed more backtracking memory than the %d slots agentform allows one match (a pattern that backtracks over a long argument)", PatternMaxBacktrackSlots)
	}
	return fmt.Sprintf("the schema's patterns could not be matched against the arguments within %s, the most agentform spends on one call's (a pattern that backtracks without end)", PatternBudget)
}

// patternClock is the deadline the patterns of one compiled copy of a
// schema share: set by Validate for the time of one validation (a copy
// serves one validation at a time, Schema.Validate), zero otherwise.
type patternClock struct {
	deadline time.Time
	// failed is set when a match timed out or failed: the validation's
	// verdict is then not to be trusted. stack says that a match ran out
	// of backtracking stack rather than time.
	failed, stack bool
	// patterns counts the patterns compiled with the clock.
	patterns int
}

func (c *patternClock) start(budget time.Duration) {
	c.deadline, c.failed, c.stack = time.Now().Add(budget), false, false
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
	stack := regexp2.OptionMaxBacktrackingStackSize(PatternMaxBacktrackSlots)
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript|regexp2.Unicode, stack)
	if err != nil {
		var rerr error
		if re, rerr = regexp2.Compile(pattern, regexp2.RE2, stack); rerr != nil {
			return nil, err
		}
	}
	c.patterns++
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
// match times out or fails (it needs more backtracking stack than
// PatternMaxBacktrackSlots), it reports no match and marks the clock
// failed, so that Validate reports that rather than a pattern not matched.
// Only the validation using the clock's copy of the schema calls it, so
// setting the Regexp's MatchTimeout races with nothing.
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
		c.stack = errors.Is(err, regexp2.ErrBacktrackingStackLimit)
		return false
	}
	return ok
}

func (p *schemaPattern) String() string { return p.re.String() }
