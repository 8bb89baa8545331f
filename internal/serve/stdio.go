package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioDrainTimeout bounds how long serve keeps answering after the end
// of its standard input: long enough for every call in flight to end on
// its own timeout (DefaultCallTimeout) and be answered, so that closing
// stdin never cuts a call short; only a call that outlives its own
// timeout is given up. A variable for tests.
var stdioDrainTimeout = DefaultCallTimeout + 10*time.Second

// stdioStopGrace bounds how long serve waits, once it stops (a signal, or
// the drain above running out), for the calls it cancelled to return
// before it exits anyway. A variable for tests.
var stdioStopGrace = 5 * time.Second

// drainConn is the stdio connection of serve: the SDK's, with the end of
// input held back until every request already read has been answered.
//
// The go-sdk (v1.8, modelcontextprotocol/go-sdk#1061) treats a read error
// as the end of the whole connection: the moment Read returns io.EOF it
// cancels the requests in flight and refuses to write any more replies.
// A client that pipes its requests and closes stdin would get none of
// them. drainConn keeps the SDK's framing and batching and only delays
// the error: until the last reply is written, stdioDrainTimeout passes,
// ctx ends (SIGINT, SIGTERM) or the SDK closes the connection.
//
// When ctx ends it also closes the SDK's connection, so a session stops
// at once: the SDK then cancels the calls in flight (their replies are
// not sent) instead of waiting for them to end.
//
// Like the SDK's own LoggingTransport, a wrapped connection no longer
// hears of the negotiated protocol version, which the SDK's stdio
// connection uses only to refuse JSON-RPC batches from protocol
// 2025-06-18 on: over serve's stdio a batch is answered (as a batch)
// with every protocol version.
type drainConn struct {
	mcp.Connection
	ctx     context.Context
	timeout time.Duration

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	changed chan struct{} // closed and replaced when pending shrinks
	// unanswered is the number of requests still unanswered when the
	// drain ran out (0 unless it did).
	unanswered int
	// badInput is the error of a line that is not JSON, which ended the
	// session.
	badInput error

	closeOnce sync.Once
	closed    chan struct{}
	// forced is closed when the session was ended rather than drained:
	// ctx ended or the drain ran out.
	forcedOnce sync.Once
	forced     chan struct{}
	stop       func() bool
}

func newDrainConn(ctx context.Context, inner mcp.Connection, timeout time.Duration) *drainConn {
	c := &drainConn{
		Connection: inner,
		ctx:        ctx,
		timeout:    timeout,
		pending:    map[jsonrpc.ID]bool{},
		changed:    make(chan struct{}),
		closed:     make(chan struct{}),
		forced:     make(chan struct{}),
	}
	c.stop = context.AfterFunc(ctx, func() {
		c.force()
		_ = inner.Close()
	})
	return c
}

// Connect implements mcp.Transport: the connection is made once, by
// newDrainConn.
func (c *drainConn) Connect(context.Context) (mcp.Connection, error) { return c, nil }

// Read implements mcp.Connection.
func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		// The end of input, or input the SDK cannot read on (either ends
		// the session): answer what was read first.
		// Anything but the end of input or serve's own stop: a line that
		// is not JSON, not a JSON-RPC message, or cut short.
		select {
		case <-c.closed:
		default:
			if !errors.Is(err, io.EOF) && c.ctx.Err() == nil && !osError(err) {
				c.mu.Lock()
				c.badInput = err
				c.mu.Unlock()
			}
		}
		c.drain()
		return nil, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		c.mu.Lock()
		switch {
		case req.IsCall() && req.Method != "subscriptions/listen":
			// A listen stream is answered only when the client cancels
			// it, which it no longer can: it is not waited for.
			c.pending[req.ID] = true
		case req.Method == "notifications/cancelled":
			// The client no longer waits for that reply.
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					c.answered(id)
				}
			}
		}
		c.mu.Unlock()
	}
	return msg, nil
}

// Write implements mcp.Connection.
func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		c.answered(resp.ID)
		c.mu.Unlock()
	}
	return err
}

// answered drops id from the requests waited for; c.mu is held.
func (c *drainConn) answered(id jsonrpc.ID) {
	if !c.pending[id] {
		return
	}
	delete(c.pending, id)
	close(c.changed)
	c.changed = make(chan struct{})
}

// drain waits until every request read has been answered, or the drain
// runs out, ctx ends or the connection is closed.
func (c *drainConn) drain() {
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	for {
		c.mu.Lock()
		n, changed := len(c.pending), c.changed
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			c.mu.Lock()
			c.unanswered = len(c.pending)
			c.mu.Unlock()
			c.force()
			return
		case <-c.ctx.Done():
			return
		case <-c.closed:
			return
		}
	}
}

func (c *drainConn) force() { c.forcedOnce.Do(func() { close(c.forced) }) }

// Unanswered is the number of requests left unanswered when the drain ran
// out.
func (c *drainConn) Unanswered() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unanswered
}

// osError reports whether err is the system's (standard input is a
// directory, a read failed), not one of what was read.
func osError(err error) bool {
	var pe *os.PathError
	var se *os.SyscallError
	var errno syscall.Errno
	return errors.As(err, &pe) || errors.As(err, &se) || errors.As(err, &errno)
}

// BadInput is the error of the line that was not JSON, if one ended the
// session.
func (c *drainConn) BadInput() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.badInput
}

// Close implements mcp.Connection.
func (c *drainConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.stop()
	})
	return c.Connection.Close()
}
