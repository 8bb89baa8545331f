// Package mcpwiretest serves MCP over streamable HTTP written by hand, for
// the tests of agentform's MCP clients (plan's and serve's) that need a
// server to answer what an SDK server never would: an endless answer, a
// wrong Content-Type, a tool list no SDK would send.
package mcpwiretest

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Request is a JSON-RPC request as an Answer gets it.
type Request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Answer writes the whole HTTP response to one request.
type Answer func(w http.ResponseWriter, req *Request)

// NewServer starts a server that answers a request whose method answers
// holds with that Answer; initialize otherwise as a server "raw" 1.0
// serving tools, in the protocol version the client asked for; any other
// call with an empty result. It answers notifications with 202 Accepted,
// DELETE with 200 and GET, a client asking for a stream of the server's
// own, with 405 Method Not Allowed: it has none. The server is closed,
// and its connections with it, when the test ends.
func NewServer(t testing.TB, answers map[string]Answer) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
		case http.MethodDelete:
			return
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req Request
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		if answer := answers[req.Method]; answer != nil && req.ID != nil {
			answer(w, &req)
			return
		}
		switch {
		case req.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case req.Method == "initialize":
			var params struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(req.Params, &params)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1.0"}}}`, req.ID, params.ProtocolVersion)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, req.ID)
		}
	}))
	// A client that stops reading an endless answer makes the handler's
	// writes fail: not worth a log line.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv
}

// Chunked reads R at most N bytes at a time, as a network connection may
// deliver what a server wrote.
type Chunked struct {
	R io.Reader
	N int
}

// Read implements io.Reader.
func (c *Chunked) Read(p []byte) (int, error) { return c.R.Read(p[:min(len(p), c.N)]) }
