// Package audit turns a plan into findings people act on: capability
// risks, supply-chain and lock problems, sandbox and secret handling, and
// manifest hygiene, each with a stable rule ID, a severity, a location and
// a help page; and renders them as a terminal table, JSON, SARIF 2.1.0,
// Markdown, self-contained HTML and JUnit.
package audit

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/render"
)

// FormatVersion is the version of the JSON audit report.
const FormatVersion = "1.0"

// Severity is a finding's severity.
type Severity string

// Severities, from most to least severe.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityNote    Severity = "note"
)

// Rank orders severities: error 3, warning 2, note 1, unknown 0.
func (s Severity) Rank() int {
	switch s {
	case SeverityError:
		return 3
	case SeverityWarning:
		return 2
	case SeverityNote:
		return 1
	}
	return 0
}

// Rule is one entry of the rule catalog.
type Rule struct {
	// ID is stable forever: AF1xx capability, AF2xx supply chain and lock,
	// AF3xx sandbox and secrets, AF4xx manifest hygiene.
	ID string `json:"id"`
	// Name is a short identifier in PascalCase ("DeniedCell").
	Name string `json:"name"`
	// Short is a one-sentence summary; Full says why it matters.
	Short    string   `json:"short_description"`
	Full     string   `json:"full_description"`
	Severity Severity `json:"severity"`
	// HelpURI points at docs/rules/<ID>.md.
	HelpURI string `json:"help_uri"`
}

// HelpBase is the base of every rule's HelpURI.
const HelpBase = "https://github.com/agentform/agentform/blob/main/docs/rules/"

// Finding is one problem found.
type Finding struct {
	RuleID   string   `json:"rule_id"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Target is the address the finding is about ("agent.x", "tool.y",
	// "skill.z", "waiver.AF101"): what a waiver names.
	Target string `json:"target"`
	// Agent and Tool name the matrix cell concerned, when there is one.
	Agent string `json:"agent,omitempty"`
	Tool  string `json:"tool,omitempty"`
	// Range is the file text responsible (the block or attribute).
	Range *hcl.Range `json:"-"`
	// Fingerprint identifies the finding across runs, independent of line
	// numbers: a digest of rule, target, agent, tool and a rule-specific
	// key. SARIF partialFingerprints and baselines use it.
	Fingerprint string `json:"fingerprint"`
	// Waiver is set when a waiver block accepts the finding.
	Waiver *Waiver `json:"waiver,omitempty"`
}

// Waiver is a waiver block as it applies to a finding.
type Waiver struct {
	Reason  string     `json:"reason"`
	Expires string     `json:"expires,omitempty"`
	Range   *hcl.Range `json:"-"`
}

// Cell is one cell of the capability matrix in a report.
type Cell struct {
	Tool              string   `json:"tool"`
	Allowed           bool     `json:"allowed"`
	OverrideReachable bool     `json:"override_reachable"`
	Missing           []string `json:"missing"`
}

// MatrixRow is one agent's row.
type MatrixRow struct {
	Agent  string   `json:"agent"`
	Policy string   `json:"policy"`
	Holds  []string `json:"holds"`
	// RuntimeDependent is set when the agent's capabilities or policy
	// come from runtime(): the row is computed from the default, and the
	// agent may hold other tags when it starts.
	RuntimeDependent bool   `json:"runtime_dependent"`
	Cells            []Cell `json:"cells"`
}

// Report is the result of an audit. Findings are sorted by severity (most
// severe first), then rule ID, target, agent and tool; waived findings are
// kept in Waived, not Findings.
type Report struct {
	FormatVersion    string      `json:"format_version"`
	AgentformVersion string      `json:"agentform_version"`
	Findings         []Finding   `json:"findings"`
	Waived           []Finding   `json:"waived"`
	Rules            []Rule      `json:"rules"`
	Matrix           []MatrixRow `json:"matrix"`
	// Counts of unwaived findings by severity.
	Counts map[Severity]int `json:"counts"`
	// Gate is set by a baseline or -against=state comparison.
	Gate *Gate `json:"gate,omitempty"`
	// Incomplete is set when the audit did not see the whole workspace
	// (MarkIncomplete, Failed); every format then says so and lists the
	// errors. A report without it covers the whole workspace.
	Incomplete *Incomplete `json:"incomplete,omitempty"`
	// Redaction is what the report must not show of the manifest's text
	// (see the package's Redaction): table and HTML snippets mask its
	// ranges, and messages and waiver reasons are already scrubbed of its
	// values. A hand-built report that quotes source must set it too. It
	// is never written out.
	Redaction *render.Redaction `json:"-"`
	// agentRanges maps each agent to where its capabilities are written
	// (set by Run), where SARIF locates an access the gate finds granted.
	agentRanges map[string]*hcl.Range
	// unresolved names the mcp blocks whose tools could not be listed
	// (set by Run): the matrix has one placeholder column for each, named
	// after the block, in place of its served tools.
	unresolved []string
}

// Gate is the "no new access" comparison with a baseline: the access
// granted since it, and whether that passes.
type Gate struct {
	// Against says what was compared: "state" or the baseline file name.
	Against string `json:"against"`
	Pass    bool   `json:"pass"`
	// Granted lists access granted since the baseline; Revoked access
	// that is gone.
	Granted []Access `json:"granted"`
	Revoked []Access `json:"revoked"`
	// NewFindings are findings whose fingerprint the baseline lacks.
	NewFindings []string `json:"new_findings"`
	Reasons     []string `json:"reasons"`
}

// Access is one agent → tool permission.
type Access struct {
	Agent string `json:"agent"`
	Tool  string `json:"tool"`
	// ByOverride marks access granted since the baseline only through a
	// session's capability override: the agent is extensible now and was
	// not then, so every tool it is denied is one override away.
	ByOverride bool `json:"by_override,omitempty"`
	// ByRuntime marks access granted since the baseline because the
	// agent's capabilities or policy come from runtime() now and did not
	// then: what it holds is decided when it starts, so every tool it
	// could not call then may be reachable.
	ByRuntime bool `json:"by_runtime,omitempty"`
}

// Incomplete says why a report does not cover the whole workspace.
type Incomplete struct {
	// Failed is true when nothing was audited: the workspace (its
	// manifest, lockfile or state) could not be read, and the report has
	// no findings and no matrix. Otherwise the report covers what could
	// be planned: errors no finding reports (a tool that cannot be
	// resolved, a lockfile -lockfile=readonly refuses) kept the rest out.
	Failed bool `json:"failed"`
	// Errors are what stopped the audit, with the text standard error
	// shows: scrubbed of the manifest's credentials, and with control
	// characters and bidirectional overrides escaped.
	Errors []Diagnostic `json:"errors"`
}

// Diagnostic is an error that kept the audit from seeing the whole
// workspace: what it says and where.
type Diagnostic struct {
	Summary string     `json:"summary"`
	Detail  string     `json:"detail"`
	Range   *hcl.Range `json:"-"`
}
