// Package mcpwire holds what agentform's two MCP clients share: the lock's
// (internal/resolve, at plan time) and serve's proxy (internal/serve). Both
// must compute tool digests from exactly the JSON a server sent, so both
// watch the wire with a Capture; both bound what one answer of a server
// may make them read (MaxAnswer); both start stdio servers in their own
// process group, find their command on the server's PATH, and keep the end
// of its standard error for messages.
package mcpwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessage bounds one JSON-RPC message the HTTP taps buffer; a larger
// one passes through unseen.
const MaxMessage = 32 << 20

// MaxListedBytes and MaxListedTools bound what a client keeps of one
// server's tools/list answers over all their pages: the tool definitions,
// in bytes as the server sent them, and how many tools. Each answer is
// bounded by itself (16 MiB), but a server may page through up to 1,000
// of them, and every definition is kept until the listing ends: 24 pages
// of one 12 MiB tool each made a plan use 2.4 GB. No server's tool list
// comes near either bound.
const (
	MaxListedBytes = 32 << 20
	MaxListedTools = 10000
)

// Listing counts what a client keeps of one server's tool list, against
// MaxListedBytes and MaxListedTools. The zero value is an empty listing.
type Listing struct {
	bytes, tools int
}

// Keep counts one more tool definition of n bytes, or returns an error
// saying which bound it would pass, for the client to refuse the answer.
func (l *Listing) Keep(n int) error {
	if l.tools+1 > MaxListedTools {
		return fmt.Errorf("tools/list lists more than %d tools over its pages, the most agentform keeps of one server", MaxListedTools)
	}
	if l.bytes+n > MaxListedBytes {
		return fmt.Errorf("tools/list lists more than %d MiB of tool definitions over its pages, the most agentform keeps of one server", MaxListedBytes>>20)
	}
	l.tools++
	l.bytes += n
	return nil
}

// ErrorText is err's text for a message, less what a JSON decoder quotes
// of the server's bytes. The MCP SDK's decoder quotes the first 32 bytes of
// a value it cannot decode, cut there ("cannot unmarshal \"xxxx...\""), and
// a secret the server wrote in them (a token it echoes) would show in part
// where scrubbing, which finds whole values, does not see it. From the
// decoder's "json: " on, the text only says that the server's bytes could
// not be decoded.
func ErrorText(err error) string {
	text := err.Error()
	if i := strings.Index(text, "json: "); i >= 0 {
		return text[:i] + "json: what the server sent could not be decoded (agentform does not quote it)"
	}
	return text
}

// Capture records the raw result of tools/list answers (and the protocol
// version an initialize answer negotiated) as they cross a connection, so
// that digests are computed from exactly what the server sent: numbers as
// written, unknown fields kept.
type Capture struct {
	mu      sync.Mutex
	pending map[jsonrpc.ID]string
	last    json.RawMessage
	version string
	readErr error
}

// NewCapture returns an empty capture.
func NewCapture() *Capture {
	return &Capture{pending: map[jsonrpc.ID]string{}}
}

// Reset forgets the last tools/list result.
func (c *Capture) Reset() {
	c.mu.Lock()
	c.last = nil
	c.mu.Unlock()
}

// Take returns the last tools/list result and forgets it.
func (c *Capture) Take() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.last
	c.last = nil
	return r
}

// ProtocolVersion returns the negotiated protocol version, or "".
func (c *Capture) ProtocolVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// ReadError returns the first error reading a message from the server
// failed with that is not the connection ending (io.EOF, a message cut
// off by the end, a closed pipe) or being given up (the context): over
// stdio, what the server wrote was not a JSON-RPC message, or was one
// longer than the transport reads.
func (c *Capture) ReadError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// readFailed keeps err for ReadError, when it is the first such.
func (c *Capture) readFailed(err error) {
	for _, end := range []error{io.EOF, io.ErrUnexpectedEOF, io.ErrClosedPipe, os.ErrClosed, net.ErrClosed, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, end) {
			return
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readErr == nil {
		c.readErr = err
	}
}

// Sent notes an outgoing tools/list or initialize request.
func (c *Capture) Sent(msg jsonrpc.Message) {
	r, ok := msg.(*jsonrpc.Request)
	if !ok || !r.ID.IsValid() || (r.Method != "tools/list" && r.Method != "initialize") {
		return
	}
	c.mu.Lock()
	c.pending[r.ID] = r.Method
	c.mu.Unlock()
}

// Received keeps what an answer to a noted request says.
func (c *Capture) Received(msg jsonrpc.Message) {
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	method, ok := c.pending[r.ID]
	if !ok {
		return
	}
	delete(c.pending, r.ID)
	if r.Error != nil {
		return
	}
	switch method {
	case "tools/list":
		c.last = append(json.RawMessage(nil), r.Result...)
	case "initialize":
		var ir struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(r.Result, &ir) == nil {
			c.version = ir.ProtocolVersion
		}
	}
}

// Transport wraps a transport (stdio) so that the capture sees every
// message. Over streamable HTTP the capture belongs in the HTTP client
// instead (TapRequest, TapResponse): a wrapped streamable connection hides
// the session state the SDK passes to it.
type Transport struct {
	Inner   mcp.Transport
	Capture *Capture
}

// Connect implements mcp.Transport.
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Connection: c, capture: t.Capture}, nil
}

type conn struct {
	mcp.Connection
	capture *Capture
}

// Read implements mcp.Connection.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	switch {
	case err == nil:
		c.capture.Received(msg)
	case ctx.Err() == nil:
		c.capture.readFailed(err)
	}
	return msg, err
}

// Write implements mcp.Connection.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.capture.Sent(msg)
	return c.Connection.Write(ctx, msg)
}

// TapRequest shows the capture the JSON-RPC message of an HTTP POST,
// leaving the request's body readable (and replayable) as before.
func TapRequest(c *Capture, r *http.Request) error {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.ContentLength = int64(len(body))
	if msg, err := jsonrpc.DecodeMessage(body); err == nil {
		c.Sent(msg)
	}
	return nil
}

// CallID returns the id of the JSON-RPC call an HTTP request posts, and
// false when it posts none (a notification, an answer, a GET): only a call
// gets an answer in the response. It reads the body through GetBody, which
// the SDK's requests have, so that the request can still be sent.
func CallID(r *http.Request) (jsonrpc.ID, bool) {
	if r.Method != http.MethodPost || r.GetBody == nil {
		return jsonrpc.ID{}, false
	}
	body, err := r.GetBody()
	if err != nil {
		return jsonrpc.ID{}, false
	}
	defer body.Close()
	raw, err := io.ReadAll(io.LimitReader(body, MaxAnswer))
	if err != nil {
		return jsonrpc.ID{}, false
	}
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	call, ok := msg.(*jsonrpc.Request)
	if !ok || !call.IsCall() {
		return jsonrpc.ID{}, false
	}
	return call.ID, true
}

// TapResponse wraps a JSON or event-stream response body so that the
// capture sees its messages as they are read.
func TapResponse(c *Capture, resp *http.Response) {
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sseTee{ReadCloser: resp.Body, capture: c}
	case strings.HasPrefix(ct, "application/json"):
		resp.Body = &jsonTee{ReadCloser: resp.Body, capture: c}
	}
}

// jsonTee passes a JSON response body through, and shows its message to
// the capture when it has been read to the end (before the reader sees
// the end, so before the SDK acts on it).
type jsonTee struct {
	io.ReadCloser
	capture *Capture
	buf     bytes.Buffer
	over    bool
}

// Read implements io.Reader.
func (t *jsonTee) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if !t.over {
		if t.buf.Len()+n > MaxMessage {
			t.over = true
			t.buf.Reset()
		} else {
			t.buf.Write(p[:n])
		}
	}
	if err == io.EOF && !t.over && t.buf.Len() > 0 {
		if msg, derr := jsonrpc.DecodeMessage(t.buf.Bytes()); derr == nil {
			t.capture.Received(msg)
		}
		t.buf.Reset()
	}
	return n, err
}

// Lines splits an event stream into lines as it is read, the way the
// go-sdk's client reads them: at "\n", with trailing "\r" dropped. A line
// longer than Max is passed cut to Max bytes, with over set.
type Lines struct {
	Max  int
	line []byte
	over bool
}

// Feed passes each line p completes to line.
func (s *Lines) Feed(p []byte, line func(l []byte, over bool)) {
	for _, b := range p {
		if b != '\n' {
			if len(s.line) < s.Max {
				s.line = append(s.line, b)
			} else {
				s.over = true
			}
			continue
		}
		line(bytes.TrimRight(s.line, "\r"), s.over)
		s.line, s.over = s.line[:0], false
	}
}

// sseTee passes an event-stream response body through, and shows the
// capture the message in each event's data as soon as the event is
// complete.
type sseTee struct {
	io.ReadCloser
	capture *Capture
	lines   Lines
	data    bytes.Buffer
	over    bool
}

// Read implements io.Reader.
func (t *sseTee) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if t.lines.Max == 0 {
		t.lines.Max = MaxMessage
	}
	t.lines.Feed(p[:n], func(line []byte, over bool) {
		if over {
			t.over = true
		}
		t.processLine(line)
	})
	return n, err
}

func (t *sseTee) processLine(line []byte) {
	if len(line) == 0 {
		if t.data.Len() > 0 && !t.over {
			if msg, err := jsonrpc.DecodeMessage(t.data.Bytes()); err == nil {
				t.capture.Received(msg)
			}
		}
		t.data.Reset()
		t.over = false
		return
	}
	if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		v = bytes.TrimPrefix(v, []byte(" "))
		if t.data.Len() > 0 {
			t.data.WriteByte('\n')
		}
		if t.data.Len()+len(v) > MaxMessage {
			t.over = true
			return
		}
		t.data.Write(v)
	}
}

// Tail keeps the last Max bytes written to it (a server's standard
// error, for messages).
type Tail struct {
	Max int

	mu  sync.Mutex
	buf []byte
	cut bool // bytes were dropped from the front
}

// Write implements io.Writer.
func (b *Tail) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.Max {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-b.Max:]...)
		b.cut = true
	}
	return len(p), nil
}

// String returns the whole lines the buffer holds. When bytes were dropped
// from the front, the first line is only the end of one, and is left out:
// a secret cut in two there would no longer be recognised and scrubbed.
func (b *Tail) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.cut {
		return string(b.buf)
	}
	i := bytes.IndexByte(b.buf, '\n')
	if i < 0 {
		return ""
	}
	return string(b.buf[i+1:])
}

// KillGroup kills a started command's whole process group (stdio servers
// run in their own); os.ErrProcessDone when it is gone already.
func KillGroup(cmd *exec.Cmd) error {
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// LookCommand finds a server's command like exec.LookPath, but on the PATH
// the server gets. A name with a slash is taken relative to dir (as it
// is when dir is ""); relative PATH entries are ignored, as exec.LookPath
// does. The error says why, without the name.
func LookCommand(name, dir, pathEnv string) (string, error) {
	if name == "" {
		return "", errors.New("is empty")
	}
	isExec := func(p string) error {
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		if info.IsDir() {
			return errors.New("is a directory")
		}
		if info.Mode()&0o111 == 0 {
			return errors.New("is not executable")
		}
		return nil
	}
	if strings.Contains(name, "/") {
		p := name
		if dir != "" && !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := isExec(p); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				if dir != "" {
					return "", errors.New("does not exist (relative paths are taken from the workspace directory)")
				}
				return "", errors.New("does not exist")
			}
			return "", err
		}
		return p, nil
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if isExec(p) == nil {
			return p, nil
		}
	}
	return "", errors.New("was not found on PATH")
}
