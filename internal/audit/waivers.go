package audit

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentform/agentform/internal/manifest"
)

// waiverTarget is the target of the hygiene findings about a waiver
// block: "waiver.AF101".
func waiverTarget(w *manifest.Waiver) string { return "waiver." + w.RuleID }

// waiverExpired reports whether a waiver's expiry date is before today
// (UTC) at now. A waiver is valid through the whole of its expiry day. A
// missing or unreadable date never expires (the manifest loader reports
// an unreadable one as an error).
func waiverExpired(w *manifest.Waiver, now time.Time) bool {
	if !w.Expires.Set || w.Expires.Value == "" {
		return false
	}
	day, err := time.Parse(time.DateOnly, w.Expires.Value)
	if err != nil {
		return false
	}
	today := now.UTC().Format(time.DateOnly)
	return day.Format(time.DateOnly) < today
}

// applyWaivers splits findings into those that stand and those a waiver
// block accepts, and reports the waivers themselves: AF401 for each
// expired waiver (which no longer applies, so its findings stand) and
// AF402 for each unexpired waiver that matches no finding.
//
// A waiver matches every finding with its rule ID and target. When
// several waivers match one finding, the first in manifest order (the
// configuration's order) is recorded on it and all count as used.
// Findings of the hygiene rules themselves (AF4xx) cannot be waived: a
// waiver of an expired waiver would defeat the expiry.
func applyWaivers(findings []Finding, waivers []*manifest.Waiver, now time.Time) (kept, waived, hygiene []Finding) {
	kept, waived = []Finding{}, []Finding{}
	type active struct {
		w    *manifest.Waiver
		used bool
	}
	var live []*active
	byKey := map[string][]*active{}
	// Hygiene findings of waivers with one rule and target (two reasons,
	// two expiry dates) are told apart: SARIF consumers take one
	// fingerprint for one alert. The first keeps the plain key.
	keys := map[string]int{}
	identity := func(f Finding, w *manifest.Waiver) Finding {
		key := w.Target.Value
		k := f.RuleID + "\x00" + f.Target + "\x00" + key
		if n := keys[k]; n > 0 {
			key = fmt.Sprintf("%s\x00%s\x00%s\x00%d", key, w.Expires.Value, w.Reason.Value, n)
		}
		keys[k]++
		return withIdentity(f, key)
	}
	for _, w := range waivers {
		if waiverExpired(w, now) {
			f := Finding{
				RuleID:  RuleExpiredWaiver,
				Target:  waiverTarget(w),
				Message: fmt.Sprintf("The waiver of %s for %s expired on %s, so it no longer applies and the findings it accepted are reported again. Fix the findings, or renew the waiver with a new expires date if the reason still holds.", w.RuleID, w.Target.Value, w.Expires.Value),
				Range:   strRange(w.Expires, w.DeclRange),
			}
			hygiene = append(hygiene, identity(f, w))
			continue
		}
		act := &active{w: w}
		live = append(live, act)
		if w.Target.Set && w.Target.Value != "" {
			k := w.RuleID + "\x00" + w.Target.Value
			byKey[k] = append(byKey[k], act)
		}
	}
	for _, f := range findings {
		matches := byKey[f.RuleID+"\x00"+f.Target]
		if len(matches) == 0 || strings.HasPrefix(f.RuleID, "AF4") {
			kept = append(kept, f)
			continue
		}
		w := matches[0].w
		for _, m := range matches {
			m.used = true
		}
		f.Waiver = &Waiver{Reason: w.Reason.Value, Expires: w.Expires.Value, Range: w.DeclRange.Ptr()}
		waived = append(waived, f)
	}
	for _, act := range live {
		if act.used {
			continue
		}
		w := act.w
		why := fmt.Sprintf("no %s finding has the target %q", w.RuleID, w.Target.Value)
		switch _, ok := RuleByID(w.RuleID); {
		case w.RuleID == RuleNewAccess:
			why = RuleNewAccess + ", the no-new-access gate, cannot be waived: access granted since the baseline is accepted by applying it or writing a new baseline"
		case !ok:
			why = fmt.Sprintf("%s is not an agentform rule", w.RuleID)
		}
		f := Finding{
			RuleID:  RuleUnusedWaiver,
			Target:  waiverTarget(w),
			Message: fmt.Sprintf("The waiver of %s for %s accepts nothing: %s. Remove the waiver, or fix its rule ID or target.", w.RuleID, w.Target.Value, why),
			Range:   w.DeclRange.Ptr(),
		}
		hygiene = append(hygiene, identity(f, w))
	}
	return kept, waived, hygiene
}

// withIdentity fills a finding's severity from the catalog and its
// fingerprint from its identity and key.
func withIdentity(f Finding, key string) Finding {
	if def, ok := RuleByID(f.RuleID); ok {
		f.Severity = def.Severity
	}
	f.Fingerprint = Fingerprint(f.RuleID, f.Target, f.Agent, f.Tool, key)
	return f
}
