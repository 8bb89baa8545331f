package serve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServerWithdrawsChangedUpstream runs the whole server over an mcp
// block: a tool changed after the lock is not listed and its calls are
// recorded as blocked; a tool that changes while serving disappears from
// tools/list, and the client is told.
func TestServerWithdrawsChangedUpstream(t *testing.T) {
	bin := mcpTestBuildServer(t, t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.acl": mcpTestManifest(fmt.Sprintf(`
  transport = "stdio"
  command   = %q
  args      = ["-echo", "-poison-on-signal=tool3", runtime("SRV_POISON", "-name=agentform-test-server"), runtime("SRV_PIDFILE")]
`, bin))})
	_, _, data := buildArtifact(t, dir, "assistant", map[string]string{"SRV_PIDFILE": "-pidfile=" + filepath.Join(dir, "plan.pid")})
	path := filepath.Join(dir, "assistant.agent.tgz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(dir, "serve.pid")
	env := map[string]string{"SRV_POISON": "-poison=tool2", "SRV_PIDFILE": "-pidfile=" + pidfile}
	s, err := Open(context.Background(), path, Options{Dir: dir, Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Logf: func(f string, a ...any) { t.Logf(f, a...) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	changed := make(chan struct{}, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	go s.MCPServer(s.Grant(), "stdio", "t").Run(ctx, st)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list := func() []string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		slices.Sort(names)
		return names
	}
	if got := list(); !slices.Equal(got, []string{"srv__tool1", "srv__tool3"}) {
		t.Errorf("tools/list with tool2 poisoned since the lock: %v, want srv__tool1 srv__tool3", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "srv__tool2", Arguments: map[string]any{"x": 1}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "withdrawn") {
		t.Errorf("call of the withdrawn srv__tool2: %v %+v, want a blocked error saying it was withdrawn", err, res)
	}
	// tool3 changes while served: the upstream announces it, serve
	// withdraws it and tells the client.
	pid := mcpTestPid(t, pidfile)
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed reached the client after the upstream changed tool3")
	}
	if got := list(); !slices.Equal(got, []string{"srv__tool1"}) {
		t.Errorf("tools/list after tool3 changed: %v, want srv__tool1 only", got)
	}
	recs, err := s.db.Calls(0)
	if err != nil || len(recs) != 1 || recs[0].Status != StatusBlocked {
		t.Errorf("records: %v %+v, want the one blocked call", err, recs)
	}
}
