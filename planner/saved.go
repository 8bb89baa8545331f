package planner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agentform/agentform/internal/safefile"
	"github.com/agentform/agentform/internal/version"
	"github.com/agentform/agentform/lockfile"
)

// SavedFormatVersion is the version of the saved plan file format.
const SavedFormatVersion = "1"

// Saved is a plan written by "agentform plan -out=FILE": enough to refuse
// applying it when the state moved or the inputs changed since, and to
// show it again. It holds no runtime or secret value: fingerprints are
// digests of attributes that keep runtime values as references.
type Saved struct {
	FormatVersion    string `json:"format_version"`
	AgentformVersion string `json:"agentform_version"`
	// Lineage and Serial are the state the plan was made against (empty
	// and 0 without state).
	Lineage string `json:"lineage"`
	Serial  uint64 `json:"serial"`
	// LockDigest is the digest of the lockfile the plan would write.
	LockDigest string `json:"lock_digest"`
	// LockReadDigest is the digest of the lockfile as the plan read it
	// (an empty one's when there was none): apply of the file refuses a
	// lockfile edited since, which it would otherwise overwrite. Empty in
	// plans saved before it was recorded.
	LockReadDigest string `json:"lock_read_digest,omitempty"`
	// OutDir is the -out-dir the plan was made with ("" for none): apply
	// of the file writes where the plan said.
	OutDir string `json:"out_dir,omitempty"`
	// Fingerprints maps every address to its input fingerprint.
	Fingerprints map[string]string `json:"fingerprints"`
	// Document is the JSON plan document and Text the plain plan text, for
	// "agentform show FILE".
	Document json.RawMessage `json:"document"`
	Text     string          `json:"text"`
}

// Errors of saved plans.
var (
	// ErrStalePlan is returned when the state moved (another apply, a
	// state rm) since the plan was saved.
	ErrStalePlan = errors.New("saved plan is stale")
	// ErrPlanInputsChanged is returned when re-planning gives different
	// fingerprints or a different lockfile than the saved plan: a block
	// was edited, or what a tool resolves to (its package's files, an MCP
	// server's tools, an A2A agent card) is not what it was.
	ErrPlanInputsChanged = errors.New("the workspace changed since the plan was saved")
	// ErrOutDirDiffers is returned when apply of a saved plan is given an
	// -out-dir other than the one the plan was made with.
	ErrOutDirDiffers = errors.New("the saved plan writes elsewhere")
)

// Save returns the saved form of p, with its JSON document and text.
func (p *Plan) Save(document []byte, text string) *Saved {
	s := &Saved{
		FormatVersion:    SavedFormatVersion,
		AgentformVersion: version.Version,
		Fingerprints:     map[string]string{},
		OutDir:           p.outDir,
		Document:         document,
		Text:             text,
	}
	if p.Applied != nil {
		s.Lineage, s.Serial = p.Applied.Lineage, p.Applied.Serial
	}
	if p.Lock != nil {
		s.LockDigest = p.LockDigest()
	}
	if p.lockRead != nil {
		s.LockReadDigest = p.lockRead.Digest()
	}
	for _, a := range p.Addresses {
		s.Fingerprints[a.Address] = a.Fingerprint
	}
	return s
}

// WriteFile writes the saved plan to path (mode 0600: plans describe the
// configuration, which deserves the care of a config file).
func (s *Saved) WriteFile(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if int64(len(b))+1 > MaxSavedSize {
		// apply could not read it back.
		return fmt.Errorf("the saved plan would be %d bytes, more than the %d that apply reads; apply without a saved plan", len(b)+1, int64(MaxSavedSize))
	}
	return safefile.Write(path, append(b, '\n'), 0o600)
}

// MaxSavedSize is the largest saved plan ReadSaved reads: it is read and
// decoded in memory, so the bound is what memory can hold, 4 GiB. A plan
// file grows with the matrix, about 470 bytes a cell (47 MB for 100
// agents × 1,000 tools); named pipes and devices are refused whatever
// their size.
const MaxSavedSize = 4 << 30

// ReadSaved reads a saved plan file, refusing what is not a regular file
// or is larger than MaxSavedSize.
func ReadSaved(path string) (*Saved, error) {
	b, err := safefile.Read(path, MaxSavedSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("there is no file %s; agentform plan -out=FILE writes a saved plan", path)
	}
	if err != nil {
		return nil, err
	}
	var s Saved
	notPlan := func(what string) error {
		return fmt.Errorf("%s is not a saved agentform plan: it is %s; agentform plan -out=FILE writes one", path, what)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		// Say what the file looks like instead of where JSON broke in it.
		switch trimmed := bytes.TrimLeft(b, " \t\r\n"); {
		case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
			return nil, notPlan("a gzip archive (an artifact?)")
		case len(trimmed) == 0:
			return nil, notPlan("empty")
		case !json.Valid(b):
			return nil, notPlan("not JSON")
		case trimmed[0] != '{':
			return nil, notPlan("JSON, but not an object")
		}
		// A field of the wrong type: name the field, not the Go struct.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, notPlan(fmt.Sprintf("JSON whose %q is %s, which no saved plan has", te.Field, article(te.Value)))
		}
		return nil, fmt.Errorf("%s is not a saved agentform plan: %w", path, err)
	}
	if s.Fingerprints == nil && s.FormatVersion != "" && s.FormatVersion != SavedFormatVersion {
		// plan -json's document has a format_version too.
		var doc struct {
			ResourceChanges json.RawMessage `json:"resource_changes"`
		}
		if json.Unmarshal(b, &doc) == nil && doc.ResourceChanges != nil {
			return nil, notPlan("a JSON plan document (plan -json), which shows a plan but cannot be applied")
		}
	}
	if s.FormatVersion == "" && s.Fingerprints == nil {
		return nil, notPlan("JSON without a saved plan's fields")
	}
	if s.FormatVersion != SavedFormatVersion {
		return nil, fmt.Errorf("%s is a saved plan of format %q; this agentform reads format %q", path, s.FormatVersion, SavedFormatVersion)
	}
	if s.Fingerprints == nil {
		return nil, fmt.Errorf("%s is not a saved agentform plan: it has no fingerprints", path)
	}
	// The text show prints and the document apply checks must say the
	// same: one edited to show less ("No changes.") would have a
	// reviewer approve what apply then does.
	if why := textDisagrees(s.Text, s.Document); why != "" {
		return nil, fmt.Errorf("%s is not a plan as agentform plan -out wrote it: %s. Plan again", path, why)
	}
	// As Terraform: another version may resolve, fingerprint or build
	// differently, so what this one would apply is not what was planned.
	if s.AgentformVersion != version.Version {
		made := "an unknown version of agentform"
		if s.AgentformVersion != "" {
			made = "agentform " + strconv.Quote(s.AgentformVersion)
		}
		return nil, fmt.Errorf("%s was made by %s, and this is agentform %q: a saved plan is applied and shown only by the version that made it. Plan again with this version, or use that one", path, made, version.Version)
	}
	return &s, nil
}

// stateMoved says how the state a saved plan was made against (lineage,
// serial) differs from the workspace's now.
func stateMoved(savedLineage string, savedSerial uint64, lineage string, serial uint64) string {
	switch {
	case savedLineage == lineage:
		return fmt.Sprintf("it was made against state serial %d, and the state is now at serial %d: something was applied or removed from state since", savedSerial, serial)
	case savedLineage == "":
		return fmt.Sprintf("it was made before anything was applied, and the state is now at serial %d (lineage %q): something was applied since", serial, lineage)
	case lineage == "":
		return fmt.Sprintf("it was made against state serial %d (lineage %q), and this workspace has no state: was it planned in another workspace, or the state database removed?", savedSerial, savedLineage)
	default:
		return fmt.Sprintf("it was made against another state (lineage %q, serial %d) than this workspace's (lineage %q, serial %d): was it planned in another workspace, or the state database replaced?", savedLineage, savedSerial, lineage, serial)
	}
}

// CheckSaved compares a fresh plan with a saved one: the state it was made
// against and its inputs must be the same. The error wraps ErrStalePlan or
// ErrPlanInputsChanged and says what differs.
func (p *Plan) CheckSaved(s *Saved) error {
	var lineage string
	var serial uint64
	if p.Applied != nil {
		lineage, serial = p.Applied.Lineage, p.Applied.Serial
	}
	if lineage != s.Lineage || serial != s.Serial {
		return fmt.Errorf("%w: %s; run agentform plan again", ErrStalePlan, stateMoved(s.Lineage, s.Serial, lineage, serial))
	}
	current := p.Save(nil, "")
	if cleanOutDir(current.OutDir) != cleanOutDir(s.OutDir) {
		return fmt.Errorf("%w: the plan was made with %s, and this apply has %s; apply the file without -out-dir, or plan again",
			ErrOutDirDiffers, outDirFlag(s.OutDir), outDirFlag(current.OutDir))
	}
	var diffs []string
	for addr, fp := range s.Fingerprints {
		if current.Fingerprints[addr] != fp {
			if _, ok := current.Fingerprints[addr]; !ok {
				diffs = append(diffs, addr+" was removed")
			} else {
				diffs = append(diffs, addr+" changed")
			}
		}
	}
	for addr := range current.Fingerprints {
		if _, ok := s.Fingerprints[addr]; !ok {
			diffs = append(diffs, addr+" was added")
		}
	}
	if current.LockDigest != s.LockDigest && len(diffs) == 0 {
		diffs = append(diffs, "the resolved lockfile differs")
	}
	// The lockfile as the plan read it, or as it would write it (an
	// agentform lock since wrote just that).
	if s.LockReadDigest != "" && current.LockReadDigest != s.LockReadDigest && current.LockReadDigest != s.LockDigest {
		diffs = append(diffs, lockfile.FileName+" was edited")
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return fmt.Errorf("%w: %s (a changed block is its manifest text or what it resolves to: a package's files, an MCP server's tools, an A2A agent card); run agentform plan again to see the change", ErrPlanInputsChanged, strings.Join(diffs, ", "))
	}
	return nil
}

// cleanOutDir is dir as the plan compares it: "build/", "./build" and
// "build" are the same directory.
func cleanOutDir(dir string) string {
	if dir == "" {
		return ""
	}
	return filepath.ToSlash(filepath.Clean(dir))
}

// outDirFlag spells an -out-dir for a message.
func outDirFlag(dir string) string {
	if dir == "" {
		return "no -out-dir"
	}
	return "-out-dir=" + dir
}

// article puts "a" or "an" before a JSON value kind ("number", "array").
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// planChangeLine matches a resource line of the plan text: "  + tool.a
// (bash) will be created".
var planChangeLine = regexp.MustCompile(`^  ([+~-]) (\S+)(?: \([^)]*\))? will be (?:created|updated in place|destroyed)$`)

// textDisagrees says how a saved plan's text disagrees with its JSON
// document, "" when it does not: the document must be a plan document,
// and the text must list exactly the resource actions it holds and count
// them, and its capability changes, in its summary line.
func textDisagrees(text string, document json.RawMessage) string {
	var doc struct {
		FormatVersion   string `json:"format_version"`
		ResourceChanges []struct {
			Address string   `json:"address"`
			Actions []string `json:"actions"`
		} `json:"resource_changes"`
		CapabilityChanges []struct {
			Change string `json:"change"`
		} `json:"capability_changes"`
	}
	if json.Unmarshal(document, &doc) != nil || doc.FormatVersion == "" || doc.ResourceChanges == nil {
		return "its JSON plan document is missing or damaged"
	}
	sym := map[string]string{ActionCreate: "+", ActionUpdate: "~", ActionDelete: "-"}
	var want []string
	var add, change, destroy, granted, revoked int
	plain := true
	for _, rc := range doc.ResourceChanges {
		for _, a := range rc.Actions {
			switch a {
			case ActionCreate:
				add++
			case ActionUpdate:
				change++
			case ActionDelete:
				destroy++
			}
		}
		if len(rc.Actions) > 0 && sym[rc.Actions[0]] != "" {
			want = append(want, sym[rc.Actions[0]]+" "+rc.Address)
			// The text escapes what is not printable ASCII.
			plain = plain && strings.IndexFunc(rc.Address, func(r rune) bool { return r <= ' ' || r > '~' || r == '\\' }) < 0
		}
	}
	for _, c := range doc.CapabilityChanges {
		if c.Change == "granted" {
			granted++
		} else {
			revoked++
		}
	}
	var got []string
	for _, line := range strings.Split(text, "\n") {
		if m := planChangeLine.FindStringSubmatch(line); m != nil {
			got = append(got, m[1]+" "+m[2])
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if plain && !slices.Equal(got, want) || len(got) != len(want) {
		return fmt.Sprintf("its text lists %d resource actions and its document %d, or other ones", len(got), len(want))
	}
	if add+change+destroy+granted+revoked > 0 {
		summary := fmt.Sprintf("Plan: %d to add, %d to change, %d to destroy. Capabilities: %d granted, %d revoked,", add, change, destroy, granted, revoked)
		if !strings.Contains(text, "\n"+summary) && !strings.HasPrefix(text, summary) {
			return "its text's summary is not its document's (" + strings.TrimSuffix(summary, ",") + ")"
		}
	} else if strings.Contains(text, "\nPlan: ") || strings.HasPrefix(text, "Plan: ") {
		return "its text shows changes its document does not hold"
	}
	return ""
}
