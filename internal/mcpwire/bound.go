package mcpwire

import (
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxAnswer is the most agentform reads of one answer of an MCP server:
// 16 MiB, the bound the MCP library puts on one message over stdio (one
// line). Over streamable HTTP the library bounds nothing by itself: it
// reads a JSON answer whole (io.ReadAll), and go-sdk v1.8.0 leaves a
// StreamableClientTransport's MaxEventSize of 0 as no limit at all, not
// its 16 MiB default, so that one endless data: line grows the reader
// until memory runs out. agentform bounds what it hands the library
// itself (Limit): plan each HTTP response, serve each JSON answer and each
// event of a stream.
const MaxAnswer = mcp.DefaultMaxLineLength

// MaxAnswerText is MaxAnswer as messages name it.
var MaxAnswerText = fmt.Sprintf("%d MiB", MaxAnswer>>20)

// ErrTooLarge is what reading an answer longer than MaxAnswer fails with.
var ErrTooLarge = fmt.Errorf("the MCP server's answer was larger than %s", MaxAnswerText)

// Limit reads R until more than Max bytes have been read, then fails with
// ErrTooLarge: it hands on at most Max bytes and one more, the byte that
// tells that there was more, so that a server answering without end costs
// a bounded amount of memory.
type Limit struct {
	R   io.Reader
	Max int
	// Over, when set, is called once, when reading goes past Max.
	Over func()

	read int
}

// Read implements io.Reader.
func (l *Limit) Read(p []byte) (int, error) {
	if l.read > l.Max {
		return 0, ErrTooLarge
	}
	if room := l.Max + 1 - l.read; len(p) > room {
		p = p[:room]
	}
	n, err := l.R.Read(p)
	if l.read += n; l.read > l.Max {
		if l.Over != nil {
			l.Over()
		}
		return n, ErrTooLarge
	}
	return n, err
}

// LineTooLong reports the error the MCP library's stdio transport fails
// with on a message longer than MaxAnswer, which it does not export; a
// test in internal/resolve holds it to the text. The library cannot skip
// such a line: the connection to the server ends with it.
func LineTooLong(err error) bool {
	return err != nil && strings.Contains(err.Error(), "exceeded the configured maximum line length")
}
