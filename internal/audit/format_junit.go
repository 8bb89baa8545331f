package audit

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
)

// junitSuiteName names the suite (and the document) in CI dashboards.
const junitSuiteName = "agentform audit"

// The JUnit XML document: the de-facto schema that Jenkins, GitLab and
// GitHub test reporters read.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

// The test case that says whether the audit saw the whole workspace: an
// error (the test could not run, in JUnit's terms) when it did not.
const (
	junitAuditClass = "audit"
	junitAuditName  = "the whole workspace is audited"
)

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// junitPair is one rule × target: its test case.
type junitPair struct {
	rule, target string
	open, waived []Finding
}

// writeJUnit writes one test case per rule × target that has findings: a
// failure (typed by the most severe unwaived finding) when any is unwaived,
// skipped when all are waived. A rule of the report with no finding at all
// is one passing case named "all targets", so a clean run still reports
// what was checked; so is a gate that passes (AF111). One more case says whether the audit saw the whole
// workspace (newJUnitAuditCase); a failed audit has that case alone.
func writeJUnit(w io.Writer, r *Report) error {
	pairs := map[[2]string]*junitPair{}
	get := func(f Finding) *junitPair {
		k := [2]string{f.RuleID, f.Target}
		p, ok := pairs[k]
		if !ok {
			p = &junitPair{rule: f.RuleID, target: f.Target}
			pairs[k] = p
		}
		return p
	}
	seenRule := map[string]bool{}
	// A failing gate is a failing case per agent it grants access to.
	for _, f := range append(orderedFindings(r.Findings), gateFindings(r)...) {
		p := get(f)
		p.open = append(p.open, f)
		seenRule[f.RuleID] = true
	}
	for _, f := range orderedFindings(r.Waived) {
		p := get(f)
		p.waived = append(p.waived, f)
		seenRule[f.RuleID] = true
	}

	suite := junitSuite{Name: junitSuiteName}
	if r.AgentformVersion != "" {
		suite.Properties = []junitProperty{{Name: "agentform.version", Value: r.AgentformVersion}}
	}
	suite.Cases = append(suite.Cases, newJUnitAuditCase(r.Incomplete))
	if r.Incomplete != nil {
		suite.Errors++
		if r.Incomplete.Failed {
			// Nothing was checked: no rule passed.
			pairs, seenRule = nil, nil
		}
	}
	for _, p := range pairs {
		c := junitCase{Classname: p.rule, Name: p.target}
		if len(p.open) > 0 {
			c.Failure = newJUnitFailure(p)
			suite.Failures++
		} else {
			c.Skipped = &junitSkipped{Message: junitWaivedMessage(p.waived)}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, c)
	}
	for _, rule := range reportRules(r) {
		if seenRule != nil && !seenRule[rule.ID] {
			seenRule[rule.ID] = true
			suite.Cases = append(suite.Cases, junitCase{Classname: rule.ID, Name: "all targets"})
		}
	}
	slices.SortFunc(suite.Cases, func(x, y junitCase) int {
		if c := strings.Compare(x.Classname, y.Classname); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
	suite.Tests = len(suite.Cases)

	doc := junitSuites{
		Name: junitSuiteName, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Skipped: suite.Skipped,
		Suites: []junitSuite{suite},
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// newJUnitAuditCase is the case of whether the audit saw the whole
// workspace: passing, or an error typed "incomplete" or "failed" whose
// text lists the errors that stopped it, one a line.
func newJUnitAuditCase(inc *Incomplete) junitCase {
	c := junitCase{Classname: junitAuditClass, Name: junitAuditName}
	if inc == nil {
		return c
	}
	e := &junitFailure{Type: "incomplete", Message: oneLine(incompleteLine(inc))}
	if inc.Failed {
		e.Type = "failed"
	}
	var b strings.Builder
	for _, d := range orderedDiagnostics(inc.Errors) {
		b.WriteString("[error]")
		if loc := rangeLocation(d.Range); loc != "" {
			b.WriteString(" " + oneLine(loc))
		}
		b.WriteString(": " + oneLine(diagnosticText(d)) + "\n")
	}
	e.Text = b.String()
	c.Error = e
	return c
}

// newJUnitFailure types the failure by the most severe unwaived finding
// (the first, findings being ordered) and lists every finding of the pair
// in its text.
func newJUnitFailure(p *junitPair) *junitFailure {
	// Attributes are shown as they are, as the text is: one line, with
	// control characters and bidirectional overrides escaped.
	f := &junitFailure{Type: string(p.open[0].Severity), Message: oneLine(p.open[0].Message)}
	if len(p.open) > 1 {
		f.Message = fmt.Sprintf("%d findings: %s", len(p.open), oneLine(p.open[0].Message))
	}
	var b strings.Builder
	for _, x := range p.open {
		b.WriteString(junitLine(x))
	}
	for _, x := range p.waived {
		b.WriteString(junitLine(x))
	}
	f.Text = b.String()
	return f
}

func junitLine(f Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s", f.RuleID, f.Severity)
	if loc := findingLocation(f); loc != "" {
		b.WriteString(" " + loc)
	}
	var cell []string
	if f.Agent != "" {
		cell = append(cell, "agent "+oneLine(f.Agent))
	}
	if f.Tool != "" {
		cell = append(cell, "tool "+oneLine(f.Tool))
	}
	if len(cell) > 0 {
		b.WriteString(" (" + strings.Join(cell, ", ") + ")")
	}
	b.WriteString(": " + oneLine(f.Message))
	if f.Waiver != nil {
		b.WriteString(" [waived: " + oneLine(f.Waiver.Reason) + "]")
	}
	return b.String() + "\n"
}

func junitWaivedMessage(waived []Finding) string {
	var reasons []string
	for _, f := range waived {
		if f.Waiver != nil && f.Waiver.Reason != "" && !slices.Contains(reasons, f.Waiver.Reason) {
			reasons = append(reasons, f.Waiver.Reason)
		}
	}
	if len(reasons) == 0 {
		return "waived"
	}
	return "waived: " + oneLine(strings.Join(reasons, "; "))
}
