package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Report is what Run measured. Its JSON form (WriteJSON) has the same rows
// as its table (WriteTable), with every sample.
type Report struct {
	// Command is the command line that produced the report; Run leaves it
	// empty for the caller to fill in.
	Command string `json:"command,omitempty"`
	// Machine describes where the numbers come from.
	Machine Machine `json:"machine"`
	// Tools, Agents, JS, DepJS, DepModules, Runs and FloorRuns are the
	// normalised Config sizes.
	Tools      int `json:"tools"`
	Agents     int `json:"agents"`
	JS         int `json:"js"`
	DepJS      int `json:"dep_js"`
	DepModules int `json:"dep_modules"`
	Runs       int `json:"runs"`
	FloorRuns  int `json:"floor_runs"`
	// Rows are the comparisons, in the order of the table.
	Rows []Row `json:"rows"`
	// Scale holds the agentform-only plans of Config.Scale, by tools then
	// agents; empty without it.
	Scale []ScaleRow `json:"scale,omitempty"`
	// NoBundling is what the no-op apply after the javascript apply did to
	// the resolution cache.
	NoBundling NoBundling `json:"no_bundling"`
	// Targets are issue 8's targets evaluated against these numbers.
	Targets []Target `json:"targets"`
	// TargetsNote says when the run's sizes are not issue 8's, so that the
	// verdicts of the ratio targets are for other sizes; empty when they
	// are.
	TargetsNote string `json:"targets_note,omitempty"`
}

// Machine describes the host and the binaries measured.
type Machine struct {
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	Go        string `json:"go"`
	Agentform string `json:"agentform"`
	// Terraform is the terraform version, empty when terraform was not run.
	Terraform string `json:"terraform,omitempty"`
}

// Row compares one agentform scenario with its peer.
type Row struct {
	// Scenario names what agentform did.
	Scenario string `json:"scenario"`
	// Agentform is agentform's measure.
	Agentform Measure `json:"agentform"`
	// PeerName names the peer's command; empty when the scenario has none.
	PeerName string `json:"peer_name,omitempty"`
	// Peer is the peer's measure; nil when there is no peer or it was not
	// run (PeerNote says why).
	Peer *Measure `json:"peer,omitempty"`
	// PeerNote says why a named peer has no measure.
	PeerNote string `json:"peer_note,omitempty"`
	// Ratio is the peer's median over agentform's: above 1 agentform is
	// faster. Zero without a peer measure.
	Ratio float64 `json:"ratio,omitempty"`
}

// ScaleRow is one agentform plan size of Config.Scale.
type ScaleRow struct {
	Tools     int     `json:"tools"`
	Agents    int     `json:"agents"`
	Agentform Measure `json:"agentform"`
}

// NoBundling records whether the no-op apply after the javascript apply
// bundled anything. Every javascript resolution that bundles writes its
// result to the workspace's resolution cache (resolve.CacheFile), so an
// apply that left the cache untouched did no bundling.
type NoBundling struct {
	// CacheEntries is how many javascript entries the javascript apply
	// left in the cache.
	CacheEntries int `json:"cache_entries"`
	// Rewritten is how many of them (or new ones) the no-op applies wrote,
	// over all runs (see rewritten).
	Rewritten int `json:"rewritten"`
}

// Holds reports whether the no-op apply provably did no bundling: there
// was a cache to hit and nothing in it changed.
func (n NoBundling) Holds() bool { return n.CacheEntries > 0 && n.Rewritten == 0 }

// MarshalJSON writes durations in milliseconds.
func (m Measure) MarshalJSON() ([]byte, error) {
	type sample struct {
		WallMS     float64 `json:"wall_ms"`
		PeakRSSKiB int64   `json:"peak_rss_kib"`
		CPUMS      float64 `json:"cpu_ms"`
	}
	out := struct {
		MedianMS    float64  `json:"median_ms"`
		PeakRSSKiB  int64    `json:"peak_rss_kib"`
		MedianCPUMS float64  `json:"median_cpu_ms"`
		Samples     []sample `json:"samples"`
	}{MedianMS: ms(m.Median), PeakRSSKiB: m.PeakRSSKiB, MedianCPUMS: ms(m.CPU), Samples: []sample{}}
	for _, s := range m.Samples {
		out.Samples = append(out.Samples, sample{WallMS: ms(s.Wall), PeakRSSKiB: s.PeakRSSKiB, CPUMS: ms(s.CPU)})
	}
	return json.Marshal(out)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// WriteTable prints the comparison table, the scale table when there is
// one, the no-bundling check and the targets.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s vs peers on %s/%s, %d CPUs; median of %d runs; of %d for each javascript apply and its esbuild build, run in turns\n", r.Machine.Agentform, r.Machine.OS, r.Machine.Arch, r.Machine.CPUs, r.Runs, r.FloorRuns)
	deps := ""
	if r.DepJS > 0 {
		deps = fmt.Sprintf("%d javascript tools with a %d-module npm dependency × %d agents; ", r.DepJS, r.DepModules, r.Agents)
	}
	fmt.Fprintf(&b, "workspaces: %d bash tools × %d agents; %d javascript tools × %d agents; %speer: %d terraform_data (%s)\n\n",
		r.Tools, r.Agents, r.JS, r.Agents, deps, r.Tools, orNotRun(r.Machine.Terraform))
	cells := [][]string{{"scenario", "peer", "agentform median", "peer median", "ratio", "agentform peak RSS", "peer peak RSS"}}
	for _, row := range r.Rows {
		peerName, peerTime, ratio, peerRSS := "—", "—", "—", "—"
		if row.PeerName != "" {
			peerName, peerTime, ratio, peerRSS = row.PeerName, "n/a", "n/a", "n/a"
		}
		if row.Peer != nil {
			peerTime, ratio, peerRSS = formatDuration(row.Peer.Median), formatRatio(row.Ratio), formatRSS(row.Peer.PeakRSSKiB)
		}
		cells = append(cells, []string{row.Scenario, peerName, formatDuration(row.Agentform.Median), peerTime, ratio, formatRSS(row.Agentform.PeakRSSKiB), peerRSS})
	}
	writeColumns(&b, cells, 2)
	b.WriteString("ratio = peer median ÷ agentform median: above 1, agentform is faster\n")
	verdict := "bundled, or no cache to check"
	if r.NoBundling.Holds() {
		verdict = "no bundling"
	}
	fmt.Fprintf(&b, "no-op apply after the javascript apply: %d of %d cache entries rewritten (%s)\n", r.NoBundling.Rewritten, r.NoBundling.CacheEntries, verdict)
	for _, row := range r.Rows {
		if row.PeerNote != "" {
			fmt.Fprintf(&b, "terraform: %s\n", row.PeerNote)
			break
		}
	}

	b.WriteString("\nCPU time (user + system; median of the runs)\n\n")
	cells = [][]string{{"scenario", "agentform", "peer", "agentform ÷ peer"}}
	for _, row := range r.Rows {
		peerCPU, share := "—", "—"
		if row.PeerName != "" {
			peerCPU, share = "n/a", "n/a"
		}
		if row.Peer != nil {
			peerCPU = formatDuration(row.Peer.CPU)
			if row.Peer.CPU > 0 {
				share = formatShare(float64(row.Agentform.CPU) / float64(row.Peer.CPU))
			}
		}
		cells = append(cells, []string{row.Scenario, formatDuration(row.Agentform.CPU), peerCPU, share})
	}
	writeColumns(&b, cells, 1)

	if len(r.Scale) > 0 {
		b.WriteString("\nplan at scale (agentform only, fresh workspace, -matrix=summary)\n\n")
		cells = [][]string{{"tools", "agents", "median", "peak RSS"}}
		for _, s := range r.Scale {
			cells = append(cells, []string{fmt.Sprint(s.Tools), fmt.Sprint(s.Agents), formatDuration(s.Agentform.Median), formatRSS(s.Agentform.PeakRSSKiB)})
		}
		writeColumns(&b, cells, 0)
	}

	b.WriteString("\ntargets (issue 8)\n\n")
	cells = [][]string{{"target", "measured", "status"}}
	for _, t := range r.Targets {
		cells = append(cells, []string{t.Name, t.Got, t.Status})
	}
	writeColumns(&b, cells, 3)
	if r.TargetsNote != "" {
		b.WriteString("note: " + r.TargetsNote + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeColumns writes rows as aligned columns: the first textCols columns
// left-aligned, the rest (numbers) right-aligned.
func writeColumns(b *strings.Builder, rows [][]string, textCols int) {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i > 0 {
				line.WriteString("  ")
			}
			if i < textCols {
				line.WriteString(cell + pad)
			} else {
				line.WriteString(pad + cell)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// WriteJSON writes the report as indented JSON to path, through a temporary
// file in the same directory that is synced and renamed into place.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	b = append(b, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-bench-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func formatDuration(d time.Duration) string {
	switch {
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1f ms", ms(d))
	case d < time.Second:
		return fmt.Sprintf("%.0f ms", ms(d))
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

// formatRatio keeps two significant digits below 1, where agentform is
// the slower one.
func formatRatio(r float64) string {
	if r < 1 {
		return fmt.Sprintf("%.2f×", r)
	}
	return fmt.Sprintf("%.1f×", r)
}

// formatShare writes agentform's share of a peer's cost: two decimals from
// 0.1 up, three below, and "<0.001×" below a thousandth.
func formatShare(r float64) string {
	switch {
	case r >= 0.1:
		return fmt.Sprintf("%.2f×", r)
	case r >= 0.001:
		return fmt.Sprintf("%.3f×", r)
	default:
		return "<0.001×"
	}
}

func formatRSS(kib int64) string {
	if kib < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(kib)/1024)
}

func orNotRun(s string) string {
	if s == "" {
		return "not run"
	}
	return s
}
