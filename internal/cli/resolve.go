package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/state"
	"github.com/agentform/agentform/lockfile"
)

// resolveFlags are the options of every command that resolves tools.
type resolveFlags struct {
	refresh  bool
	timeout  time.Duration
	lockMode string
	// cacheLater has resolveWorkspace return before the resolution cache
	// is written: the caller writes it with writeCacheInBackground.
	cacheLater bool
}

// writeCacheInBackground writes ws's resolution cache (resolveFlags
// cacheLater) while the caller goes on; the function it returns waits
// for it, once, and returns its warning (nothing when called again). The
// caller must call it before it exits.
func writeCacheInBackground(ws *resolve.Workspace) func() hcl.Diagnostics {
	done := make(chan hcl.Diagnostics, 1)
	go func() { done <- ws.WriteCache() }()
	var once sync.Once
	return func() (d hcl.Diagnostics) {
		once.Do(func() { d = <-done })
		return d
	}
}

func (m *Meta) addResolveFlags(fs interface {
	BoolVar(*bool, string, bool, string)
	DurationVar(*time.Duration, string, time.Duration, string)
	StringVar(*string, string, string, string)
}, rf *resolveFlags) {
	fs.BoolVar(&rf.refresh, "refresh", true, "contact MCP servers and A2A agents")
	fs.DurationVar(&rf.timeout, "resolve-timeout", resolve.DefaultTimeout, "timeout per remote operation")
	fs.StringVar(&rf.lockMode, "lockfile", "update", "update or readonly")
}

func (rf *resolveFlags) validate() error {
	if rf.lockMode != "update" && rf.lockMode != "readonly" {
		return fmt.Errorf("-lockfile must be update or readonly, not %q", rf.lockMode)
	}
	if err := resolve.CheckTimeout(rf.timeout); err != nil {
		return fmt.Errorf("-resolve-timeout %w", err)
	}
	return nil
}

// lockTimeoutVar defines -lock-timeout on fs: a duration, as flag.Duration
// reads it, that state.CheckLockTimeout accepts; the flag package reports
// one it refuses as an invalid value.
func lockTimeoutVar(fs *flag.FlagSet) *time.Duration {
	d := new(time.Duration)
	fs.Var((*lockTimeout)(d), "lock-timeout", "state lock timeout")
	return d
}

// lockTimeout is the flag.Value of -lock-timeout.
type lockTimeout time.Duration

func (v *lockTimeout) String() string { return time.Duration(*v).String() }

func (v *lockTimeout) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		// What flag.Duration says.
		return errors.New("parse error")
	}
	if err := state.CheckLockTimeout(d); err != nil {
		return err
	}
	*v = lockTimeout(d)
	return nil
}

// lockRead is a read of the lockfile started early (readLockAhead), so
// that parsing it (milliseconds for a few hundred entries) overlaps
// loading the manifest and opening the state.
type lockRead struct {
	done  chan struct{}
	src   []byte
	file  *lockfile.File
	diags hcl.Diagnostics
}

// readLockAhead starts reading and parsing the lockfile in the background;
// resolveWorkspace uses the result only if the file still holds the same
// bytes when it needs them.
func (m *Meta) readLockAhead() *lockRead {
	r := &lockRead{done: make(chan struct{})}
	path := filepath.Join(m.Dir, lockfile.FileName)
	go func() {
		defer close(r.done)
		src, err := lockfile.ReadFile(path)
		if err != nil {
			// Missing or unreadable: lockfile.Load says which, later.
			return
		}
		r.src = src
		r.file, r.diags = lockfile.Parse(src, lockfile.FileName)
	}()
	return r
}

// load returns the lockfile as lockfile.Load(dir) would now: what was
// read ahead when the file is unchanged since, a fresh read otherwise.
func (r *lockRead) load(dir string) (*lockfile.File, hcl.Diagnostics) {
	if r != nil {
		<-r.done
		if r.src != nil {
			if now, err := lockfile.ReadFile(filepath.Join(dir, lockfile.FileName)); err == nil && bytes.Equal(now, r.src) {
				return r.file, r.diags
			}
		}
	}
	return lockfile.Load(dir)
}

// resolveWorkspace reads the lockfile (through ahead, when not nil) and
// resolves every tool and skill, showing progress on a terminal when
// progress is set.
func (m *Meta) resolveWorkspace(ctx context.Context, cfg *manifest.Config, rf resolveFlags, progress bool, ahead *lockRead) (*resolve.Workspace, *lockfile.File, hcl.Diagnostics) {
	lock, diags := ahead.load(m.Dir)
	if len(diags) > 0 {
		// Let the diagnostics show the lockfile's source lines.
		if f := lockfile.Source(m.Dir); f != nil {
			cfg.Files[lockfile.FileName] = f
		}
	}
	if diags.HasErrors() {
		return nil, nil, diags
	}
	opts := resolve.Options{
		Env:     os.LookupEnv,
		Timeout: rf.timeout,
		Refresh: rf.refresh,
		// What the lockfile lacks is an error under -lockfile=readonly.
		LockReadonly: rf.lockMode == "readonly",
		Lock:         lock,
		Cache:        resolve.NewCache(m.Dir),
		// Planning can go on while the cache is written.
		WriteCacheLater: rf.cacheLater,
	}
	var stop func()
	if progress {
		opts.Progress, stop = m.progressPrinter()
		defer stop()
	}
	ws, d := resolve.Run(ctx, cfg, opts)
	return ws, lock, append(diags, d...)
}

// progressPrinter prints Terraform-style progress lines: when each block
// starts resolving, "Still resolving..." every 10 seconds for slow ones,
// and when it is done.
func (m *Meta) progressPrinter() (func(string, bool, time.Duration), func()) {
	var mu sync.Mutex
	started := map[string]time.Time{}
	done := make(chan struct{})
	ticker := time.NewTicker(10 * time.Second)
	go func() {
		for {
			select {
			case <-done:
				return
			case now := <-ticker.C:
				mu.Lock()
				var names []string
				for name := range started {
					names = append(names, name)
				}
				sort.Strings(names)
				for _, name := range names {
					fmt.Fprintf(m.Stdout, "%s: Still resolving... [%s elapsed]\n", name, now.Sub(started[name]).Round(time.Second))
				}
				mu.Unlock()
			}
		}
	}()
	report := func(address string, finished bool, elapsed time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if !finished {
			started[address] = time.Now()
			fmt.Fprintf(m.Stdout, "%s: Resolving...\n", address)
			return
		}
		delete(started, address)
		fmt.Fprintf(m.Stdout, "%s: Resolved [%s]\n", address, elapsed.Round(time.Millisecond))
	}
	return report, func() {
		ticker.Stop()
		close(done)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(m.Stdout)
	}
}
