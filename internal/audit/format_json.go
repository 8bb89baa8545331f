package audit

import (
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// jsonReport is Report as written by the json format: the same fields and
// names (so ReadBaseline reads it back), findings and waivers with their
// range, every list non-null, and everything in a stable order.
type jsonReport struct {
	FormatVersion    string           `json:"format_version"`
	AgentformVersion string           `json:"agentform_version"`
	Findings         []jsonFinding    `json:"findings"`
	Waived           []jsonFinding    `json:"waived"`
	Rules            []Rule           `json:"rules"`
	Matrix           []MatrixRow      `json:"matrix"`
	Counts           map[Severity]int `json:"counts"`
	Gate             *Gate            `json:"gate,omitempty"`
	Incomplete       *jsonIncomplete  `json:"incomplete,omitempty"`
}

// jsonIncomplete is Incomplete with each error's range.
type jsonIncomplete struct {
	Failed bool             `json:"failed"`
	Errors []jsonDiagnostic `json:"errors"`
}

type jsonDiagnostic struct {
	Diagnostic
	Range *jsonRange `json:"range"` // null for an error about no place in the files
}

// jsonFinding adds the range that Finding leaves out of its own encoding.
// The embedded Finding contributes its other fields; the outer Range and
// Waiver shadow the embedded ones.
type jsonFinding struct {
	Finding
	Range  *jsonRange  `json:"range,omitempty"`
	Waiver *jsonWaiver `json:"waiver,omitempty"`
}

type jsonWaiver struct {
	Waiver
	Range *jsonRange `json:"range,omitempty"`
}

// jsonRange is an hcl.Range as {"filename", "start": {"line", "column"},
// "end": {...}}; lines and columns count from 1, and the end is exclusive.
type jsonRange struct {
	Filename string  `json:"filename"`
	Start    jsonPos `json:"start"`
	End      jsonPos `json:"end"`
}

type jsonPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

func newJSONRange(r *hcl.Range) *jsonRange {
	if r == nil {
		return nil
	}
	return &jsonRange{
		Filename: r.Filename,
		Start:    jsonPos{Line: r.Start.Line, Column: r.Start.Column},
		End:      jsonPos{Line: r.End.Line, Column: r.End.Column},
	}
}

func newJSONFindings(fs []Finding) []jsonFinding {
	out := make([]jsonFinding, 0, len(fs))
	for _, f := range orderedFindings(fs) {
		jf := jsonFinding{Finding: f, Range: newJSONRange(f.Range)}
		if f.Waiver != nil {
			jf.Waiver = &jsonWaiver{Waiver: *f.Waiver, Range: newJSONRange(f.Waiver.Range)}
		}
		out = append(out, jf)
	}
	return out
}

func writeJSON(w io.Writer, r *Report) error {
	doc := jsonReport{
		FormatVersion:    r.FormatVersion,
		AgentformVersion: r.AgentformVersion,
		Findings:         newJSONFindings(r.Findings),
		Waived:           newJSONFindings(r.Waived),
		Rules:            orderedRules(r.Rules),
		Matrix:           jsonMatrix(r.Matrix),
		Counts:           reportCounts(r),
		Gate:             jsonGate(r.Gate),
		Incomplete:       newJSONIncomplete(r.Incomplete),
	}
	if doc.FormatVersion == "" {
		doc.FormatVersion = FormatVersion
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// The document goes to files and pipes, not into HTML.
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// orderedRules returns the rules sorted by ID, never nil.
func orderedRules(rules []Rule) []Rule {
	out := append([]Rule{}, rules...)
	slices.SortStableFunc(out, func(x, y Rule) int { return strings.Compare(x.ID, y.ID) })
	return out
}

// jsonMatrix sorts rows by agent and cells by tool, and turns nil lists
// into empty ones.
func jsonMatrix(rows []MatrixRow) []MatrixRow {
	out := make([]MatrixRow, 0, len(rows))
	for _, row := range orderedMatrix(rows) {
		row.Holds = append([]string{}, row.Holds...)
		cells := make([]Cell, 0, len(row.Cells))
		for _, c := range row.Cells {
			c.Missing = append([]string{}, c.Missing...)
			cells = append(cells, c)
		}
		slices.SortStableFunc(cells, func(x, y Cell) int { return strings.Compare(x.Tool, y.Tool) })
		row.Cells = cells
		out = append(out, row)
	}
	return out
}

// jsonGate copies the gate with nil lists made empty.
func jsonGate(g *Gate) *Gate {
	if g == nil {
		return nil
	}
	out := *g
	out.Granted = append([]Access{}, g.Granted...)
	out.Revoked = append([]Access{}, g.Revoked...)
	out.NewFindings = append([]string{}, g.NewFindings...)
	out.Reasons = append([]string{}, g.Reasons...)
	return &out
}

func newJSONIncomplete(inc *Incomplete) *jsonIncomplete {
	if inc == nil {
		return nil
	}
	out := &jsonIncomplete{Failed: inc.Failed, Errors: []jsonDiagnostic{}}
	for _, d := range orderedDiagnostics(inc.Errors) {
		out.Errors = append(out.Errors, jsonDiagnostic{Diagnostic: d, Range: newJSONRange(d.Range)})
	}
	return out
}
