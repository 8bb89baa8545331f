package planner

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentform/agentform/internal/artifact"
)

// networkAgentJSON plans the workspace whose manifest is acl and returns
// agent "a"'s agent.json, raw and parsed.
func networkAgentJSON(t *testing.T, acl string) ([]byte, *artifact.Agent) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.acl"), []byte(acl), 0o644); err != nil {
		t.Fatal(err)
	}
	p := planDir(t, dir, Options{})
	if p.Diagnostics.HasErrors() {
		t.Fatalf("planning: %v", p.Diagnostics)
	}
	files, err := p.ArtifactFiles("a")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Path == artifact.AgentName {
			a, err := artifact.ParseAgent(f.Data)
			if err != nil {
				t.Fatal(err)
			}
			return f.Data, a
		}
	}
	t.Fatal("no agent.json in the artifact")
	return nil, nil
}

const networkTestAgent = `
agent "a" {
  graph {
    type = "react"
  }
  model {
    provider = "anthropic"
    name     = "claude-haiku-4-5"
  }
}
`

// TestArtifactNetwork checks that the workspace's network block reaches
// agent.json with its runtime values kept as references (a secret header
// without its default), that its references are in the runtime list, and
// that a workspace without the block has no network field at all.
func TestArtifactNetwork(t *testing.T) {
	raw, a := networkAgentJSON(t, networkTestAgent+`
network {
  user_agent = runtime("NET_UA", "fetcher/1")
  headers = {
    "X-Deployment" = "staging"
    "X-Api-Key"    = secret(runtime("NET_API_KEY", "do-not-leak"))
  }
  limits {
    connect_timeout_ms = 2000
    request_timeout_ms = runtime("NET_TIMEOUT_MS", 15000)
    max_response_bytes = 1048576
    concurrency_limit  = 4
  }
  policy {
    methods = ["GET", "POST"]
    addresses {
      allow_loopback = runtime("NET_LOOPBACK", false)
      allow_private  = true
    }
    allow = [
      { protocol = "https", hostname = "*.acme.test" },
      { hostname = "127.0.0.1", port = "3000", pathname = "/v2/*" },
    ]
  }
}
`)
	if strings.Contains(string(raw), "do-not-leak") {
		t.Fatalf("agent.json holds a secret's default:\n%s", raw)
	}
	n := a.Network
	if n == nil {
		t.Fatalf("got: no network in agent.json\n%s\nwant: the workspace's network block", raw)
	}
	if n.UserAgent == nil || n.UserAgent.Runtime == nil || n.UserAgent.Runtime.Env != "NET_UA" || string(n.UserAgent.Runtime.Default) != `"fetcher/1"` {
		t.Errorf("user_agent\ngot:  %+v\nwant: a reference to NET_UA with default \"fetcher/1\"", n.UserAgent)
	}
	var headers map[string]json.RawMessage
	if err := json.Unmarshal(n.Headers, &headers); err != nil {
		t.Fatalf("headers: %v\n%s", err, n.Headers)
	}
	for k, v := range headers {
		var b bytes.Buffer
		if err := json.Compact(&b, v); err != nil {
			t.Fatal(err)
		}
		headers[k] = b.Bytes()
	}
	if got, want := string(headers["X-Deployment"]), `"staging"`; got != want {
		t.Errorf("headers X-Deployment\ngot:  %s\nwant: %s", got, want)
	}
	if got, want := string(headers["X-Api-Key"]), `{"env":"NET_API_KEY","has_default":true,"secret":true}`; got != want {
		t.Errorf("headers X-Api-Key\ngot:  %s\nwant: %s", got, want)
	}
	l := n.Limits
	if l == nil || l.ConnectTimeoutMS == nil || l.ConnectTimeoutMS.Value != 2000 || l.ConnectTimeoutMS.Runtime != nil ||
		l.RequestTimeoutMS == nil || l.RequestTimeoutMS.Runtime == nil || l.RequestTimeoutMS.Runtime.Env != "NET_TIMEOUT_MS" ||
		l.MaxResponseBytes == nil || l.MaxResponseBytes.Value != 1048576 || l.ConcurrencyLimit == nil || l.ConcurrencyLimit.Value != 4 ||
		l.ReadTimeoutMS != nil || l.MaxRedirects != nil {
		t.Errorf("limits\ngot:  %+v\nwant: connect 2000, request a reference to NET_TIMEOUT_MS, 1048576 bytes, 4 at once, the rest unset", l)
	}
	p := n.Policy
	if p == nil {
		t.Fatal("got: no policy\nwant: the policy block")
	}
	if p.Methods == nil || p.Methods.Runtime != nil || len(p.Methods.Values) != 2 || p.Methods.Values[0].Value != "GET" || p.Methods.Values[1].Value != "POST" {
		t.Errorf("methods\ngot:  %+v\nwant: GET, POST", p.Methods)
	}
	wantAllow := []artifact.URLPattern{{Protocol: "https", Hostname: "*.acme.test"}, {Hostname: "127.0.0.1", Port: "3000", Pathname: "/v2/*"}}
	if !p.AllowSet || len(p.Allow) != 2 || p.Allow[0] != wantAllow[0] || p.Allow[1] != wantAllow[1] {
		t.Errorf("allow\ngot:  %v (set %v)\nwant: %v (set true)", p.Allow, p.AllowSet, wantAllow)
	}
	ad := p.Addresses
	if ad.AllowLoopback.Runtime == nil || ad.AllowLoopback.Runtime.Env != "NET_LOOPBACK" || !ad.AllowPrivate.Value || ad.AllowPrivate.Runtime != nil ||
		ad.AllowLinkLocal.Value || ad.AllowLinkLocal.Runtime != nil {
		t.Errorf("addresses\ngot:  %+v\nwant: loopback a reference to NET_LOOPBACK, private true, link-local false", ad)
	}
	envs := map[string]bool{}
	for _, r := range a.Runtime {
		envs[r.Env] = true
	}
	for _, env := range []string{"NET_UA", "NET_API_KEY", "NET_TIMEOUT_MS", "NET_LOOPBACK"} {
		if !envs[env] {
			t.Errorf("runtime\ngot:  %v\nwant: %s among them", a.Runtime, env)
		}
	}

	// A policy that writes allow = [] allows nothing, and says so.
	_, a = networkAgentJSON(t, networkTestAgent+`
network {
  policy {
    allow = []
  }
}
`)
	if a.Network == nil || a.Network.Policy == nil || !a.Network.Policy.AllowSet || len(a.Network.Policy.Allow) != 0 {
		t.Errorf("allow = []\ngot:  %+v\nwant: an empty allow list with allow_set", a.Network)
	}

	raw, a = networkAgentJSON(t, networkTestAgent)
	if a.Network != nil || strings.Contains(string(raw), `"network"`) {
		t.Errorf("without a network block\ngot:\n%s\nwant: no network field", raw)
	}
}
