package mcpwire

import (
	"fmt"
	"regexp"
	"strings"
)

// goroutineHeader starts a Go stack trace: "goroutine 1 [running]:".
var goroutineHeader = regexp.MustCompile(`^goroutine \d+ \[[^\]]*\]:$`)

// LastLines returns the last n lines of a server's standard error for a
// message, with stack traces shortened first so that the error they
// follow stays in view: a crashed Node server prints its error, then ten
// "    at …" frames and its version, so the last ten lines alone would
// hold no error at all. A run of JavaScript-style frames keeps its first
// frame, and a Go goroutine's trace its header and first frame; the rest
// of each is counted on one line. Python puts its error after the
// traceback, which the last lines keep as they are.
func LastLines(text string, n int) []string {
	text = strings.TrimSpace(text)
	if text == "" || n <= 0 {
		return nil
	}
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); {
		switch {
		case isFrame(lines[i]):
			j := i + 1
			for j < len(lines) && isFrame(lines[j]) {
				j++
			}
			out = append(out, lines[i])
			if more := j - i - 1; more > 0 {
				indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]
				out = append(out, fmt.Sprintf("%s… %d more %s", indent, more, plural(more, "frame")))
			}
			i = j
		case goroutineHeader.MatchString(strings.TrimSpace(lines[i])):
			// The header, then pairs of function and "\tfile:line"
			// lines up to a blank line.
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) != "" {
				j++
			}
			keep := min(j, i+3)
			out = append(out, lines[i:keep]...)
			if more := j - keep; more > 0 {
				out = append(out, fmt.Sprintf("\t… %d more %s", more, plural(more, "line")))
			}
			i = j
		default:
			out = append(out, lines[i])
			i++
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// isFrame is whether a line is an indented "at …" stack frame, as
// JavaScript, Java and .NET print them.
func isFrame(line string) bool {
	trimmed := strings.TrimLeft(line, " \t")
	return len(trimmed) < len(line) && strings.HasPrefix(trimmed, "at ")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
