//go:build unix

package cli

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestE2ECollectorSetBeforeHeavyInit: the binary's collector settings
// (internal/memtune/early) take effect while packages are initialised,
// before any collection and before the package whose initialisation
// allocates the most (jsonschema's metaschemas, about 1.7 MB), so that no
// command starts with a collection in the middle of start-up. Read from
// Go's own init and collector traces.
func TestE2ECollectorSetBeforeHeavyInit(t *testing.T) {
	bin := e2eBinary(t)
	cmd := exec.Command(bin, "version")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "GODEBUG=inittrace=1,gctrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("agentform version: %v\n%s", err, stderr.String())
	}
	// init PKG @T ms, C ms clock, B bytes, A allocs
	initLine := regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, \d+ allocs$`)
	gcLine := regexp.MustCompile(`^gc \d+ @`)
	const early = "github.com/agentform/agentform/internal/memtune/early"
	const heavy = 1 << 20
	var found, heavyAfter bool
	for _, line := range strings.Split(stderr.String(), "\n") {
		if gcLine.MatchString(line) && !found {
			t.Errorf("a collection before the collector settings (%s): %s", early, line)
		}
		m := initLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		bytes, _ := strconv.Atoi(m[2])
		switch {
		case m[1] == early:
			found = true
		case bytes >= heavy && !found:
			t.Errorf("%s allocates %d bytes while initialised before the collector settings (%s)", m[1], bytes, early)
		case bytes >= heavy:
			heavyAfter = true
		}
	}
	if !found {
		t.Fatalf("%s is not initialised in the binary; traces:\n%s", early, stderr.String())
	}
	// The order matters only while some package's initialisation is heavy;
	// if none is, this test no longer shows anything and says so.
	if !heavyAfter {
		t.Errorf("no package allocates %d bytes or more at initialisation any more: this test checks nothing and can go", heavy)
	}
}
