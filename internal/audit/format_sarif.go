package audit

import (
	"encoding/json"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/render"
	"github.com/agentform/agentform/internal/version"
)

// SARIF constants: the schema the log declares (the OASIS 2.1.0 errata 01
// schema, committed as testdata/sarif-schema-2.1.0.json), the key of
// partialFingerprints, and the tool's home page.
const (
	sarifSchemaURI   = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	sarifVersion     = "2.1.0"
	sarifFingerprint = "agentform/v1"
	sarifInfoURI     = "https://github.com/agentform/agentform"
)

// The SARIF 2.1.0 objects agentform writes: typed structs for the subset
// it uses. (A SARIF library was considered; those on the module proxy
// either write null for absent objects, which the schema rejects, or pull
// in a JSON-schema validator and a newer uuid at run time.) Optional
// fields are omitted when empty so that the log validates.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
	ColumnKind  string            `json:"columnKind"`
}

// sarifInvocation says whether the audit saw the whole workspace: an
// incomplete or failed audit is not a successful execution, and its
// notifications are the errors that stopped it.
type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string             `json:"id"`
	Name                 string             `json:"name,omitempty"`
	ShortDescription     sarifText          `json:"shortDescription"`
	FullDescription      *sarifText         `json:"fullDescription,omitempty"`
	HelpURI              string             `json:"helpUri,omitempty"`
	DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           *int               `json:"ruleIndex,omitempty"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations"`
	PartialFingerprints map[string]string  `json:"partialFingerprints,omitempty"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogicalLocation `json:"logicalLocations,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// sarifSourceRoot is the base of relative locations: the repository root
// (WriteOptions.RepoPath), as code-scanning services resolve them.
const sarifSourceRoot = "%SRCROOT%"

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
	EndLine     int `json:"endLine,omitempty"`
	EndColumn   int `json:"endColumn,omitempty"`
}

// sarifLogicalLocation names the finding's target ("agent.x"), which is
// what a waiver names and what a finding without a range is about.
type sarifLogicalLocation struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
}

type sarifSuppression struct {
	Kind          string             `json:"kind"`
	Status        string             `json:"status"`
	Justification string             `json:"justification,omitempty"`
	Location      *sarifLocation     `json:"location,omitempty"`
	Properties    *sarifWaiverDetail `json:"properties,omitempty"`
}

type sarifWaiverDetail struct {
	Expires string `json:"expires"`
}

// writeSARIF writes one run whose driver declares every rule of the
// report (and AF111 with a gate), sorted by ID; results are the findings,
// then the access a failing gate found granted (gateFindings), then the
// waived findings with a suppression each.
func writeSARIF(w io.Writer, r *Report, opts WriteOptions) error {
	src := newSourceSet(opts.Source, nil)
	rules := reportRules(r)
	index := map[string]int{}
	driver := sarifDriver{
		Name:           "agentform",
		Version:        r.AgentformVersion,
		InformationURI: sarifInfoURI,
		Rules:          make([]sarifRule, 0, len(rules)),
	}
	if driver.Version == "" {
		driver.Version = version.Version
	}
	for _, rule := range rules {
		if _, dup := index[rule.ID]; dup {
			continue // the schema wants rules unique
		}
		index[rule.ID] = len(driver.Rules)
		sr := sarifRule{
			ID:                   rule.ID,
			Name:                 rule.Name,
			ShortDescription:     sarifText{Text: rule.Short},
			HelpURI:              sarifHelpURI(rule.HelpURI),
			DefaultConfiguration: sarifConfiguration{Level: sarifLevel(rule.Severity)},
		}
		if rule.Full != "" {
			sr.FullDescription = &sarifText{Text: rule.Full}
		}
		driver.Rules = append(driver.Rules, sr)
	}

	gate := gateFindings(r)
	results := make([]sarifResult, 0, len(r.Findings)+len(gate)+len(r.Waived))
	for _, f := range orderedFindings(r.Findings) {
		results = append(results, newSARIFResult(f, index, false, src, opts.RepoPath))
	}
	// The gate is not a finding, but code scanning shows results only:
	// each access granted since the baseline is an AF111 alert.
	for _, f := range gate {
		results = append(results, newSARIFResult(f, index, false, src, opts.RepoPath))
	}
	for _, f := range orderedFindings(r.Waived) {
		results = append(results, newSARIFResult(f, index, true, src, opts.RepoPath))
	}

	doc := sarifLog{
		Schema:  sarifSchemaURI,
		Version: sarifVersion,
		Runs: []sarifRun{{
			Tool:        sarifTool{Driver: driver},
			Invocations: []sarifInvocation{newSARIFInvocation(r.Incomplete, src, opts.RepoPath)},
			Results:     results,
			// Columns count code points, computed from each position's
			// byte offset in the source (hcl.Pos.Column counts grapheme
			// clusters, which differ on lines with flags, emoji
			// sequences or combining marks).
			ColumnKind: "unicodeCodePoints",
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// newSARIFInvocation is the run's one invocation: successful when the
// audit saw the whole workspace, else unsuccessful with one error
// notification per error that stopped it, located like results.
func newSARIFInvocation(inc *Incomplete, src *sourceSet, repoPath string) sarifInvocation {
	if inc == nil {
		return sarifInvocation{ExecutionSuccessful: true}
	}
	inv := sarifInvocation{ToolExecutionNotifications: []sarifNotification{}}
	for _, d := range orderedDiagnostics(inc.Errors) {
		n := sarifNotification{Level: "error", Message: sarifText{Text: render.Printable(diagnosticText(d))}}
		if loc, ok := newSARIFLocation(d.Range, "", src, repoPath); ok {
			n.Locations = []sarifLocation{loc}
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	if len(inv.ToolExecutionNotifications) == 0 {
		// Say why all the same.
		inv.ToolExecutionNotifications = []sarifNotification{{Level: "error", Message: sarifText{Text: render.Printable(incompleteLine(inc))}}}
	}
	return inv
}

func newSARIFResult(f Finding, index map[string]int, waived bool, src *sourceSet, repoPath string) sarifResult {
	res := sarifResult{
		RuleID: f.RuleID,
		Level:  sarifLevel(f.Severity),
		// Shown by code scanning as text: control characters and
		// bidirectional overrides escaped, as every format but JSON does.
		Message:   sarifText{Text: render.Printable(f.Message)},
		Locations: []sarifLocation{},
	}
	if i, ok := index[f.RuleID]; ok {
		res.RuleIndex = &i
	}
	if loc, ok := newSARIFLocation(f.Range, f.Target, src, repoPath); ok {
		res.Locations = append(res.Locations, loc)
	}
	if f.Fingerprint != "" {
		res.PartialFingerprints = map[string]string{sarifFingerprint: f.Fingerprint}
	}
	if waived {
		res.Suppressions = []sarifSuppression{newSARIFSuppression(f.Waiver, src, repoPath)}
	}
	return res
}

// newSARIFSuppression describes a waiver: "inSource" when the waiver
// block's location is known (it lives in the manifest being audited),
// "external" otherwise. A waived finding without a Waiver still gets an
// external suppression, so that it is never reported as open.
func newSARIFSuppression(w *Waiver, src *sourceSet, repoPath string) sarifSuppression {
	s := sarifSuppression{Kind: "external", Status: "accepted"}
	if w == nil {
		return s
	}
	s.Justification = render.Printable(w.Reason)
	if loc, ok := newSARIFLocation(w.Range, "", src, repoPath); ok {
		s.Kind = "inSource"
		s.Location = &loc
	}
	if w.Expires != "" {
		s.Properties = &sarifWaiverDetail{Expires: w.Expires}
	}
	return s
}

// newSARIFLocation returns the physical location of rng and the logical
// location of target; ok is false when there is neither. A relative file
// name, relative to the workspace, is made relative to the repository root
// by repoPath, the workspace's path from it. Columns are counted in code
// points in the file's text from src; without the text, the region gives
// lines only rather than columns that could be wrong.
func newSARIFLocation(rng *hcl.Range, target string, src *sourceSet, repoPath string) (sarifLocation, bool) {
	var loc sarifLocation
	if rng != nil && rng.Filename != "" {
		art := sarifArtifactLocation{URI: sarifURI(rng.Filename)}
		if !filepath.IsAbs(rng.Filename) && !path.IsAbs(filepath.ToSlash(rng.Filename)) {
			art = sarifArtifactLocation{URI: sarifURI(path.Join(repoPath, filepath.ToSlash(rng.Filename))), URIBaseID: sarifSourceRoot}
		}
		pl := &sarifPhysicalLocation{ArtifactLocation: art}
		if rng.Start.Line >= 1 {
			reg := &sarifRegion{StartLine: rng.Start.Line}
			if col, ok := src.column(rng.Filename, rng.Start); ok && rng.Start.Column >= 1 {
				reg.StartColumn = col
			}
			if rng.End.Line >= rng.Start.Line {
				reg.EndLine = rng.End.Line
				if col, ok := src.column(rng.Filename, rng.End); ok && rng.End.Column >= 1 && reg.StartColumn >= 1 &&
					(rng.End.Line > rng.Start.Line || col >= reg.StartColumn) {
					reg.EndColumn = col
				}
			}
			pl.Region = reg
		}
		loc.PhysicalLocation = pl
	}
	if target != "" {
		loc.LogicalLocations = []sarifLogicalLocation{{FullyQualifiedName: target}}
	}
	return loc, loc.PhysicalLocation != nil || loc.LogicalLocations != nil
}

// sarifURI turns a file name into a URI reference: relative names stay
// relative (with forward slashes and percent-escapes), absolute ones
// become file: URIs.
func sarifURI(name string) string {
	slashed := filepath.ToSlash(name)
	if filepath.IsAbs(name) || path.IsAbs(slashed) {
		if !strings.HasPrefix(slashed, "/") {
			slashed = "/" + slashed // a Windows drive letter
		}
		return (&url.URL{Scheme: "file", Path: slashed}).String()
	}
	return (&url.URL{Path: slashed}).String()
}

// sarifHelpURI keeps a help URI only when it is absolute, as the schema's
// "uri" format requires.
func sarifHelpURI(s string) string {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		return ""
	}
	return s
}

// sarifLevel maps a severity to a SARIF level; an unknown severity is
// "none".
func sarifLevel(s Severity) string {
	switch s {
	case SeverityError, SeverityWarning, SeverityNote:
		return string(s)
	}
	return "none"
}
