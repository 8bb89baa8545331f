package mcpwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestCapture(t *testing.T) {
	c := NewCapture()
	id, _ := jsonrpc.MakeID(float64(7))
	other, _ := jsonrpc.MakeID(float64(8))
	c.Sent(&jsonrpc.Request{ID: id, Method: "tools/list"})
	c.Received(&jsonrpc.Response{ID: other, Result: json.RawMessage(`{"tools":[]}`)})
	if got := c.Take(); got != nil {
		t.Errorf("an answer to an unnoted request was kept: %s", got)
	}
	raw := `{"tools":[{"name":"x","inputSchema":{"type":"object","properties":{"n":{"maximum":100.0}}}}]}`
	c.Received(&jsonrpc.Response{ID: id, Result: json.RawMessage(raw)})
	if got := string(c.Take()); got != raw {
		t.Errorf("Take: %s, want the bytes as sent", got)
	}
	if c.Take() != nil {
		t.Error("Take twice returned the result again")
	}
	init, _ := jsonrpc.MakeID("init")
	c.Sent(&jsonrpc.Request{ID: init, Method: "initialize"})
	c.Received(&jsonrpc.Response{ID: init, Result: json.RawMessage(`{"protocolVersion":"2025-06-18"}`)})
	if v := c.ProtocolVersion(); v != "2025-06-18" {
		t.Errorf("ProtocolVersion: %q", v)
	}
}

func TestTail(t *testing.T) {
	b := &Tail{Max: 10}
	b.Write([]byte("abc\n"))
	b.Write([]byte("defg\n"))
	if got := b.String(); got != "abc\ndefg\n" {
		t.Errorf("Tail: %q, want everything", got)
	}
	// Once bytes are dropped, the partial first line goes too: a secret
	// cut there could not be recognised any more.
	b.Write([]byte("tok-SECRET\nhi\n"))
	if got := b.String(); got != "hi\n" {
		t.Errorf("Tail: %q, want the whole lines of the last 10 bytes", got)
	}
	b.Write([]byte("0123456789abc"))
	if got := b.String(); got != "" {
		t.Errorf("Tail: %q, want nothing: no whole line is left", got)
	}
}

func TestLookCommand(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "srv")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o644)
	if p, err := LookCommand("srv", "", "relative:"+dir); err != nil || p != exe {
		t.Errorf("on PATH: %q %v", p, err)
	}
	if p, err := LookCommand("./srv", dir, ""); err != nil || p != exe {
		t.Errorf("relative to dir: %q %v", p, err)
	}
	for name, want := range map[string]string{"plain": "not found", dir + "/plain": "not executable", "": "is empty", "./nope": "does not exist"} {
		if _, err := LookCommand(name, "", dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", name, err, want)
		}
	}
}

// TestLines: lines end at "\n", keep no trailing "\r", complete across
// feeds, and a line over Max is passed cut, with over set.
func TestLines(t *testing.T) {
	type got struct {
		line string
		over bool
	}
	var out []got
	s := Lines{Max: 6}
	for _, p := range []string{"id: ", "a\r\n", "\r\ndata: long line\nx", "y\n"} {
		s.Feed([]byte(p), func(l []byte, over bool) { out = append(out, got{string(l), over}) })
	}
	want := []got{{"id: a", false}, {"", false}, {"data: ", true}, {"xy", false}}
	if !slices.Equal(out, want) {
		t.Errorf("lines:\ngot:  %+v\nwant: %+v", out, want)
	}
}

// TestErrorText: what the SDK's decoder quotes of a server's bytes, cut
// after 32 of them, is left out; the SDK's own words stay.
func TestErrorText(t *testing.T) {
	_, err := jsonrpc.DecodeMessage([]byte(`"xxxxxxxxxxxxxxxxxxrotatedSECRETvalue99"`))
	if err == nil {
		t.Fatal("a JSON string decoded as a message")
	}
	wrapped := fmt.Errorf("connection closed: calling \"initialize\": client is closing: %v", err)
	got := ErrorText(wrapped)
	want := `connection closed: calling "initialize": client is closing: unmarshaling jsonrpc message: json: what the server sent could not be decoded (agentform does not quote it)`
	if got != want {
		t.Errorf("ErrorText\ngot:  %s\nwant: %s", got, want)
	}
	if got := ErrorText(errors.New("calling \"tools/list\": connection reset")); got != `calling "tools/list": connection reset` {
		t.Errorf("an error quoting nothing of the server changed: %s", got)
	}
}

// TestListing: a listing keeps up to MaxListedTools tools and
// MaxListedBytes bytes of definitions, and says which bound an answer
// would pass.
func TestListing(t *testing.T) {
	var l Listing
	if err := l.Keep(MaxListedBytes - 10); err != nil {
		t.Fatalf("a definition within the bound: %v", err)
	}
	if err := l.Keep(10); err != nil {
		t.Fatalf("exactly the bound: %v", err)
	}
	if err := l.Keep(1); err == nil || !strings.Contains(err.Error(), "more than 32 MiB of tool definitions") {
		t.Errorf("one byte over\ngot:  %v\nwant: the bound on bytes", err)
	}
	l = Listing{}
	for i := range MaxListedTools {
		if err := l.Keep(1); err != nil {
			t.Fatalf("tool %d: %v", i+1, err)
		}
	}
	if err := l.Keep(1); err == nil || !strings.Contains(err.Error(), "more than 10000 tools") {
		t.Errorf("one tool over\ngot:  %v\nwant: the bound on tools", err)
	}
}
