package lockfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

var update = flag.Bool("update", false, "rewrite testdata/full.lock.hcl from fullFile")

// sha returns a sha256 hash of seed, as the resolvers write them.
func sha(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// h1 returns a dirhash-shaped "h1:" hash of seed.
func h1(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	return "h1:" + base64.StdEncoding.EncodeToString(sum[:])
}

const (
	createIssueDef = `{"description":"Create an issue in a repository — the \"owner/repo\" form, e.g. ${owner}/%{repo}.\nNever\tmind.","inputSchema":{"properties":{"repo":{"type":"string"},"title":{"type":"string"}},"required":["repo","title"],"type":"object"},"name":"create_issue"}`
	searchDef      = `{"description":"Search repositories.","inputSchema":{"properties":{"q":{"type":"string"}},"type":"object"},"name":"search.repos"}`
)

// fullFile has an entry of every kind, every field set somewhere, and
// one field left empty (formatter has no deps).
func fullFile() *File {
	f := New()
	f.Skills["arithmetic"] = &Skill{Source: h1("skill arithmetic")}
	f.Skills["writing"] = &Skill{Source: h1("skill writing")}
	f.Tools["adder"] = &Tool{
		Kind:    "javascript",
		Source:  h1("adder source"),
		Deps:    sha("adder package-lock.json"),
		Bundle:  sha("adder bundle"),
		Bundler: "esbuild 0.28.2",
	}
	f.Tools["formatter"] = &Tool{
		Kind:    "javascript",
		Source:  h1("formatter source"),
		Bundle:  sha("formatter bundle"),
		Bundler: "esbuild 0.28.2",
	}
	f.Tools["github"] = &Tool{
		Kind:          "mcp",
		ServerName:    "github-mcp",
		ServerVersion: "1.4.0",
		HashedFields:  []string{"annotations", "description", "inputSchema", "name", "outputSchema"},
		Served: map[string]string{
			"create_issue": sha(createIssueDef),
			"search.repos": sha(searchDef),
		},
		Definitions: map[string]string{
			"create_issue": createIssueDef,
			"search.repos": searchDef,
		},
	}
	f.Tools["planner"] = &Tool{
		Kind:        "a2a",
		Card:        sha("planner card"),
		CardName:    "Planner",
		CardVersion: "1.2.0",
	}
	f.Tools["weather"] = &Tool{
		Kind:        "python",
		Source:      h1("weather source"),
		UVLock:      sha("weather uv.lock"),
		Interpreter: "embedded",
	}
	return f
}

const goldenPath = "testdata/full.lock.hcl"

func TestGolden(t *testing.T) {
	f := fullFile()
	got := f.Bytes()
	if *update {
		if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("reading the golden file: %v (run go test ./lockfile -run TestGolden -update to create it)", err)
	}
	t.Run("write", func(t *testing.T) {
		if !bytes.Equal(got, want) {
			t.Errorf("Bytes() differs from %s\ngot:\n%s\nwant:\n%s", goldenPath, got, want)
		}
	})
	t.Run("parse", func(t *testing.T) {
		parsed, diags := Parse(want, "full.lock.hcl")
		if diags.HasErrors() || len(diags) > 0 {
			t.Fatalf("got: %v\nwant: no diagnostics", diags)
		}
		if !reflect.DeepEqual(parsed, f) {
			t.Errorf("parsed file differs\ngot:  %#v\nwant: %#v", parsed.Tools["github"], f.Tools["github"])
		}
		if !parsed.Equal(f) || !f.Equal(parsed) {
			t.Errorf("got: Equal false\nwant: true (diff %v)", Diff(f, parsed))
		}
	})
	t.Run("digest", func(t *testing.T) {
		sum := sha256.Sum256(want)
		if got, want := f.Digest(), "sha256:"+hex.EncodeToString(sum[:]); got != want {
			t.Errorf("got:  %s\nwant: %s", got, want)
		}
	})
	t.Run("shape", func(t *testing.T) {
		if !bytes.HasPrefix(want, []byte(Header+"\n\nskill \"arithmetic\" {\n")) {
			t.Errorf("got:\n%.120s\nwant: the header, a blank line, then the first skill", want)
		}
		if !bytes.HasSuffix(want, []byte("}\n")) || bytes.HasSuffix(want, []byte("\n\n")) {
			t.Errorf("got: %q at the end\nwant: exactly one trailing newline", want[len(want)-4:])
		}
		if bytes.Contains(want, []byte("\n\n\n")) {
			t.Error("got: two blank lines in a row\nwant: exactly one between blocks")
		}
	})
}

func TestBytesStable(t *testing.T) {
	want := fullFile().Bytes()
	if got := fullFile().Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("two encodings differ\ngot:\n%s\nwant:\n%s", got, want)
	}
	// Maps built in the opposite insertion order, with hashed_fields
	// shuffled and repeated, nil and empty entries and empty map values:
	// none of that may show in the bytes.
	ref := fullFile()
	f := &File{Tools: map[string]*Tool{}, Skills: map[string]*Skill{}}
	for _, name := range []string{"weather", "planner", "github", "formatter", "adder"} {
		c := *ref.Tools[name]
		if name == "github" {
			c.HashedFields = []string{"outputSchema", "name", "name", "inputSchema", "description", "annotations", ""}
			c.Served = map[string]string{"search.repos": ref.Tools[name].Served["search.repos"], "create_issue": ref.Tools[name].Served["create_issue"], "gone": ""}
		}
		f.Tools[name] = &c
	}
	f.Tools["nothing"] = &Tool{}
	f.Tools["nil"] = nil
	f.Skills["writing"] = ref.Skills["writing"]
	f.Skills["arithmetic"] = ref.Skills["arithmetic"]
	f.Skills["empty"] = &Skill{}
	for i := 0; i < 20; i++ {
		if got := f.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("encoding depends on construction\ngot:\n%s\nwant:\n%s", got, want)
		}
	}
	if !f.Equal(ref) {
		t.Errorf("got: not Equal, diff %v\nwant: Equal", Diff(ref, f))
	}
	if f.Digest() != ref.Digest() {
		t.Errorf("got:  %s\nwant: %s", f.Digest(), ref.Digest())
	}
}

func TestBytesEmpty(t *testing.T) {
	want := Header + "\n"
	for name, f := range map[string]*File{"new": New(), "zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			if got := string(f.Bytes()); got != want {
				t.Errorf("got:  %q\nwant: %q", got, want)
			}
			parsed, diags := Parse(f.Bytes(), FileName)
			if len(diags) > 0 || parsed.Tools == nil || parsed.Skills == nil || len(parsed.Tools)+len(parsed.Skills) > 0 {
				t.Errorf("got: %v, %v\nwant: an empty File with non-nil maps, no diagnostics", parsed, diags)
			}
		})
	}
}

// TestCanonJSON: a JSON text stays the same JSON once normalised, even
// where a combining mark follows an escape sequence it would join.
func TestCanonJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"b"}`, `{"a":"b"}`},
		{"\"e\u0301\"", "\"\u00e9\""}, // no escape before it: normalised as any string
		{"\"\\u000c\u0301\"", `"\u000c\u0301"`},
		{"\"\\n\u0303\u0301x\u0301\"", "\"\\n\\u0303\\u0301x\u0301\""},
		{"\"\\u001e\U0001d165\"", `"\u001e\ud834\udd65"`},
		{"\"\\\\\u0301\"", `"\\\u0301"`},
		{`"\`, `"\`},
		{"\\u00\u0301", "\\u00\u0301"},           // not JSON either way
		{"\\u0\x81\u03230", "\\u0\ufffd\u03230"}, // no \uXXXX: not one escape
	} {
		got := canonJSON(tc.in)
		if got != tc.want {
			t.Errorf("canonJSON(%q)\ngot:  %q\nwant: %q", tc.in, got, tc.want)
		}
		if again := canonJSON(got); again != got {
			t.Errorf("canonJSON(canonJSON(%q))\ngot:  %q\nwant: %q (idempotent)", tc.in, again, got)
		}
		var before, after any
		if json.Unmarshal([]byte(tc.in), &before) == nil {
			if err := json.Unmarshal([]byte(got), &after); err != nil {
				t.Errorf("canonJSON(%q) = %q is no JSON: %v", tc.in, got, err)
			}
		}
	}
}

// TestRoundTripStrings checks strings that need escaping or
// normalising: what Bytes writes, Parse reads back Equal. (Entry names
// are block names, which need neither.)
func TestRoundTripStrings(t *testing.T) {
	for _, s := range []string{
		`quote " and backslash \`,
		"template ${x} and %{if x} and $${y}",
		"line\nbreak\ttab\rreturn",
		"control \x00\x01\x7f",
		"invalid utf-8 \xff\xfe",
		"combining e\u0301",
		"escapes then combining marks \x0c\u0301 \n\u0303 <\u0338 \x1e\u0301\u0301 \x0e\U0001d165",
		"emoji 🧮",
		strings.Repeat("a long description ", 5000),
	} {
		t.Run(fmt.Sprintf("%.30q", s), func(t *testing.T) {
			desc, _ := json.Marshal(s)
			def := `{"description":` + string(desc) + `}`
			f := New()
			f.Tools["t"] = &Tool{Kind: "mcp", ServerName: s, ServerVersion: s, HashedFields: []string{s},
				Served: map[string]string{s: sha(s)}, Definitions: map[string]string{s: def}}
			f.Tools["a"] = &Tool{Kind: "a2a", Card: sha(s), CardName: s, CardVersion: s}
			b := f.Bytes()
			parsed, diags := Parse(b, FileName)
			if diags.HasErrors() {
				t.Fatalf("got: %v\nwant: no errors, parsing:\n%s", diags, b)
			}
			if !parsed.Equal(f) {
				t.Errorf("got: diff %v\nwant: Equal", Diff(f, parsed))
			}
			if b2 := parsed.Bytes(); !bytes.Equal(b2, b) {
				t.Errorf("got:\n%s\nwant:\n%s", b2, b)
			}
		})
	}
}

func TestLoadAndRead(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		for _, read := range []func() (*File, error){
			func() (*File, error) { f, d := Load(dir); return f, errOf(d) },
			func() (*File, error) { f, d := Read(filepath.Join(dir, "nope.hcl")); return f, errOf(d) },
		} {
			f, err := read()
			if err != nil || f == nil || f.Tools == nil || f.Skills == nil || len(f.Tools)+len(f.Skills) != 0 {
				t.Errorf("got: %#v, %v\nwant: an empty File, no diagnostics", f, err)
			}
		}
	})
	t.Run("round trip", func(t *testing.T) {
		dir := t.TempDir()
		if err := WriteDir(dir, fullFile()); err != nil {
			t.Fatal(err)
		}
		f, diags := Load(dir)
		if len(diags) > 0 {
			t.Fatalf("got: %v\nwant: no diagnostics", diags)
		}
		if !reflect.DeepEqual(f, fullFile()) {
			t.Errorf("got: %v\nwant: fullFile()", Diff(fullFile(), f))
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		dir := t.TempDir()
		// A directory where the file should be cannot be read, even by root.
		if err := os.Mkdir(filepath.Join(dir, FileName), 0o755); err != nil {
			t.Fatal(err)
		}
		f, diags := Load(dir)
		if f == nil || len(diags) != 1 || diags[0].Summary != "Cannot read lockfile" {
			t.Fatalf("got: %v, %v\nwant: one \"Cannot read lockfile\" diagnostic", f, diags)
		}
		// About the file, not a line of it: no range, the file named,
		// and what to do.
		want := "agentform.lock.hcl is a directory, not a regular file. agentform keeps its lockfile there: move it away, and restore agentform.lock.hcl from version control or run \"agentform lock\" to write it again."
		if diags[0].Subject != nil || diags[0].Detail != want {
			t.Errorf("got: %v\n%s\nwant: no range\n%s", diags[0].Subject, diags[0].Detail, want)
		}
	})
	t.Run("names", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, FileName)
		if err := os.WriteFile(path, []byte("tool \"a\" {\n  kind = \"bash\"\n}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, diags := Load(dir); len(diags) != 1 || diags[0].Subject.Filename != FileName {
			t.Errorf("Load\ngot: %v\nwant: one diagnostic in %s", diags, FileName)
		}
		if _, diags := Read(path); len(diags) != 1 || diags[0].Subject.Filename != path {
			t.Errorf("Read\ngot: %v\nwant: one diagnostic in %s", diags, path)
		}
	})
}

func errOf(diags hcl.Diagnostics) error {
	if diags.HasErrors() {
		return fmt.Errorf("%s", diags.Error())
	}
	return nil
}
