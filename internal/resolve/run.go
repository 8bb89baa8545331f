package resolve

import (
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/lockfile"
)

// Options control resolving a workspace.
type Options struct {
	// Env reads runtime() values for discovery; nil reads nothing.
	Env func(name string) (string, bool)
	// Timeout bounds each remote operation; 0 means DefaultTimeout.
	Timeout time.Duration
	// TimeoutName is how the caller's user sets Timeout, for the advice
	// of a diagnostic about a timeout ("raise -resolve-timeout"):
	// DefaultTimeoutName when empty.
	TimeoutName string
	// Refresh is false under -refresh=false: no remote contact.
	Refresh bool
	// LockReadonly is set under -lockfile=readonly: what the lockfile
	// lacks is an error where it would be a warning.
	LockReadonly bool
	// Lock is the current lockfile (never nil: use lockfile.New()).
	Lock *lockfile.File
	// Cache stores results by input digest; nil disables it.
	Cache *Cache
	// Progress, when set, is told when each block starts and ends, for
	// progress lines on a terminal. It may be called concurrently.
	Progress func(address string, done bool, elapsed time.Duration)
	// WriteCacheLater leaves writing Cache to the caller: Run returns
	// without writing it, and the caller calls Workspace.WriteCache (in
	// the background while it plans, say) before it exits.
	WriteCacheLater bool
}

// Workspace is the resolution of every enabled tool block and every skill.
type Workspace struct {
	Tools  map[string]*Resolved
	Skills map[string]*ResolvedSkill

	// cache is where Run stores what it resolved (WriteCache).
	cache *Cache
}

// WriteCache writes what Run resolved to the resolution cache and returns
// the warning a cache that cannot be written gives. Run calls it unless
// told Options.WriteCacheLater; a later call writes nothing more.
func (w *Workspace) WriteCache() hcl.Diagnostics {
	if w == nil {
		return nil
	}
	// A cache that cannot be written only costs the next plan a
	// rebuild, which the warning says.
	if err := w.cache.Flush(); err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Resolution cache not written",
			Detail: "agentform could not store what it resolved in its cache, so the next plan resolves those tools again: " + err.Error() + "."}}
	}
	return nil
}

// resolvers maps each tool kind to its resolver.
var resolvers = map[string]Resolver{
	manifest.KindJavaScript: ResolveJavaScript,
	manifest.KindPython:     ResolvePython,
	manifest.KindBash:       ResolveBash,
	manifest.KindMCP:        ResolveMCP,
	manifest.KindA2A:        ResolveA2A,
}

// Run resolves the workspace's enabled tools and its skills in parallel,
// at most GOMAXPROCS at a time (besides javascript's esbuild builds, and
// the one reader that reads the definitions of finished builds while the
// next runs: see jsResolveAll). Disabled tools (enabled = false) are not
// resolved. Diagnostics come back in a stable order.
func Run(ctx context.Context, cfg *manifest.Config, opts Options) (*Workspace, hcl.Diagnostics) {
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		dir = cfg.Dir
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	root := ProjectRoot(dir)
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	lock := opts.Lock
	if lock == nil {
		lock = lockfile.New()
	}
	env := opts.Env
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}

	ws := &Workspace{Tools: map[string]*Resolved{}, Skills: map[string]*ResolvedSkill{}}
	var mu sync.Mutex
	var diags hcl.Diagnostics
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	run := func(address string, f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			start := time.Now()
			if opts.Progress != nil {
				opts.Progress(address, false, 0)
			}
			f()
			if opts.Progress != nil {
				opts.Progress(address, true, time.Since(start))
			}
		}()
	}
	var jsJobs []*jsJob
	for _, t := range cfg.Tools {
		if t.Enabled.Known() && !t.Enabled.Value {
			continue
		}
		resolver, ok := resolvers[t.Kind]
		if !ok {
			continue
		}
		req := Request{Config: cfg, Tool: t, Dir: dir, Root: root, Env: env, Timeout: timeout, TimeoutName: opts.TimeoutName,
			Locked: lock.Tools[t.Name], Refresh: opts.Refresh, LockReadonly: opts.LockReadonly, Cache: opts.Cache, dirsReal: true}
		if t.Kind == manifest.KindJavaScript {
			// Javascript blocks are bundled together, below.
			jsJobs = append(jsJobs, jsProgressJob(req, "tool."+t.Name, opts.Progress))
			continue
		}
		run("tool."+t.Name, func() {
			res, d := resolver(ctx, req)
			mu.Lock()
			defer mu.Unlock()
			diags = append(diags, d...)
			if res != nil {
				// The pin as the lockfile stores it, whether it came from
				// the server or from the lock: a plan from either then
				// records, builds and compares the same strings.
				res.Pin = res.Pin.Stored()
				ws.Tools[t.Name] = res
			}
		})
	}
	for _, s := range cfg.Skills {
		req := SkillRequest{Config: cfg, Skill: s, Dir: dir, Root: root, Locked: lock.Skills[s.Name]}
		run("skill."+s.Name, func() {
			res, d := ResolveSkill(ctx, req)
			mu.Lock()
			defer mu.Unlock()
			diags = append(diags, d...)
			if res != nil {
				ws.Skills[s.Name] = res
			}
		})
	}
	if len(jsJobs) > 0 {
		// The coordinator holds no slot: only the per-package steps do.
		wg.Add(1)
		go func() {
			defer wg.Done()
			jsResolveAll(ctx, jsJobs, func(n int, f func(int)) {
				// A few workers take the packages in turn rather than a
				// goroutine each: reading a definition runs deep in goja,
				// and a fresh goroutine's stack is grown and copied again
				// for every package.
				var next atomic.Int64
				var each sync.WaitGroup
				for range min(n, cap(sem)) {
					each.Add(1)
					go func() {
						defer each.Done()
						for {
							i := int(next.Add(1)) - 1
							if i >= n {
								return
							}
							select {
							case sem <- struct{}{}:
							case <-ctx.Done():
								return
							}
							f(i)
							<-sem
						}
					}()
				}
				each.Wait()
			})
			mu.Lock()
			defer mu.Unlock()
			for _, j := range jsJobs {
				diags = append(diags, j.diags...)
				if j.res != nil {
					ws.Tools[j.req.Tool.Name] = j.res
				}
			}
		}()
	}
	wg.Wait()
	if ctx.Err() == nil {
		diags = append(diags, checkWritableCommands(cfg, dir)...)
	}
	if err := ctx.Err(); err != nil {
		// One error says so, not one per tool the interruption stopped.
		diags = slices.DeleteFunc(diags, func(d *hcl.Diagnostic) bool {
			return slices.Contains(cancelledSummaries, d.Summary)
		})
		why := "it was interrupted (SIGINT or SIGTERM), or its caller cancelled it"
		if errors.Is(err, context.DeadlineExceeded) {
			why = "its deadline passed"
		}
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Resolution interrupted",
			Detail: "agentform stopped resolving tools before it finished: " + why + ". Nothing is planned or applied from a resolution cut short; run the command again."})
	}
	// Results are cached in memory while tools resolve and written in one
	// transaction at the end, here or by the caller.
	ws.cache = opts.Cache
	if !opts.WriteCacheLater {
		diags = append(diags, ws.WriteCache()...)
	}
	slices.SortStableFunc(diags, compareDiags)
	return ws, diags
}

// jsProgressJob is a javascript job that reports its progress as one
// block from the start of its preparation to the end of its resolution.
func jsProgressJob(req Request, address string, progress func(string, bool, time.Duration)) *jsJob {
	j := &jsJob{req: req}
	if progress != nil {
		var start time.Time
		j.start = func() {
			start = time.Now()
			progress(address, false, 0)
		}
		j.done = func() { progress(address, true, time.Since(start)) }
	}
	return j
}

// compareDiags orders diagnostics by file and position, those without a
// location last, so parallel resolution reports in a stable order.
func compareDiags(a, b *hcl.Diagnostic) int {
	switch {
	case a.Subject == nil && b.Subject == nil:
		return cmp.Or(strings.Compare(a.Summary, b.Summary), strings.Compare(a.Detail, b.Detail))
	case a.Subject == nil:
		return 1
	case b.Subject == nil:
		return -1
	}
	return cmp.Or(
		strings.Compare(a.Subject.Filename, b.Subject.Filename),
		cmp.Compare(a.Subject.Start.Byte, b.Subject.Start.Byte),
		strings.Compare(a.Summary, b.Summary),
		strings.Compare(a.Detail, b.Detail),
	)
}

// Pins assembles the lockfile the resolution implies: every pin of a
// resolved block and skill, and, for blocks not resolved this time
// (disabled tools) or left unresolved (an entry refused, a server out of
// reach), their entries from the current lock unchanged when of the
// block's kind.
func (ws *Workspace) Pins(cfg *manifest.Config, current *lockfile.File) *lockfile.File {
	out := lockfile.New()
	for _, t := range cfg.Tools {
		if res, ok := ws.Tools[t.Name]; ok {
			switch {
			case res.Pin != nil:
				out.Tools[t.Name] = res.Pin
			case res.Unresolved && current != nil && current.Tools[t.Name] != nil && current.Tools[t.Name].Kind == t.Kind:
				// Nothing was learnt (the entry was refused, or the
				// server is out of reach): the block's entry stays as
				// it is. One of another kind (the block changed kind)
				// goes.
				out.Tools[t.Name] = current.Tools[t.Name]
			}
			continue
		}
		if current != nil && current.Tools[t.Name] != nil {
			out.Tools[t.Name] = current.Tools[t.Name]
		}
	}
	for _, s := range cfg.Skills {
		if res, ok := ws.Skills[s.Name]; ok && res.Pin != nil {
			out.Skills[s.Name] = res.Pin
		}
	}
	return out
}

// cancelledSummaries are the summaries of the diagnostics a block's
// resolution reports when the context was cancelled under it; Run reports
// one "Resolution interrupted" instead.
var cancelledSummaries = []string{
	"Resolution cancelled",
	"Skill resolution cancelled",
	"MCP server listing cancelled",
	"A2A agent card fetch cancelled",
	"Reading python tool cancelled",
}
