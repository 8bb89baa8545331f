package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/mcpwire/mcpwiretest"
	"github.com/agentform/agentform/lockfile"
)

// mcpRawServer is a streamable HTTP MCP server written by hand
// (mcpwiretest), so that it can answer what an SDK server never would;
// list answers tools/list, given the request's id.
func mcpRawServer(t *testing.T, list func(w http.ResponseWriter, id json.RawMessage)) *httptest.Server {
	t.Helper()
	return mcpwiretest.NewServer(t, map[string]mcpwiretest.Answer{
		"tools/list": func(w http.ResponseWriter, req *mcpwiretest.Request) { list(w, req.ID) },
	})
}

// mcpToolsAnswer answers tools/list with tools, the JSON text of the
// array of tools, sent as it is.
func mcpToolsAnswer(tools string) func(w http.ResponseWriter, id json.RawMessage) {
	return func(w http.ResponseWriter, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":%s}}`, id, tools)
	}
}

// mcpSummaries lists diagnostics as "severity: summary".
func mcpSummaries(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		out = append(out, sev+": "+d.Summary)
	}
	return out
}

// TestResolveMCPServedToolChecks: a registered served tool whose name
// could read as another (a zero-width space, an escape, whitespace, bytes
// that are not UTF-8) or whose inputSchema is no object schema is an
// error naming the tool; names outside MCP's recommended characters are
// a warning. A tool expose leaves out is not registered, and nothing about
// it fails the plan.
func TestResolveMCPServedToolChecks(t *testing.T) {
	obj := `"inputSchema":{"type":"object"}`
	long := strings.Repeat("x", 500)
	for _, tc := range []struct {
		name, tools, extra string
		want               []string // "severity: summary", in order
		details            []string // one substring per diagnostic
		registered         []string
		atExpose           bool // the first diagnostic points at expose's element
	}{
		{
			name:    "a zero-width space",
			tools:   `[{"name":"delete_all\u200b",` + obj + `},{"name":"ok",` + obj + `}]`,
			want:    []string{"error: Invalid MCP tool name"},
			details: []string{`a tool named "delete_all\u200b", which holds U+200B, a control, format or invisible character: it could read as another name`},
		},
		{
			name:  "escapes, line breaks, bidirectional controls, spaces",
			tools: `[{"name":"x\u001b[31mred",` + obj + `},{"name":"tool\nnewline",` + obj + `},{"name":"\u202eevil",` + obj + `},{"name":"a b",` + obj + `},{"name":"tab\there",` + obj + `}]`,
			want:  []string{"error: Invalid MCP tool name", "error: Invalid MCP tool name", "error: Invalid MCP tool name", "error: Invalid MCP tool name", "error: Invalid MCP tool name"},
			details: []string{
				`"a b", which holds U+0020, a whitespace character`,
				`"tab\there", which holds U+0009`,
				`"tool\nnewline", which holds U+000A`,
				`"x\x1b[31mred", which holds U+001B`,
				`"\u202eevil", which holds U+202E`,
			},
		},
		{
			name:    "bytes that are not UTF-8",
			tools:   "[{\"name\":\"bad\xffname\"," + obj + "}]",
			want:    []string{"error: Invalid MCP tool name"},
			details: []string{`"bad\ufffdname", which holds U+FFFD, the replacement character`},
		},
		{
			name:       "names outside the recommended characters are registered, with a warning",
			tools:      `[{"name":"../../etc",` + obj + `},{"name":"a\"q",` + obj + `},{"name":"` + long + `",` + obj + `},{"name":"fine.name-1_x",` + obj + `}]`,
			want:       []string{"warning: MCP tool names outside the recommended characters"},
			details:    []string{`serves 3 tools with a name outside what MCP recommends for tool names (1 to 128 ASCII letters, digits, "_", "-" and "."): "../../etc" (holds '/'), "a\"q" (holds '"'), "` + long[:64] + `"… (500 characters long)`},
			registered: []string{"srv__../../etc", "srv__a\"q", "srv__fine.name-1_x", "srv__" + long},
		},
		{
			name:  "input schemas that are no object schema, or none",
			tools: `[{"name":"s1","inputSchema":[1,2]},{"name":"s2","inputSchema":"str"},{"name":"s3","inputSchema":{"type":"string"}},{"name":"s4"},{"name":"s5","inputSchema":{"properties":{}}},{"name":"s6","inputSchema":{"type":"object","properties":{"a":{"type":5}}}},{"name":"ok",` + obj + `}]`,
			want:  []string{"error: Invalid MCP tool schema", "error: Invalid MCP tool schema", "error: Invalid MCP tool schema", "error: Invalid MCP tool schema", "error: Invalid MCP tool schema", "error: Invalid MCP tool schema"},
			details: []string{
				`the tool "s1" with an inputSchema that cannot describe its arguments: it is an array, not a JSON object`,
				`the tool "s2" with an inputSchema that cannot describe its arguments: it is a string, not a JSON object`,
				`the tool "s3" with an inputSchema that cannot describe its arguments: its "type" is "string"`,
				`the tool "s4" without an inputSchema`,
				`the tool "s5" with an inputSchema that cannot describe its arguments: it has no "type"`,
				`the tool "s6" with an inputSchema that cannot describe its arguments: it is not a valid JSON Schema: at "/properties/a/type"`,
			},
		},
		{
			name:       "tools expose leaves out are not checked",
			tools:      `[{"name":"delete_all\u200b",` + obj + `},{"name":"a b","inputSchema":"str"},{"name":"s4"},{"name":"../x",` + obj + `},{"name":"ok",` + obj + `}]`,
			extra:      `expose = ["ok"]`,
			registered: []string{"srv__ok"},
		},
		{
			name:     "an exposed tool is pointed at in expose",
			tools:    `[{"name":"s4"},{"name":"ok",` + obj + `}]`,
			extra:    `expose = ["ok", "s4"]`,
			want:     []string{"error: Invalid MCP tool schema"},
			details:  []string{`the tool "s4" without an inputSchema`},
			atExpose: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcpRawServer(t, mcpToolsAnswer(tc.tools))
			req := mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\n%s\n", srv.URL+"/mcp", tc.extra), nil)
			res, diags := ResolveMCP(context.Background(), req)
			if got := mcpSummaries(diags); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("diagnostics\ngot:  %v\nwant: %v\n%s", got, tc.want, diags.Error())
			}
			for i, want := range tc.details {
				if !strings.Contains(diags[i].Detail, want) {
					t.Errorf("diagnostic %d\ngot:  %s\nwant: it to contain %s", i, diags[i].Detail, want)
				}
			}
			if tc.atExpose {
				mcpSameRange(t, "error", diags[0].Subject, req.Tool.MCP.Expose.ElemRanges[1])
			}
			if diags.HasErrors() {
				if !res.Unresolved || res.Pin != nil {
					t.Errorf("result\ngot:  Unresolved=%v Pin=%v\nwant: unresolved, nothing pinned", res.Unresolved, res.Pin)
				}
				return
			}
			if got := mcpNames(res.Tools); !reflect.DeepEqual(got, tc.registered) {
				t.Errorf("registered\ngot:  %q\nwant: %q", got, tc.registered)
			}
			if got := len(res.Pin.Served); got != len(tc.registered) {
				t.Errorf("pinned tools\ngot:  %d\nwant: %d", got, len(tc.registered))
			}
		})
	}
}

// TestResolveMCPLockedToolChecks: a lock entry an earlier agentform
// pinned with a tool it would refuse now fails the plan that builds from
// it, saying where the tool comes from.
func TestResolveMCPLockedToolChecks(t *testing.T) {
	def := `{"inputSchema":"str","name":"s2"}`
	locked := &lockfile.Tool{Kind: "mcp", ServerName: "raw", ServerVersion: "1.0", HashedFields: MCPHashedFields,
		Served: map[string]string{"s2": SHA256([]byte(def))}, Definitions: map[string]string{"s2": lockfile.ExactJSON(def)}}
	req := mcpTestRequest(t, "transport = \"http\"\nurl = \"http://127.0.0.1:1/mcp\"\n", nil)
	req.Refresh, req.Locked = false, locked
	res, diags := ResolveMCP(context.Background(), req)
	d := mcpDiag(t, diags, "Invalid MCP tool schema")
	if want := `The entry for "srv" in agentform.lock.hcl (the server not reached) records the tool "s2" with an inputSchema that cannot describe its arguments: it is a string`; !strings.Contains(d.Detail, want) {
		t.Errorf("detail\ngot:  %s\nwant: it to contain %s", d.Detail, want)
	}
	if !res.Unresolved {
		t.Errorf("Unresolved\ngot:  false\nwant: true")
	}
}

// TestResolveMCPCapabilitiesForUnservedTool: tool_capabilities naming a
// tool the server does not serve stays a warning, which says that the
// tags then apply to no tool and lists the names that are served.
func TestResolveMCPCapabilitiesForUnservedTool(t *testing.T) {
	srv := mcpRawServer(t, mcpToolsAnswer(`[{"name":"delete_all_v2","inputSchema":{"type":"object"}}]`))
	req := mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\ntool_capabilities = { delete_all = [\"admin\"] }\n", srv.URL+"/mcp"), nil)
	res, diags := ResolveMCP(context.Background(), req)
	d := mcpDiag(t, diags, "Capabilities for a tool that is not served")
	for _, want := range []string{
		`tool_capabilities names "delete_all", but the MCP server does not serve it, so its tags are required for no tool`,
		`Served tools: "delete_all_v2".`,
		"character for character",
	} {
		if !strings.Contains(d.Detail, want) {
			t.Errorf("detail\ngot:  %s\nwant: it to contain %s", d.Detail, want)
		}
	}
	mcpSameRange(t, "warning", d.Subject, req.Tool.MCP.ToolCapabilities["delete_all"].Range)
	if diags.HasErrors() || len(res.Tools) != 1 || res.Tools[0].Requires != nil {
		t.Errorf("result\ngot:  %v %+v\nwant: delete_all_v2 registered, requiring nothing more", diags.Error(), res.Tools)
	}

	// A look-alike shows escaped, a name refused as unreadable is not
	// listed (it is never registered), a long name is cut, and a long
	// list is cut too.
	var tools []string
	for i := range 25 {
		tools = append(tools, fmt.Sprintf(`{"name":"t%02d","inputSchema":{"type":"object"}}`, i))
	}
	tools = append(tools, `{"name":"d\u0435lete_all","inputSchema":{"type":"object"}}`, `{"name":"delete_all\u200b","inputSchema":{"type":"object"}}`,
		`{"name":"a`+strings.Repeat("b", 200)+`","inputSchema":{"type":"object"}}`)
	srv = mcpRawServer(t, mcpToolsAnswer("["+strings.Join(tools, ",")+"]"))
	req = mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\ntool_capabilities = { delete_all = [\"admin\"] }\n", srv.URL+"/mcp"), nil)
	_, diags = ResolveMCP(context.Background(), req)
	d = mcpDiag(t, diags, "Capabilities for a tool that is not served")
	for _, want := range []string{
		`Served tools: "a` + strings.Repeat("b", 63) + `"…, "d\u0435lete_all", "t00", `,
		`"t17" and 7 more.`,
	} {
		if !strings.Contains(d.Detail, want) {
			t.Errorf("detail\ngot:  %s\nwant: it to contain %s", d.Detail, want)
		}
	}
	if strings.Contains(d.Detail, `\u200b`) || strings.Contains(d.Detail, "\u0435") {
		t.Errorf("detail lists the refused name, or the look-alike unescaped:\n%s", d.Detail)
	}
}

// TestResolveMCPAnswerTooLarge: a server that answers without end, as one
// JSON body, as one event-stream line, or as event after event, fails the
// plan as soon as one response passes mcpMaxMessage, having read little
// more than that, not at the timeout with gigabytes read.
func TestResolveMCPAnswerTooLarge(t *testing.T) {
	chunk := strings.Repeat("x", 64<<10)
	for _, tc := range []struct {
		name, contentType, start, repeat string
	}{
		{name: "JSON", contentType: "application/json", start: `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"a","description":"`, repeat: chunk},
		{name: "one event-stream line", contentType: "text/event-stream", start: `data: {"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"a","description":"`, repeat: chunk},
		{name: "event after event", contentType: "text/event-stream", start: ": %s\n\n", repeat: `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + chunk + "\"}}\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var written atomic.Int64
			srv := mcpRawServer(t, func(w http.ResponseWriter, id json.RawMessage) {
				w.Header().Set("Content-Type", tc.contentType)
				n, err := fmt.Fprintf(w, tc.start, id)
				for ; err == nil; n, err = io.WriteString(w, tc.repeat) {
					written.Add(int64(n))
				}
			})
			req := mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\n", srv.URL+"/mcp"), nil)
			req.Timeout = time.Minute
			start := time.Now()
			res, diags := ResolveMCP(context.Background(), req)
			took := time.Since(start)
			d := mcpDiag(t, diags, "MCP server answer too large")
			if !strings.Contains(d.Detail, "sent more than 16 MiB in one HTTP response") {
				t.Errorf("detail\ngot:  %s\nwant: it to name the 16 MiB bound", d.Detail)
			}
			mcpSameRange(t, "error", d.Subject, req.Tool.MCP.URL.Range)
			if !res.Unresolved {
				t.Errorf("Unresolved\ngot:  false\nwant: true")
			}
			if took > 20*time.Second {
				t.Errorf("ResolveMCP took %s\nwant: it to stop at the bound, long before the 1m timeout", took)
			}
			srv.CloseClientConnections()
			// What the server could write: the bound, and what the
			// connection buffers.
			if w := written.Load(); w > 64<<20 {
				t.Errorf("the server wrote %d MiB\nwant: little more than 16 MiB read", w>>20)
			}
		})
	}
}

// TestResolveMCPWrongContentType: an answer to a call that is neither
// JSON nor an event stream (a login page, a proxy's) is reported by its
// Content-Type, at the url; a notification's answer is not looked at.
func TestResolveMCPWrongContentType(t *testing.T) {
	page := func(ct string) func(w http.ResponseWriter, id json.RawMessage) {
		return func(w http.ResponseWriter, id json.RawMessage) {
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			} else {
				w.Header()["Content-Type"] = nil
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, id)
		}
	}
	t.Run("a login page for every request", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<html><body>Sign in</body></html>")
		}))
		t.Cleanup(srv.Close)
		req := mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\n", srv.URL+"/mcp"), nil)
		_, diags := ResolveMCP(context.Background(), req)
		d := mcpDiag(t, diags, "MCP server answered with another content type")
		if want := `answered with Content-Type "text/html; charset=utf-8", not JSON (application/json) or an event stream (text/event-stream)`; !strings.Contains(d.Detail, want) {
			t.Errorf("detail\ngot:  %s\nwant: it to contain %s", d.Detail, want)
		}
		mcpSameRange(t, "error", d.Subject, req.Tool.MCP.URL.Range)
	})
	for _, tc := range []struct{ name, ct, want string }{
		{"text/plain", "text/plain", `answered with Content-Type "text/plain"`},
		{"no content type", "", "answered with no Content-Type"},
	} {
		t.Run("tools/list answered with "+tc.name, func(t *testing.T) {
			srv := mcpRawServer(t, page(tc.ct))
			req := mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\n", srv.URL+"/mcp"), nil)
			_, diags := ResolveMCP(context.Background(), req)
			if d := mcpDiag(t, diags, "MCP server answered with another content type"); !strings.Contains(d.Detail, tc.want) {
				t.Errorf("detail\ngot:  %s\nwant: it to contain %s", d.Detail, tc.want)
			}
		})
	}
	// Cut after 64 characters, but redacted before: a server echoing the
	// token into its Content-Type showed the token's first characters.
	t.Run("a Content-Type that echoes the token", func(t *testing.T) {
		const token = "Hd82KsPq01MzXv6WcRt5"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; note="+strings.Repeat("y", 40)+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			fmt.Fprint(w, "<html></html>")
		}))
		t.Cleanup(srv.Close)
		req := mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\nauth_token = secret(runtime(\"MCP_TOKEN\"))\n", srv.URL+"/mcp"), map[string]string{"MCP_TOKEN": token})
		_, diags := ResolveMCP(context.Background(), req)
		d := mcpDiag(t, diags, "MCP server answered with another content type")
		if want := `answered with Content-Type "text/html; note=` + strings.Repeat("y", 40) + `(value o"…`; !strings.Contains(d.Detail, want) {
			t.Errorf("detail\ngot:  %s\nwant: it to contain %s", d.Detail, want)
		}
		if strings.Contains(d.Detail, token[:4]) {
			t.Errorf("detail quotes the start of the token:\n%s", d.Detail)
		}
	})
	t.Run("a notification answered with a page is not the failure", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(body, &msg)
			switch {
			case msg.ID == nil:
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<html>ok</html>")
			case msg.Method == "initialize":
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}}`, msg.ID)
			default:
				<-r.Context().Done()
			}
		}))
		t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
		req := mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\n", srv.URL+"/mcp"), nil)
		req.Timeout = time.Second
		_, diags := ResolveMCP(context.Background(), req)
		mcpDiag(t, diags, "MCP server did not answer")
	})
}

// TestResolveMCPListingBound: what one server's pages list in all is
// bounded, each page being within the bound on one answer: a server that
// pages tool after tool fails the plan once the definitions pass 32 MiB,
// or the tools 10,000, instead of making the plan keep them all.
func TestResolveMCPListingBound(t *testing.T) {
	pages := func(tool func(page int) string, last int) func(w http.ResponseWriter, id json.RawMessage) {
		var n atomic.Int64
		return func(w http.ResponseWriter, id json.RawMessage) {
			page := int(n.Add(1))
			next := ""
			if page < last {
				next = fmt.Sprintf(`,"nextCursor":"p%d"`, page+1)
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]%s}}`, id, tool(page), next)
		}
	}
	for _, tc := range []struct {
		name  string
		tool  func(page int) string
		pages int
		want  string
	}{
		{"definitions over 32 MiB", func(page int) string {
			return fmt.Sprintf(`{"name":"t%d","description":"%s","inputSchema":{"type":"object"}}`, page, strings.Repeat("x", 11<<20))
		}, 4, "tools/list lists more than 32 MiB of tool definitions over its pages, the most agentform keeps of one server"},
		{"over 10,000 tools", func(page int) string {
			tools := make([]string, 1000)
			for i := range tools {
				tools[i] = fmt.Sprintf(`{"name":"t%d_%d","inputSchema":{"type":"object"}}`, page, i)
			}
			return strings.Join(tools, ",")
		}, 11, "tools/list lists more than 10000 tools over its pages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcpRawServer(t, pages(tc.tool, tc.pages))
			req := mcpTestRequest(t, fmt.Sprintf("transport = \"http\"\nurl = %q\n", srv.URL+"/mcp"), nil)
			res, diags := ResolveMCP(context.Background(), req)
			d := mcpDiag(t, diags, "Invalid MCP tools/list answer")
			if !strings.Contains(d.Detail, tc.want) {
				t.Errorf("detail\ngot:  %s\nwant: it to contain %q", d.Detail, tc.want)
			}
			mcpSameRange(t, "error", d.Subject, req.Tool.MCP.URL.Range)
			if res == nil || !res.Unresolved {
				t.Errorf("result: %+v, want unresolved", res)
			}
		})
	}
}
