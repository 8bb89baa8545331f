package bench

import "fmt"

// Target statuses.
const (
	// TargetHolds means the measured value meets the target.
	TargetHolds = "holds"
	// TargetFails means the measured value misses the target.
	TargetFails = "FAILS"
	// TargetNotMeasured means this run did not measure what the target
	// needs (no terraform, or no -scale).
	TargetNotMeasured = "not measured"
)

// Target is one of issue 8's performance targets and whether this run
// meets it.
type Target struct {
	// Name states the target with the sizes of this run.
	Name string `json:"name"`
	// Got is the measured value.
	Got string `json:"got"`
	// Status is TargetHolds, TargetFails or TargetNotMeasured.
	Status string `json:"status"`
}

// The target thresholds of issue 8.
const (
	targetPlanRatio    = 10
	targetReplanRatio  = 10
	targetApplyRatio   = 20
	targetJSSlowdown   = 1.5
	targetScaleTools   = 10000
	targetScaleAgents  = 1000
	targetScaleSeconds = 5
	targetScaleBytes   = 500_000_000 // 500 MB
)

// evaluateTargets returns issue 8's targets against the rows Run made.
func evaluateTargets(r *Report, planCold, planNoop, apply, jsApply Row) []Target {
	ratio := func(name string, row Row, min float64) Target {
		t := Target{Name: name, Got: "n/a", Status: TargetNotMeasured}
		if row.Peer != nil {
			t.Got = fmt.Sprintf("%.1f× faster", row.Ratio)
			t.Status = status(row.Ratio >= min)
		}
		return t
	}
	targets := []Target{
		ratio(fmt.Sprintf("plan of %d tools × %d agents ≥ %d× faster than terraform plan of %d terraform_data", r.Tools, r.Agents, targetPlanRatio, r.Tools), planCold, targetPlanRatio),
		ratio(fmt.Sprintf("no-op re-plan ≥ %d× faster than terraform's", targetReplanRatio), planNoop, targetReplanRatio),
		ratio(fmt.Sprintf("apply ≥ %d× faster than terraform apply", targetApplyRatio), apply, targetApplyRatio),
	}

	js := Target{Name: fmt.Sprintf("apply of %d javascript tools within %.1f× of one esbuild build", r.JS, targetJSSlowdown), Got: "n/a", Status: TargetNotMeasured}
	if jsApply.Peer != nil && jsApply.Peer.Median > 0 {
		slowdown := float64(jsApply.Agentform.Median) / float64(jsApply.Peer.Median)
		js.Got = fmt.Sprintf("%.2f× the esbuild build", slowdown)
		js.Status = status(slowdown <= targetJSSlowdown)
	}
	targets = append(targets, js, Target{
		Name:   "no-op apply after the javascript apply does no bundling",
		Got:    fmt.Sprintf("%d of %d cache entries rewritten", r.NoBundling.Rewritten, r.NoBundling.CacheEntries),
		Status: status(r.NoBundling.Holds()),
	})

	timeT := Target{Name: fmt.Sprintf("plan of %d tools × %d agents (summary output) under %d s", targetScaleTools, targetScaleAgents, targetScaleSeconds), Got: "n/a (run with -scale)", Status: TargetNotMeasured}
	rssT := Target{Name: fmt.Sprintf("plan of %d tools × %d agents (summary output) under %d MB peak RSS", targetScaleTools, targetScaleAgents, targetScaleBytes/1_000_000), Got: timeT.Got, Status: TargetNotMeasured}
	for _, s := range r.Scale {
		if s.Tools != targetScaleTools || s.Agents != targetScaleAgents {
			continue
		}
		timeT.Got = formatDuration(s.Agentform.Median)
		timeT.Status = status(s.Agentform.Median.Seconds() < targetScaleSeconds)
		if s.Agentform.PeakRSSKiB >= 0 {
			rssT.Got = fmt.Sprintf("%.0f MB (%s)", float64(s.Agentform.PeakRSSKiB)*1024/1e6, formatRSS(s.Agentform.PeakRSSKiB))
			rssT.Status = status(s.Agentform.PeakRSSKiB*1024 < targetScaleBytes)
		} else {
			rssT.Got = "n/a (no rusage on this platform)"
		}
	}
	return append(targets, timeT, rssT)
}

func status(holds bool) string {
	if holds {
		return TargetHolds
	}
	return TargetFails
}
