package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentform/agentform/internal/resolve"
)

// TestRun runs the whole harness at a small size: every scenario, two
// scale sizes, terraform when it is on PATH. It asserts the report's shape
// and sane values, never timings.
func TestRun(t *testing.T) {
	_, lookErr := exec.LookPath("terraform")
	haveTerraform := lookErr == nil
	var progress bytes.Buffer
	report, err := Run(context.Background(), Config{
		Tools: 50, Agents: 3, JS: 5, DepJS: 2, DepModules: 3, Runs: 1, FloorRuns: 2,
		Scale: true, ScaleTools: []int{20}, ScaleAgents: []int{2, 3},
		WorkDir:  t.TempDir(),
		Progress: &progress,
	})
	if err != nil {
		t.Fatalf("Run: %v\nprogress:\n%s", err, progress.String())
	}

	wantScenarios := []string{
		"plan, cold (50 tools × 3 agents)",
		"plan, no-op after apply",
		"apply, fresh",
		"apply, 5 javascript tools",
		"apply, no-op after javascript apply",
		"apply, 2 javascript tools with dependencies",
		"apply, no-op after the dependencies apply",
	}
	var gotScenarios []string
	for _, r := range report.Rows {
		gotScenarios = append(gotScenarios, r.Scenario)
	}
	if !slices.Equal(gotScenarios, wantScenarios) {
		t.Fatalf("scenarios\ngot:  %q\nwant: %q", gotScenarios, wantScenarios)
	}

	rssKnown := runtime.GOOS == "linux" || runtime.GOOS == "darwin"
	// The javascript applies and their floors (rows 3 and 5) run
	// FloorRuns times, everything else Runs times.
	runsOf := func(row int) int {
		if row == 3 || row == 5 {
			return 2
		}
		return 1
	}
	checkMeasure := func(t *testing.T, what string, m Measure, runs int) {
		t.Helper()
		if len(m.Samples) != runs {
			t.Fatalf("%s: samples\ngot:  %d\nwant: %d", what, len(m.Samples), runs)
		}
		if m.Median <= 0 || m.Median > 10*time.Minute {
			t.Errorf("%s: median\ngot:  %s\nwant: a positive duration under 10 minutes", what, m.Median)
		}
		if rssKnown && (m.PeakRSSKiB < 1024 || m.PeakRSSKiB > 16<<20) {
			t.Errorf("%s: peak RSS\ngot:  %d KiB\nwant: between 1 MiB and 16 GiB", what, m.PeakRSSKiB)
		}
		// Each run is a process of its own, which the CPU time is the
		// kernel's account of: some, and at most every core for the run.
		for _, s := range m.Samples {
			if s.CPU <= 0 || s.CPU > time.Duration(runtime.NumCPU())*s.Wall+10*time.Millisecond {
				t.Errorf("%s: CPU time\ngot:  %s in %s of wall time\nwant: some, and at most %d× the wall time", what, s.CPU, s.Wall, runtime.NumCPU())
			}
		}
		lo, hi := m.Samples[0].CPU, m.Samples[0].CPU
		for _, s := range m.Samples {
			lo, hi = min(lo, s.CPU), max(hi, s.CPU)
		}
		if m.CPU < lo || m.CPU > hi || (runs == 1 && m.CPU != m.Samples[0].CPU) {
			t.Errorf("%s: median CPU\ngot:  %s\nwant: the median of %+v", what, m.CPU, m.Samples)
		}
	}
	for i, row := range report.Rows {
		t.Run(row.Scenario, func(t *testing.T) {
			checkMeasure(t, "agentform", row.Agentform, runsOf(i))
			wantPeer := i == 3 || i == 5 || (i < 3 && haveTerraform)
			if got := row.Peer != nil; got != wantPeer {
				t.Fatalf("peer measured\ngot:  %v\nwant: %v (terraform on PATH: %v)", got, wantPeer, haveTerraform)
			}
			if i < 3 && !haveTerraform && row.PeerNote == "" {
				t.Errorf("peer note\ngot:  %q\nwant: why terraform did not run", row.PeerNote)
			}
			if row.Peer == nil {
				if row.Ratio != 0 {
					t.Errorf("ratio without a peer\ngot:  %v\nwant: 0", row.Ratio)
				}
				return
			}
			checkMeasure(t, "peer", *row.Peer, runsOf(i))
			if want := float64(row.Peer.Median) / float64(row.Agentform.Median); row.Ratio != want {
				t.Errorf("ratio\ngot:  %v\nwant: %v", row.Ratio, want)
			}
		})
	}
	if haveTerraform && !strings.HasPrefix(report.Machine.Terraform, "terraform ") {
		t.Errorf("terraform version\ngot:  %q\nwant: terraform X.Y.Z", report.Machine.Terraform)
	}
	if !report.NoBundling.Holds() || report.NoBundling.CacheEntries < 5 {
		t.Errorf("no-op apply cache check\ngot:  %+v\nwant: at least 5 entries, none rewritten", report.NoBundling)
	}

	var gotScale [][2]int
	for _, s := range report.Scale {
		gotScale = append(gotScale, [2]int{s.Tools, s.Agents})
		checkMeasure(t, "scale", s.Agentform, 1)
	}
	if want := [][2]int{{20, 2}, {20, 3}}; !slices.Equal(gotScale, want) {
		t.Errorf("scale sizes\ngot:  %v\nwant: %v", gotScale, want)
	}

	if len(report.Targets) != 7 {
		t.Fatalf("targets\ngot:  %d\nwant: 7", len(report.Targets))
	}
	for _, tg := range report.Targets {
		if !slices.Contains([]string{TargetHolds, TargetFails, TargetNotMeasured}, tg.Status) || tg.Got == "" {
			t.Errorf("target %q\ngot:  %q, %q\nwant: a measured value and a status", tg.Name, tg.Got, tg.Status)
		}
	}
	// No 10,000 × 1,000 size was measured, so the scale targets say so.
	for _, tg := range report.Targets[5:] {
		if tg.Status != TargetNotMeasured {
			t.Errorf("target %q\ngot:  %s\nwant: %s", tg.Name, tg.Status, TargetNotMeasured)
		}
	}

	var table bytes.Buffer
	if err := report.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range append(append([]string{"median of 1 runs; of 2 for each javascript apply", "agentform median", "peer peak RSS", "esbuild, one build", "CPU time (user + system", "agentform ÷ peer", "plan at scale", "2 javascript tools with a 3-module npm dependency"}, wantScenarios...), report.Targets[0].Name) {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table\ngot:\n%s\nwant: a line with %q", table.String(), want)
		}
	}

	path := filepath.Join(t.TempDir(), "out", "results.json")
	if err := report.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []struct {
			Scenario  string `json:"scenario"`
			Agentform struct {
				MedianMS    float64 `json:"median_ms"`
				PeakRSSKiB  int64   `json:"peak_rss_kib"`
				MedianCPUMS float64 `json:"median_cpu_ms"`
				Samples     []struct {
					CPUMS float64 `json:"cpu_ms"`
				} `json:"samples"`
			} `json:"agentform"`
		} `json:"rows"`
		Scale     []json.RawMessage `json:"scale"`
		Targets   []Target          `json:"targets"`
		Runs      int               `json:"runs"`
		FloorRuns int               `json:"floor_runs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("results.json: %v\n%s", err, b)
	}
	if len(doc.Rows) != len(wantScenarios) || len(doc.Scale) != 2 || len(doc.Targets) != 7 || doc.Runs != 1 || doc.FloorRuns != 2 {
		t.Errorf("results.json rows, scale, targets, runs, floor runs\ngot:  %d, %d, %d, %d, %d\nwant: %d, 2, 7, 1, 2", len(doc.Rows), len(doc.Scale), len(doc.Targets), doc.Runs, doc.FloorRuns, len(wantScenarios))
	}
	for i, r := range doc.Rows {
		if r.Agentform.MedianMS <= 0 {
			t.Errorf("results.json %q median_ms\ngot:  %v\nwant: > 0", r.Scenario, r.Agentform.MedianMS)
		}
		if r.Agentform.MedianCPUMS <= 0 || len(r.Agentform.Samples) != runsOf(i) || (runsOf(i) == 1 && r.Agentform.Samples[0].CPUMS != r.Agentform.MedianCPUMS) {
			t.Errorf("results.json %q CPU\ngot:  median %v, samples %+v\nwant: > 0, %d samples (the median the one sample's)", r.Scenario, r.Agentform.MedianCPUMS, r.Agentform.Samples, runsOf(i))
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want error
	}{
		{"zero means defaults", Config{}, nil},
		{"negative tools", Config{Tools: -1}, ErrInvalidConfig},
		{"negative runs", Config{Runs: -3}, ErrInvalidConfig},
		{"negative floor runs", Config{FloorRuns: -1}, ErrInvalidConfig},
		{"negative dependency tools", Config{DepJS: -1}, ErrInvalidConfig},
		{"negative dependency modules", Config{DepModules: -1}, ErrInvalidConfig},
		{"zero scale size", Config{ScaleAgents: []int{10, 0}}, ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cfg.Normalize()
			if !errors.Is(err, tt.want) {
				t.Fatalf("error\ngot:  %v\nwant: %v", err, tt.want)
			}
			if err == nil && (got.Tools != DefaultTools || got.Agents != DefaultAgents || got.JS != DefaultJS || got.DepJS != DefaultDepJS || got.DepModules != DefaultDepModules || got.Runs != DefaultRuns || got.FloorRuns != DefaultFloorRuns || got.Progress == nil) {
				t.Errorf("normalised\ngot:  %+v\nwant: the defaults", got)
			}
		})
	}
}

func TestSummarise(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		walls    []time.Duration
		rss      []int64
		wantWall time.Duration
		wantRSS  int64
	}{
		{"one", []time.Duration{5 * ms}, []int64{100}, 5 * ms, 100},
		{"odd, unsorted", []time.Duration{9 * ms, 1 * ms, 4 * ms}, []int64{300, 100, 200}, 4 * ms, 200},
		{"even: mean of the middle two", []time.Duration{1 * ms, 2 * ms, 4 * ms, 100 * ms}, []int64{10, 20, 40, 1000}, 3 * ms, 30},
		{"rss unknown", []time.Duration{1 * ms, 2 * ms, 3 * ms}, []int64{-1, -1, -1}, 2 * ms, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var samples []Sample
			for i := range tt.walls {
				// CPU time runs opposite to the wall time, so that its
				// median is taken on its own.
				samples = append(samples, Sample{Wall: tt.walls[i], PeakRSSKiB: tt.rss[i], CPU: time.Second - tt.walls[i]})
			}
			got := summarise(samples)
			if got.Median != tt.wantWall || got.PeakRSSKiB != tt.wantRSS {
				t.Errorf("median, RSS\ngot:  %s, %d\nwant: %s, %d", got.Median, got.PeakRSSKiB, tt.wantWall, tt.wantRSS)
			}
			if want := time.Second - tt.wantWall; got.CPU != want {
				t.Errorf("median CPU\ngot:  %s\nwant: %s", got.CPU, want)
			}
			if !slices.Equal(got.Samples, samples) {
				t.Errorf("samples\ngot:  %v\nwant: %v (in run order)", got.Samples, samples)
			}
		})
	}
}

// TestRewritten checks the no-bundling detector on a real cache: an entry
// written again with identical bytes, a changed entry, a new entry, and
// none.
func TestRewritten(t *testing.T) {
	put := func(t *testing.T, dir string, entries map[string]string) {
		t.Helper()
		c := resolve.NewCache(dir)
		for key, name := range entries {
			if err := c.Put("javascript", key, map[string]string{"name": name}); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		change map[string]string
		want   int
	}{
		{"nothing", nil, 0},
		{"same bytes written again", map[string]string{"a": "a"}, 2},
		{"changed entry", map[string]string{"a": "changed"}, 1},
		{"new entry", map[string]string{"c": "c"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			put(t, dir, map[string]string{"a": "a", "b": "b"})
			before, err := snapshot(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(before.entries) != 2 {
				t.Fatalf("entries before: %d, want 2", len(before.entries))
			}
			if tt.change != nil {
				put(t, dir, tt.change)
			}
			after, err := snapshot(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := rewritten(before, after); got != tt.want {
				t.Errorf("rewritten\ngot:  %d\nwant: %d", got, tt.want)
			}
		})
	}
	t.Run("no cache", func(t *testing.T) {
		got, err := snapshot(t.TempDir())
		if err != nil || len(got.entries) != 0 || got.file != nil {
			t.Errorf("snapshot of a workspace without a cache\ngot:  %v, %v\nwant: no entries, no error", got, err)
		}
	})
}

// TestAlternate checks that two scenarios measured together run in turns,
// each run checked, and that a failing check stops the measure.
func TestAlternate(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	var order []string
	sc := func(label string) scenario {
		return scenario{
			label: label,
			setup: func() (child, error) {
				order = append(order, label)
				return child{dir: t.TempDir(), name: sh, args: []string{"-c", "echo " + label}}, nil
			},
			check: contains(label),
		}
	}
	var progress bytes.Buffer
	h := &harness{cfg: Config{FloorRuns: 3, Progress: &progress}}
	a, b, err := h.alternate(context.Background(), sc("first"), sc("second"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"first", "second", "first", "second", "first", "second"}; !slices.Equal(order, want) {
		t.Errorf("order\ngot:  %q\nwant: %q", order, want)
	}
	if len(a.Samples) != 3 || len(b.Samples) != 3 {
		t.Errorf("samples\ngot:  %d and %d\nwant: 3 each", len(a.Samples), len(b.Samples))
	}
	if got := strings.Count(progress.String(), "run 3/3"); got != 2 {
		t.Errorf("progress\ngot:\n%s\nwant: a line for each scenario's third run", progress.String())
	}

	bad := sc("third")
	bad.check = contains("something else")
	if _, _, err := h.alternate(context.Background(), sc("first"), bad); !errors.Is(err, ErrUnexpectedOutput) {
		t.Errorf("a failed check\ngot:  %v\nwant: an error wrapping ErrUnexpectedOutput", err)
	}
}

func TestFormatShare(t *testing.T) {
	for _, tc := range []struct {
		r    float64
		want string
	}{{1.4667, "1.47×"}, {0.1, "0.10×"}, {0.0454, "0.045×"}, {0.00454, "0.005×"}, {0.001, "0.001×"}, {0.0004, "<0.001×"}} {
		if got := formatShare(tc.r); got != tc.want {
			t.Errorf("formatShare(%v) = %q, want %q", tc.r, got, tc.want)
		}
	}
	// The CPU table uses it: terraform apply at 272 ms against 59.9 s.
	r := &Report{Rows: []Row{{Scenario: "apply, fresh", PeerName: "terraform apply",
		Agentform: Measure{Median: time.Second, CPU: 272 * time.Millisecond},
		Peer:      &Measure{Median: time.Minute, CPU: 59900 * time.Millisecond}}}}
	var table bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "59.90 s            0.005×") {
		t.Errorf("CPU table:\n%s\nwant: 0.005× for terraform apply", table.String())
	}
}
