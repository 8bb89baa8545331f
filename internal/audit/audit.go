package audit

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/agentform/agentform/internal/capability"
	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/internal/resolve"
	"github.com/agentform/agentform/internal/version"
	"github.com/agentform/agentform/planner"
)

// Options change how an audit is run.
type Options struct {
	// Now is the moment waiver expiry dates are compared with (as a UTC
	// date); the zero value means time.Now(). Tests and reproducible CI
	// runs set it.
	Now time.Time
}

// Run audits a plan: it applies every rule of the catalog, applies the
// manifest's waiver blocks, and returns the report. Findings and Waived
// are sorted (most severe first, then rule ID, target, agent, tool and
// message), Rules is the whole catalog, Matrix is the plan's capability
// matrix, and Counts holds every severity (0 when none). A plan whose
// manifest did not load (no configuration or no matrix) yields a report
// with no findings rather than a panic.
//
// Run reads only the plan: its registered tools, agents, matrix, lock
// drift, configuration (for locations) and resolution (for served MCP
// tools and skills). It never reads a runtime() value.
func Run(p *planner.Plan, opts Options) *Report {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	r := newReport()
	if p == nil || p.Config() == nil {
		return r
	}
	a := newAuditor(p)
	a.runChecks()
	findings, waived, hygiene := applyWaivers(a.findings, a.cfg.Waivers, now)
	findings = append(findings, hygiene...)
	sortFindings(findings)
	sortFindings(waived)
	r.Findings = findings
	r.Waived = waived
	for _, f := range findings {
		r.Counts[f.Severity]++
	}
	r.Matrix = matrixRows(p)
	for _, rt := range p.Tools {
		if !rt.Resolved {
			r.unresolved = append(r.unresolved, rt.Name)
		}
	}
	slices.Sort(r.unresolved)
	r.unresolved = slices.Compact(r.unresolved)
	r.agentRanges = map[string]*hcl.Range{}
	for _, ag := range a.cfg.Agents {
		r.agentRanges[ag.Name] = capsRange(ag)
	}
	r.Redaction = a.redaction()
	scrubFindings(r.Findings, r.Redaction)
	scrubFindings(r.Waived, r.Redaction)
	return r
}

// newReport returns a report of no findings: every rule, every list
// empty, every severity counted 0.
func newReport() *Report {
	return &Report{
		FormatVersion:    FormatVersion,
		AgentformVersion: version.Version,
		Findings:         []Finding{},
		Waived:           []Finding{},
		Rules:            Rules(),
		Matrix:           []MatrixRow{},
		Counts:           map[Severity]int{SeverityError: 0, SeverityWarning: 0, SeverityNote: 0},
	}
}

// auditor holds what every rule reads, indexed once, and collects the
// findings.
type auditor struct {
	p   *planner.Plan
	cfg *manifest.Config
	// ws is nil when the plan was made without resolving.
	ws *resolve.Workspace
	// m is never nil: a plan without a matrix gets an empty one.
	m *capability.Matrix
	// rows maps an agent name to its effective row.
	rows map[string]planner.AgentRow
	// tools maps every registered tool name (disabled ones included) to
	// its registration.
	tools map[string]planner.RegisteredTool
	// blockTools maps a block address ("tool.x", "skills") to its enabled
	// registered tools, in name order.
	blockTools map[string][]planner.RegisteredTool

	// creds caches credentials().
	creds []credential
	// docs caches jsonDoc().
	docs map[string]*jsonDoc
	// exprs and blocks index each native-syntax file's expressions (by
	// start and end byte) and blocks (by start byte), built on first use:
	// a lookup per credential walking the whole file made a plan of
	// 2,000 tools with a credential each take half a minute.
	exprs  map[string]map[[2]int]hclsyntax.Expression
	blocks map[string]map[int]*hclsyntax.Block

	findings []Finding
}

func newAuditor(p *planner.Plan) *auditor {
	a := &auditor{
		p:          p,
		cfg:        p.Config(),
		ws:         p.Resolution(),
		m:          p.Matrix(),
		rows:       map[string]planner.AgentRow{},
		tools:      map[string]planner.RegisteredTool{},
		blockTools: map[string][]planner.RegisteredTool{},
	}
	if a.m == nil {
		a.m = capability.Compute(nil, nil)
	}
	for _, row := range p.Agents {
		a.rows[row.Name] = row
	}
	for _, t := range p.Tools {
		a.tools[t.Name] = t
		if t.Enabled {
			a.blockTools[t.Block] = append(a.blockTools[t.Block], t)
		}
	}
	return a
}

// newAuditorForConfig returns an auditor of the configuration alone, for
// what needs no plan (Redaction).
func newAuditorForConfig(cfg *manifest.Config) *auditor {
	return &auditor{cfg: cfg}
}

// scrubFindings replaces every credential value in the text of findings
// (a check's error_message or a waiver's reason can interpolate a local
// that feeds a credential) with render.RedactMark.
func scrubFindings(fs []Finding, red *render.Redaction) {
	for i := range fs {
		fs[i].Message = red.Scrub(fs[i].Message)
		if w := fs[i].Waiver; w != nil {
			c := *w
			c.Reason = red.Scrub(c.Reason)
			fs[i].Waiver = &c
		}
	}
}

// add records a finding of rule ruleID; key tells apart findings that share
// rule, target, agent and tool (see Fingerprint).
func (a *auditor) add(ruleID string, f Finding, key string) {
	f.RuleID = ruleID
	a.findings = append(a.findings, withIdentity(f, key))
}

// agentIndex returns the matrix index of the agent named name.
func (a *auditor) agentIndex(name string) (int, bool) { return a.m.AgentIndex(name) }

// callable reports whether agent ai may call the registered tool named
// tool; a disabled or unknown tool is callable by no one.
func (a *auditor) callable(ai int, tool string) bool {
	ti, ok := a.m.ToolIndex(tool)
	return ok && a.m.Allowed(ai, ti)
}

// capsRange is where an agent's capabilities are written: the attribute,
// or the agent block when it has none.
func capsRange(ag *manifest.Agent) *hcl.Range {
	if ag.Capabilities.Set {
		return ag.Capabilities.Range.Ptr()
	}
	return ag.DeclRange.Ptr()
}

// elemRange is the range of element i of a list argument, or of the whole
// argument when elements have no ranges of their own (a runtime() list).
func elemRange(l manifest.StringList, i int, fallback hcl.Range) *hcl.Range {
	if i >= 0 && i < len(l.ElemRanges) && l.ElemRanges[i].Filename != "" {
		return l.ElemRanges[i].Ptr()
	}
	if l.Set {
		return l.Range.Ptr()
	}
	return fallback.Ptr()
}

// strRange is where a string argument is written, or fallback when it is
// not.
func strRange(s manifest.String, fallback hcl.Range) *hcl.Range {
	if s.Set && s.Range.Filename != "" {
		return s.Range.Ptr()
	}
	return fallback.Ptr()
}

// syntaxBody returns the native-syntax body of a manifest file, or nil
// (JSON syntax, or a file the configuration does not hold).
func syntaxBody(cfg *manifest.Config, filename string) *hclsyntax.Body {
	f := cfg.Files[filename]
	if f == nil {
		return nil
	}
	body, _ := f.Body.(*hclsyntax.Body)
	return body
}

// sameStart reports whether two ranges start at the same place of the
// same file.
func sameStart(x, y hcl.Range) bool {
	return x.Filename == y.Filename && x.Start.Byte == y.Start.Byte
}

// findBlock returns the native-syntax block whose header is at rng: the
// first, in document order, of those starting there.
func (a *auditor) findBlock(rng hcl.Range) *hclsyntax.Block {
	idx, ok := a.blocks[rng.Filename]
	if !ok {
		idx = map[int]*hclsyntax.Block{}
		var walk func(b *hclsyntax.Body)
		walk = func(b *hclsyntax.Body) {
			for _, blk := range b.Blocks {
				if _, seen := idx[blk.DefRange().Start.Byte]; !seen {
					idx[blk.DefRange().Start.Byte] = blk
				}
				walk(blk.Body)
			}
		}
		if body := syntaxBody(a.cfg, rng.Filename); body != nil {
			walk(body)
		}
		if a.blocks == nil {
			a.blocks = map[string]map[int]*hclsyntax.Block{}
		}
		a.blocks[rng.Filename] = idx
	}
	return idx[rng.Start.Byte]
}

// findExpr returns the native-syntax expression that spans rng exactly:
// the outermost, the first VisitAll meets, of those that do.
func (a *auditor) findExpr(rng hcl.Range) hclsyntax.Expression {
	idx, ok := a.exprs[rng.Filename]
	if !ok {
		idx = map[[2]int]hclsyntax.Expression{}
		if body := syntaxBody(a.cfg, rng.Filename); body != nil {
			_ = hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
				if e, ok := n.(hclsyntax.Expression); ok {
					k := [2]int{e.Range().Start.Byte, e.Range().End.Byte}
					if _, seen := idx[k]; !seen {
						idx[k] = e
					}
				}
				return nil
			})
		}
		if a.exprs == nil {
			a.exprs = map[string]map[[2]int]hclsyntax.Expression{}
		}
		a.exprs[rng.Filename] = idx
	}
	return idx[[2]int{rng.Start.Byte, rng.End.Byte}]
}

// keyValueRange locates the value written for key inside a free-form
// argument (headers, config) or block (provider config) whose range is
// container, in either syntax. It falls back to container when the text
// cannot be found (a value built by a local).
func (a *auditor) keyValueRange(container hcl.Range, key string) *hcl.Range {
	if doc := a.jsonDoc(container.Filename); doc != nil {
		if obj := doc.objectAt(container.Start.Byte); obj != nil {
			if v := obj.member(key); v != nil {
				return doc.rangeOf(container.Filename, v).Ptr()
			}
		}
		return container.Ptr()
	}
	if blk := a.findBlock(container); blk != nil {
		if attr, ok := blk.Body.Attributes[key]; ok {
			return attr.Expr.Range().Ptr()
		}
		return container.Ptr()
	}
	for _, item := range a.objectItems(container) {
		if item.key == key {
			return item.rng.Ptr()
		}
	}
	return container.Ptr()
}

// objectItem is one key of an object written in the manifest, and where
// its value is written.
type objectItem struct {
	key string
	rng hcl.Range
}

// objectItems returns the keys of the object written at rng, in either
// syntax, in the order written; none when rng holds no object.
func (a *auditor) objectItems(rng hcl.Range) []objectItem {
	var out []objectItem
	if doc := a.jsonDoc(rng.Filename); doc != nil {
		if obj := doc.objectAt(rng.Start.Byte); obj != nil {
			for _, m := range obj.members {
				out = append(out, objectItem{key: m.key, rng: doc.rangeOf(rng.Filename, m.value)})
			}
		}
		return out
	}
	expr := a.findExpr(rng)
	for {
		wrapped, ok := expr.(*hclsyntax.ParenthesesExpr)
		if !ok {
			break
		}
		expr = wrapped.Expression
	}
	if obj, ok := expr.(*hclsyntax.ObjectConsExpr); ok {
		for _, item := range obj.Items {
			out = append(out, objectItem{key: exprKey(item.KeyExpr), rng: item.ValueExpr.Range()})
		}
	}
	return out
}

// exprKey returns an object key written as a bare name or a literal
// string, or "".
func exprKey(e hcl.Expression) string {
	if k := hcl.ExprAsKeyword(e); k != "" {
		return k
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}

// sortFindings orders findings most severe first, then by rule ID,
// target, agent, tool and message; the fingerprint breaks any remaining
// tie so that the order never depends on discovery order.
func sortFindings(fs []Finding) {
	slices.SortFunc(fs, func(x, y Finding) int {
		if c := cmp.Compare(y.Severity.Rank(), x.Severity.Rank()); c != 0 {
			return c
		}
		// Compared one by one, not with cmp.Or: messages are long and a
		// report can hold millions of findings.
		for _, pair := range [...][2]*string{
			{&x.RuleID, &y.RuleID}, {&x.Target, &y.Target}, {&x.Agent, &y.Agent},
			{&x.Tool, &y.Tool}, {&x.Message, &y.Message}, {&x.Fingerprint, &y.Fingerprint},
		} {
			if c := strings.Compare(*pair[0], *pair[1]); c != 0 {
				return c
			}
		}
		return 0
	})
}

// matrixRows renders the plan's matrix: agents and cells in name order,
// every slice non-nil.
func matrixRows(p *planner.Plan) []MatrixRow {
	m := p.Matrix()
	if m == nil {
		return []MatrixRow{}
	}
	rows := map[string]planner.AgentRow{}
	for _, row := range p.Agents {
		rows[row.Name] = row
	}
	agents, tools := m.Agents(), m.Tools()
	out := make([]MatrixRow, 0, len(agents))
	for ai, ag := range agents {
		row := MatrixRow{Agent: ag.Name, Policy: string(ag.Policy), Holds: slices.Clone(ag.Holds), Cells: make([]Cell, 0, len(tools))}
		if pr, ok := rows[ag.Name]; ok {
			row.Policy = pr.Policy
			row.RuntimeDependent = pr.RuntimeDependent
		}
		if row.Policy == "" {
			row.Policy = manifest.PolicyLocked
		}
		if row.Holds == nil {
			row.Holds = []string{}
		}
		for ti, t := range tools {
			cell := Cell{Tool: t.Name, Allowed: m.Allowed(ai, ti), Missing: []string{}}
			if !cell.Allowed {
				// Only a denied cell has something to explain; Cell is
				// computed on demand, so allowed cells skip it.
				c := m.Cell(ai, ti)
				cell.OverrideReachable = c.OverrideReachable
				if c.Missing != nil {
					cell.Missing = c.Missing
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		out = append(out, row)
	}
	return out
}
