package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentform/agentform/internal/mcpwire"
)

// What serve reads of an HTTP upstream is bounded per answer: a JSON body,
// or one event of an event stream, may be at most mcpwire.MaxAnswer. The
// SDK bounds neither (it reads a JSON body whole, and an event whole), and
// it cannot be told to give up on one answer without failing the whole
// connection, every later call of the block with it: a body it cannot
// read, or an event it cannot decode, ends the session. So serve hands the
// SDK only whole answers within the bound, and in place of one over it,
// the answer that the request failed (mcpTooLargeAnswer), which fails
// that call alone.
//
// A stream is not bounded as a whole: serve reads a call's stream only
// until the call returns (mcpExecutor.Call ends the request then), and the
// SDK decodes each event as it comes. It does queue each notification for
// its handlers, though, without bound, and a handler can be slower than
// the reader (a log message's data is decoded whole): a server that sends
// log messages or progress without end grows that queue for as long as it
// sends. serve uses none of them (it passes no upstream logs or progress
// on), so it hands the SDK only the messages it acts on: answers, the
// server's requests (ping), tools/list_changed and cancellations
// (mcpUnused).

// mcpAnswerKey is the context key of the *mcpAnswer of a request of the
// upstream.
type mcpAnswerKey struct{}

// mcpAnswer is what serve's round tripper learns of the answer to one
// request of the upstream (a call, a tools/list page), given in the
// request's context by withMCPAnswer: the JSON-RPC id the SDK gave the
// request, and whether the answer was over the bound.
type mcpAnswer struct {
	mu   sync.Mutex
	id   jsonrpc.ID
	over bool
}

// withMCPAnswer returns ctx carrying a new mcpAnswer, for one request.
func withMCPAnswer(ctx context.Context) (context.Context, *mcpAnswer) {
	a := &mcpAnswer{}
	return context.WithValue(ctx, mcpAnswerKey{}, a), a
}

// tooLarge reports that the answer was over the bound.
func (a *mcpAnswer) tooLarge() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.over
}

// mcpBound bounds what the SDK reads of resp, the answer to r: an event
// stream event by event (mcpEvents), anything else whole (mcpWhole). When
// r is a call, or a stream resumed for one, the SDK gets in place of an
// answer over the bound the answer that the call failed with
// mcpwire.ErrTooLarge; otherwise reading fails with it.
func mcpBound(r *http.Request, resp *http.Response) {
	a, _ := r.Context().Value(mcpAnswerKey{}).(*mcpAnswer)
	id, isCall := mcpwire.CallID(r)
	if a != nil {
		a.mu.Lock()
		if isCall {
			a.id = id
		} else if r.Method == http.MethodGet && a.id.IsValid() {
			// The SDK resumes the call's stream.
			id, isCall = a.id, true
		}
		a.mu.Unlock()
	}
	var over func() []byte
	if isCall {
		over = func() []byte {
			if a != nil {
				a.mu.Lock()
				a.over = true
				a.mu.Unlock()
			}
			return mcpTooLargeAnswer(id)
		}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" && resp.StatusCode/100 == 2 {
		resp.Body = &mcpEvents{ReadCloser: resp.Body, max: mcpwire.MaxAnswer, over: over}
		return
	}
	resp.Body = &mcpWhole{ReadCloser: resp.Body, max: mcpwire.MaxAnswer, over: over}
}

// mcpTooLargeAnswer is the JSON-RPC answer the SDK gets for the call id
// in place of one over the bound.
func mcpTooLargeAnswer(id jsonrpc.ID) []byte {
	b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: mcpwire.ErrTooLarge.Error()}})
	if err != nil {
		panic(err) // an id and an error always encode
	}
	return b
}

// mcpWhole hands on a response body only once it has read it whole, at
// most max bytes; over that, over's answer in its place, or, without over,
// mcpwire.ErrTooLarge. What it hands on is what the SDK reads whole anyway
// (a JSON answer, an error page), so reading it first costs no time.
type mcpWhole struct {
	io.ReadCloser
	max  int
	over func() []byte
	// whole is what is handed on, once read.
	whole io.Reader
}

// Read implements io.Reader.
func (w *mcpWhole) Read(p []byte) (int, error) {
	if w.whole == nil {
		data, err := io.ReadAll(&mcpwire.Limit{R: w.ReadCloser, Max: w.max})
		switch {
		case errors.Is(err, mcpwire.ErrTooLarge) && w.over != nil:
			w.whole = bytes.NewReader(w.over())
		case err != nil:
			// A body broken off, or over the bound: what came of it, then
			// why it ended, as the SDK would have read it.
			if errors.Is(err, mcpwire.ErrTooLarge) {
				data = nil
			}
			w.whole = io.MultiReader(bytes.NewReader(data), &mcpFailedReader{err})
		default:
			w.whole = bytes.NewReader(data)
		}
	}
	return w.whole.Read(p)
}

// mcpFailedReader fails every read with err.
type mcpFailedReader struct{ err error }

func (f *mcpFailedReader) Read([]byte) (int, error) { return 0, f.err }

// mcpEventChunk is how much mcpEvents reads at once.
const mcpEventChunk = 32 << 10

// mcpEvents hands on an event stream event by event, each only once it
// is complete, as the SDK reads it: lines end at "\n" (a "\r" before it
// dropped), and a blank line ends an event; at the end of the stream, the
// event being read is complete too. An event longer than max bytes (its
// lines with their ends) is never handed on: the stream ends with over's
// answer in its place, or, without over, fails with mcpwire.ErrTooLarge.
// An event whose message serve does not use is handed on without its data
// (mcpUnused). It holds at most the event being read, max bytes and one
// more, besides the events read with it and not yet handed on.
type mcpEvents struct {
	io.ReadCloser
	max  int
	over func() []byte

	// buf holds what was read; buf[ready:] is the event being read, whose
	// current line starts at line.
	buf         []byte
	ready, line int
	// out is what to hand on: complete events (in buf, or made anew), and
	// the answer in place of one over the bound.
	out [][]byte
	// err ends reading once out is handed on.
	err error
}

// Read implements io.Reader.
func (e *mcpEvents) Read(p []byte) (int, error) {
	for len(e.out) == 0 {
		if e.err != nil {
			return 0, e.err
		}
		e.fill()
	}
	n := copy(p, e.out[0])
	if e.out[0] = e.out[0][n:]; len(e.out[0]) == 0 {
		e.out = e.out[1:]
	}
	return n, nil
}

// fill reads once from the stream. It is called when out is handed on, so
// that buf holds nothing but the event being read.
func (e *mcpEvents) fill() {
	// Keep only the event being read, in a buffer no larger than it needs
	// for long: a large event once must not cost its size for as long as
	// the stream lasts.
	pending := len(e.buf) - e.ready
	if cap(e.buf) > 4*mcpEventChunk && pending < cap(e.buf)/4 {
		e.buf = append(make([]byte, 0, max(2*pending, mcpEventChunk)), e.buf[e.ready:]...)
	} else {
		e.buf = e.buf[:copy(e.buf, e.buf[e.ready:])]
	}
	e.line -= e.ready
	e.ready = 0

	// Read no more than the event may still take, and one byte more.
	want := min(mcpEventChunk, e.max+1-pending)
	if cap(e.buf)-len(e.buf) < want {
		grown := make([]byte, len(e.buf), min(max(2*cap(e.buf), len(e.buf)+want), e.max+1))
		copy(grown, e.buf)
		e.buf = grown
	}
	start := len(e.buf)
	n, err := e.ReadCloser.Read(e.buf[start : start+want])
	e.buf = e.buf[:start+n]
	for i := start; ; {
		j := bytes.IndexByte(e.buf[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		if len(bytes.TrimRight(e.buf[e.line:i], "\r\n")) == 0 {
			if i-e.ready > e.max {
				e.tooLarge()
				return
			}
			e.complete(e.buf[e.ready:i])
			e.ready = i
		}
		e.line = i
	}
	if len(e.buf)-e.ready > e.max {
		e.tooLarge()
		return
	}
	if err != nil {
		if err == io.EOF && e.ready < len(e.buf) {
			e.complete(e.buf[e.ready:])
			e.ready = len(e.buf)
		}
		e.err = err
	}
}

// complete hands on a complete event: as it is, or without its data
// lines when serve does not use its message.
func (e *mcpEvents) complete(event []byte) {
	if !mcpUnused(event) {
		e.out = append(e.out, event)
		return
	}
	var kept []byte
	for line := range bytes.Lines(event) {
		if field, _, _ := bytes.Cut(line, []byte(":")); string(field) != "data" {
			kept = append(kept, line...)
		}
	}
	e.out = append(e.out, kept)
}

// tooLarge drops the event being read, over the bound, and ends the
// stream after the events before it.
func (e *mcpEvents) tooLarge() {
	e.buf, e.line = e.buf[:e.ready], e.ready
	if e.over == nil {
		e.err = mcpwire.ErrTooLarge
		return
	}
	e.out = append(e.out, []byte("data: "), e.over(), []byte("\n\n"))
	e.err = io.EOF
}

// mcpUnused reports that event, a complete event of a stream, carries a
// message the SDK would only queue for no one: a notification other than
// tools/list_changed and cancelled (a log message, progress, a resource or
// prompt change), for which serve registers no handler. Anything else,
// even what is no message at all, the SDK judges for itself.
func mcpUnused(event []byte) bool {
	var data [][]byte
	for line := range bytes.Lines(event) {
		field, value, ok := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		switch {
		case !ok:
		case string(field) == "event" && string(bytes.TrimSpace(value)) != "message":
			return false // not a message: the SDK skips it
		case string(field) == "data":
			data = append(data, bytes.TrimSpace(value))
		}
	}
	if len(data) == 0 {
		return false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	joined := data[0]
	if len(data) > 1 {
		joined = bytes.Join(data, []byte("\n"))
	}
	if json.Unmarshal(joined, &msg) != nil || msg.ID != nil || msg.Method == "" {
		return false
	}
	switch msg.Method {
	case "notifications/tools/list_changed", "notifications/cancelled":
		return false
	}
	return true
}
