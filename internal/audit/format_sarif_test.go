package audit

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestSARIFColumns: SARIF columns count code points, as the log's
// columnKind says, on a line whose flags and combining mark make hcl's
// grapheme-cluster columns smaller; without the source, regions give lines
// only.
func TestSARIFColumns(t *testing.T) {
	r, opts := workspaceReport(t, filepath.Join("testdata", t.Name()))
	region := func(opts WriteOptions) sarifRegion {
		t.Helper()
		var log sarifLog
		if err := json.Unmarshal(writeReport(t, r, FormatSARIF, opts), &log); err != nil {
			t.Fatal(err)
		}
		for _, res := range log.Runs[0].Results {
			if res.RuleID == RuleLiteralCredential {
				return *res.Locations[0].PhysicalLocation.Region
			}
		}
		t.Fatalf("no %s result", RuleLiteralCredential)
		return sarifRegion{}
	}
	// `  headers = { X-Note = "🇺🇸🇺🇸e̊", Authorization = "Bearer literal" }`:
	// the value starts at code point 50 (hcl column 47) and ends before 66.
	if got, want := region(opts), (sarifRegion{StartLine: 19, StartColumn: 50, EndLine: 19, EndColumn: 66}); got != want {
		t.Errorf("region with the source\ngot:  %+v\nwant: %+v", got, want)
	}
	if got, want := region(WriteOptions{}), (sarifRegion{StartLine: 19, EndLine: 19}); got != want {
		t.Errorf("region without the source\ngot:  %+v\nwant: %+v", got, want)
	}
}
