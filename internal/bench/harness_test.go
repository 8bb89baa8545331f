package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	workDir := t.TempDir()
	report, err := Run(context.Background(), Config{
		Tools: 50, Agents: 3, JS: 5, DepJS: 2, DepModules: 3, Runs: 1, FloorRuns: 2,
		Scale: true, ScaleTools: []int{20}, ScaleAgents: []int{2, 3},
		WorkDir:  workDir,
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
	// The javascript target is the javascript row's, the first three the
	// rows of their scenarios.
	js := report.Rows[3]
	if want := formatAgainst(float64(js.Agentform.Median)/float64(js.Peer.Median), targetJSSlowdown, 2) + "× the esbuild build"; report.Targets[3].Got != want {
		t.Errorf("javascript target\ngot:  %q\nwant: %q, from the javascript row", report.Targets[3].Got, want)
	}
	for i, min := range []float64{targetPlanRatio, targetReplanRatio, targetApplyRatio} {
		want := TargetNotMeasured
		if haveTerraform {
			want = status(report.Rows[i].Ratio >= min)
		}
		if report.Targets[i].Status != want {
			t.Errorf("target %q\ngot:  %s\nwant: %s, from the row %q (ratio %v)", report.Targets[i].Name, report.Targets[i].Status, want, report.Rows[i].Scenario, report.Rows[i].Ratio)
		}
	}
	if !strings.Contains(report.TargetsNote, "not issue 8's") {
		t.Errorf("targets note\ngot:  %q\nwant: that 50 tools × 3 agents are not issue 8's sizes", report.TargetsNote)
	}
	// Every floor built what it was given: one bundle per entry point.
	outs, err := filepath.Glob(filepath.Join(workDir, "esbuild-out-*"))
	if err != nil || len(outs) != 4 {
		t.Fatalf("floor output directories\ngot:  %d (%v)\nwant: 4, two builds of each javascript workspace", len(outs), err)
	}
	for _, out := range outs {
		var bundles int
		err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".js") {
				bundles++
			}
			return err
		})
		if err != nil || (bundles != 5 && bundles != 2) {
			t.Errorf("floor output %s\ngot:  %d bundles (%v)\nwant: 5 (javascript) or 2 (dependencies)", out, bundles, err)
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

	// The javascript row's cells in their columns: agentform's median,
	// then the floor's, then the ratio.
	var jsLine string
	for _, line := range strings.Split(table.String(), "\n") {
		if strings.HasPrefix(line, js.Scenario+" ") {
			jsLine = line
			break
		}
	}
	cells := regexp.MustCompile(`\s{2,}`).Split(jsLine, -1)
	if want := []string{js.Scenario, "esbuild, one build", formatDuration(js.Agentform.Median), formatDuration(js.Peer.Median), formatRatio(js.Ratio), formatRSS(js.Agentform.PeakRSSKiB), formatRSS(js.Peer.PeakRSSKiB)}; !slices.Equal(cells, want) {
		t.Errorf("javascript row of the table\ngot:  %q\nwant: %q", cells, want)
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
	if !slices.Equal(doc.Targets, report.Targets) {
		t.Errorf("results.json targets\ngot:  %+v\nwant: %+v (the report's)", doc.Targets, report.Targets)
	}
	if len(doc.Rows) != len(wantScenarios) || len(doc.Scale) != 2 || len(doc.Targets) != 7 || doc.Runs != 1 || doc.FloorRuns != 2 {
		t.Errorf("results.json rows, scale, targets, runs, floor runs\ngot:  %d, %d, %d, %d, %d\nwant: %d, 2, 7, 1, 2", len(doc.Rows), len(doc.Scale), len(doc.Targets), doc.Runs, doc.FloorRuns, len(wantScenarios))
	}
	for i, r := range doc.Rows {
		want := report.Rows[i].Agentform
		if r.Scenario != report.Rows[i].Scenario || r.Agentform.MedianMS != ms(want.Median) || r.Agentform.PeakRSSKiB != want.PeakRSSKiB || r.Agentform.MedianCPUMS != ms(want.CPU) {
			t.Errorf("results.json row %d\ngot:  %q, %v ms, %d KiB, CPU %v ms\nwant: %q, %v ms, %d KiB, CPU %v ms (the report's)", i, r.Scenario, r.Agentform.MedianMS, r.Agentform.PeakRSSKiB, r.Agentform.MedianCPUMS,
				report.Rows[i].Scenario, ms(want.Median), want.PeakRSSKiB, ms(want.CPU))
		}
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

// TestEvaluateTargets holds each verdict to its threshold, at and either
// side of it, and the printed value to the verdict.
func TestEvaluateTargets(t *testing.T) {
	ms := time.Millisecond
	m := func(d time.Duration) *Measure { return &Measure{Median: d} }
	row := func(af, peer time.Duration) Row {
		r := Row{Agentform: Measure{Median: af}, PeerName: "peer"}
		if peer > 0 {
			r.Peer = m(peer)
			r.Ratio = float64(peer) / float64(af)
		}
		return r
	}
	scale := func(wall time.Duration, rss ...int64) []ScaleRow {
		var samples []Sample
		for _, k := range rss {
			samples = append(samples, Sample{Wall: wall, PeakRSSKiB: k})
		}
		return []ScaleRow{{Tools: 10000, Agents: 1000, Agentform: summarise(samples)}}
	}
	tests := []struct {
		name                  string
		plan, noop, apply, js Row
		noBundling            NoBundling
		scale                 []ScaleRow
		wantGot, wantStatus   [7]string
	}{
		{
			name: "at every threshold",
			plan: row(100*ms, 1000*ms), noop: row(100*ms, 1000*ms), apply: row(100*ms, 2000*ms), js: row(150*ms, 100*ms),
			noBundling: NoBundling{CacheEntries: 200},
			scale:      scale(5000*ms, 488281, 400000, 100), // 499,999,744 bytes at most
			wantGot:    [7]string{"10.0× faster", "10.0× faster", "20.0× faster", "1.50× the esbuild build", "0 of 200 cache entries rewritten", "5.00 s", "499.9997 MB (476.8 MiB), the highest of 3 runs"},
			wantStatus: [7]string{TargetHolds, TargetHolds, TargetHolds, TargetHolds, TargetHolds, TargetFails, TargetHolds},
		},
		{
			name: "just past every threshold",
			plan: row(1004*ms, 10000*ms), noop: row(100*ms, 999*ms), apply: row(100*ms, 1999*ms), js: row(1505*ms, 1000*ms),
			noBundling: NoBundling{CacheEntries: 200, Rewritten: 1},
			scale:      scale(4999*ms, 100, 488282, 100), // 500,000,768 bytes in one run
			wantGot:    [7]string{"9.96× faster", "9.99× faster", "19.99× faster", "1.505× the esbuild build", "1 of 200 cache entries rewritten", "4.999 s", "500.001 MB (476.8 MiB), the highest of 3 runs"},
			wantStatus: [7]string{TargetFails, TargetFails, TargetFails, TargetFails, TargetFails, TargetHolds, TargetFails},
		},
		{
			name: "agentform slower than terraform",
			plan: row(400*ms, 100*ms), noop: row(100*ms, 1000*ms), apply: row(100*ms, 3000*ms), js: row(90*ms, 100*ms),
			noBundling: NoBundling{},
			wantGot:    [7]string{"4.00× slower", "10.0× faster", "30.0× faster", "0.90× the esbuild build", "0 of 0 cache entries rewritten", "n/a (run with -scale)", "n/a (run with -scale)"},
			wantStatus: [7]string{TargetFails, TargetHolds, TargetHolds, TargetHolds, TargetFails, TargetNotMeasured, TargetNotMeasured},
		},
		{
			name: "no peers",
			plan: row(100*ms, 0), noop: row(100*ms, 0), apply: row(100*ms, 0), js: row(100*ms, 0),
			noBundling: NoBundling{CacheEntries: 3},
			wantGot:    [7]string{"n/a", "n/a", "n/a", "n/a", "0 of 3 cache entries rewritten", "n/a (run with -scale)", "n/a (run with -scale)"},
			wantStatus: [7]string{TargetNotMeasured, TargetNotMeasured, TargetNotMeasured, TargetNotMeasured, TargetHolds, TargetNotMeasured, TargetNotMeasured},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Tools: 1000, Agents: 10, JS: 200, NoBundling: tt.noBundling, Scale: tt.scale}
			got := evaluateTargets(r, tt.plan, tt.noop, tt.apply, tt.js)
			if len(got) != 7 {
				t.Fatalf("targets\ngot:  %d\nwant: 7", len(got))
			}
			for i, tg := range got {
				if tg.Got != tt.wantGot[i] || tg.Status != tt.wantStatus[i] {
					t.Errorf("target %q\ngot:  %q, %s\nwant: %q, %s", tg.Name, tg.Got, tg.Status, tt.wantGot[i], tt.wantStatus[i])
				}
			}
			if note := targetsNote(r); note != "" {
				t.Errorf("note at issue 8's sizes\ngot:  %q\nwant: none", note)
			}
		})
	}
	for _, r := range []Report{{Tools: 50, Agents: 10, JS: 200}, {Tools: 1000, Agents: 3, JS: 200}, {Tools: 1000, Agents: 10, JS: 5}} {
		if note := targetsNote(&r); !strings.Contains(note, "not issue 8's") {
			t.Errorf("note at %d tools × %d agents, %d javascript tools\ngot:  %q\nwant: that the verdicts are not issue 8's", r.Tools, r.Agents, r.JS, note)
		}
	}
}

func TestFormatAgainst(t *testing.T) {
	for _, tc := range []struct {
		v, threshold float64
		decimals     int
		want         string
	}{
		{1.33, 1.5, 2, "1.33"},
		{1.5, 1.5, 2, "1.50"},
		{1.504, 1.5, 2, "1.504"},
		{1.4999, 1.5, 2, "1.4999"},
		{9.96, 10, 1, "9.96"},
		{10.04, 10, 1, "10.04"},
		{12.8, 10, 1, "12.8"},
		{1.5000000001, 1.5, 2, "1.5000000001"},
		{0.9999999999, 1, 2, "0.9999999999"},
	} {
		if got := formatAgainst(tc.v, tc.threshold, tc.decimals); got != tc.want {
			t.Errorf("formatAgainst(%v, %v, %d) = %q, want %q", tc.v, tc.threshold, tc.decimals, got, tc.want)
		}
	}
}

// TestRunWorkDir checks that Run refuses a work directory with files in it
// before building or measuring anything: it would plan and apply an
// earlier run's workspaces again.
func TestRunWorkDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bash-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Config{Tools: 1, Agents: 1, JS: 1, DepJS: 1, DepModules: 1, Runs: 1, FloorRuns: 1, SkipTerraform: true, WorkDir: dir})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "bash-1") {
		t.Fatalf("a work directory in use\ngot:  %v\nwant: an error wrapping ErrInvalidConfig that names what it holds", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("work directory after the refusal\ngot:  %d entries\nwant: 1 (nothing added)", len(entries))
	}
}

// TestRunSkipDeps runs the harness without the workspace of tools with an
// npm dependency: its two rows and its line in the table are left out.
func TestRunSkipDeps(t *testing.T) {
	report, err := Run(context.Background(), Config{
		Tools: 5, Agents: 2, JS: 2, DepJS: 7, Runs: 1, FloorRuns: 1, SkipDeps: true, SkipTerraform: true,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var got []string
	for _, r := range report.Rows {
		got = append(got, r.Scenario)
	}
	if want := []string{"plan, cold (5 tools × 2 agents)", "plan, no-op after apply", "apply, fresh", "apply, 2 javascript tools", "apply, no-op after javascript apply"}; !slices.Equal(got, want) {
		t.Errorf("scenarios\ngot:  %q\nwant: %q", got, want)
	}
	if report.DepJS != 0 || report.DepModules != 0 {
		t.Errorf("dependency sizes\ngot:  %d, %d\nwant: 0, 0 (not measured)", report.DepJS, report.DepModules)
	}
	var table bytes.Buffer
	if err := report.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(table.String(), "npm dependency") {
		t.Errorf("table\n%s\nwant: no dependency workspace", table.String())
	}
}

// TestNormalizeWorkDirAndDeps checks that a relative work directory is
// made absolute (children run elsewhere) and that SkipDeps zeroes the
// dependency sizes instead of defaulting or refusing them.
func TestNormalizeWorkDirAndDeps(t *testing.T) {
	got, err := Config{WorkDir: "rel/dir", SkipDeps: true, DepJS: -4}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wd, "rel", "dir"); got.WorkDir != want {
		t.Errorf("work directory\ngot:  %q\nwant: %q", got.WorkDir, want)
	}
	if got.DepJS != 0 || got.DepModules != 0 {
		t.Errorf("dependency sizes with SkipDeps\ngot:  %d, %d\nwant: 0, 0", got.DepJS, got.DepModules)
	}
}

// TestFloorBuilt checks the floor's output check: as many bundles as entry
// points, and no fewer.
func TestFloorBuilt(t *testing.T) {
	check := floorBuilt(5)
	if err := check("built 5 entry points into 5 files in /x in 3ms\n"); err != nil {
		t.Errorf("five of five: %v", err)
	}
	for _, out := range []string{"built 5 entry points into 1 files in /x in 3ms", "built 5 entry points into 50 files in /x", "built 50 entry points into 50 files in /x"} {
		if err := check(out); !errors.Is(err, ErrUnexpectedOutput) {
			t.Errorf("floor output %q\ngot:  %v\nwant: an error wrapping ErrUnexpectedOutput", out, err)
		}
	}
}

// TestTerraformPath checks that a relative terraform path is made
// absolute (children run in other directories) and a missing one is a
// configuration error.
func TestTerraformPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tf")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	got, err := terraformPath("./tf")
	if err != nil || !filepath.IsAbs(got) {
		t.Fatalf("terraformPath(./tf)\ngot:  %q, %v\nwant: an absolute path to %s", got, err, bin)
	}
	if a, b := stat(t, got), stat(t, bin); !os.SameFile(a, b) {
		t.Errorf("terraformPath(./tf)\ngot:  %q\nwant: %q", got, bin)
	}
	if _, err := terraformPath("./missing"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("terraformPath(./missing)\ngot:  %v\nwant: an error wrapping ErrInvalidConfig", err)
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
