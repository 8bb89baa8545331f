package lockfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/agentform/agentform/internal/manifest"
)

// FuzzParse feeds arbitrary bytes to Parse. It must never panic, every
// diagnostic must be located in the file, and whatever parses without
// errors must encode to bytes that parse back to an Equal File, with
// encoding idempotent.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile(goldenPath); err == nil {
		f.Add(b)
	}
	f.Add([]byte(goodJS))
	f.Add([]byte("tool \"gh\" {\n  kind = \"mcp\"\n  server = { name = \"x\", version = \"1\" }\n  tools = { a = \"" + sha("a") + "\" }\n  definitions = { \"a\" = \"{}\" }\n  hashed_fields = [\"b\", \"a\"]\n}\n"))
	f.Add([]byte("skill \"s\" { source = \"" + h1("s") + "\" }\ntool \"p\" {\n  kind = \"a2a\"\n  card_name = \"${\"x\"}\"\n}\n"))
	f.Add([]byte("tool \"p\" {\n  kind = \"a2a\"\n  card_name = \"" + strings.Repeat("${\"", 10) + "\n}\n"))
	f.Add([]byte("tool \"w\" {\n  kind = \"python\"\n  interpreter = true ? \"static\" : \"embedded\"\n}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		const name = "fuzz.lock.hcl"
		lf, diags := Parse(src, name)
		if lf == nil || lf.Tools == nil || lf.Skills == nil {
			t.Fatal("got: a nil File or map\nwant: non-nil")
		}
		for _, d := range diags {
			if d.Subject == nil || d.Subject.Filename != name {
				t.Fatalf("got: diagnostic %q without a range in %s\nwant: every diagnostic located", d.Summary, name)
			}
		}
		if diags.HasErrors() {
			return
		}
		b := lf.Bytes()
		again, diags := Parse(b, name)
		if diags.HasErrors() {
			t.Fatalf("the encoding of a valid file does not parse: %v\n%s", diags, b)
		}
		if !again.Equal(lf) {
			t.Fatalf("round trip changed the file: %v", Diff(lf, again))
		}
		if b2 := again.Bytes(); !bytes.Equal(b, b2) {
			t.Fatalf("encoding not idempotent\ngot:\n%s\nwant:\n%s", b2, b)
		}
	})
}

// FuzzBytes puts arbitrary strings in every free-form field and map key
// (and in entry names, when they make a valid one):
// Bytes must always write a file that parses back Equal.
func FuzzBytes(f *testing.F) {
	f.Add("github", "github-mcp", "1.4.0", "create_issue", "description", "Planner", "esbuild 0.28.2")
	f.Add("a\"b", "${x}", "%{y}", "\n", "\xff", "e\u0301", "\x00")
	f.Fuzz(func(t *testing.T, block, server, version, served, field, card, bundler string) {
		def, _ := json.Marshal(map[string]string{"name": served, "description": card})
		lf := New()
		// Entry names are block names (Parse refuses any other): the
		// fuzzed string names the entries only when it makes one.
		source := block
		if !manifest.IsName("m" + block) {
			block = ""
		}
		lf.Tools["m"+block] = &Tool{Kind: "mcp", ServerName: server, ServerVersion: version, HashedFields: []string{field, "name"},
			Served: map[string]string{"x" + served: sha(served)}, Definitions: map[string]string{"x" + served: string(def)}}
		lf.Tools["a"+block] = &Tool{Kind: "a2a", Card: sha(card), CardName: card, CardVersion: version}
		lf.Tools["j"+block] = &Tool{Kind: "javascript", Source: h1(source), Bundle: sha(bundler), Bundler: bundler}
		lf.Skills["s"+block] = &Skill{Source: h1(source)}
		b := lf.Bytes()
		parsed, diags := Parse(b, FileName)
		if diags.HasErrors() {
			t.Fatalf("got: %v\nwant: no errors, parsing:\n%s", diags, b)
		}
		if !parsed.Equal(lf) {
			t.Fatalf("got: %v\nwant: no differences, parsing:\n%s", Diff(lf, parsed), b)
		}
		if b2 := parsed.Bytes(); !bytes.Equal(b, b2) {
			t.Fatalf("got:\n%s\nwant:\n%s", b2, b)
		}
		if whole := wholeFileBytes(lf); !bytes.Equal(b, whole) {
			t.Fatalf("blocks formatted one by one\ngot:\n%s\nwant (formatted as one file):\n%s", b, whole)
		}
	})
}

// wholeFileBytes is Bytes formatting every block in one hclwrite file, as
// it did before it formatted blocks one by one (and in parallel): the
// reference the blocks must match byte for byte.
func wholeFileBytes(f *File) []byte {
	hf := hclwrite.NewEmptyFile()
	body := hf.Body()
	skills := entries(f.Skills, func(s *Skill) bool { return s.empty() })
	tools := entries(f.Tools, func(t *Tool) bool { return t.empty() })
	first := true
	newBlock := func(typ, name string) *hclwrite.Body {
		if !first {
			body.AppendNewline()
		}
		first = false
		return body.AppendNewBlock(typ, []string{name}).Body()
	}
	for _, e := range skills {
		setString(newBlock("skill", e.name), "source", e.value.Source)
	}
	for _, e := range tools {
		writeTool(newBlock("tool", e.name), e.value)
	}
	var buf bytes.Buffer
	buf.WriteString(Header + "\n")
	if len(skills)+len(tools) > 0 {
		buf.WriteString("\n")
		buf.Write(hf.Bytes())
	}
	return buf.Bytes()
}

// TestBytesBlockByBlock: formatting blocks one by one, in parallel for a
// large file, gives the bytes of formatting them as one file.
func TestBytesBlockByBlock(t *testing.T) {
	big := bigFile()
	for i := range 80 {
		big.Skills[fmt.Sprintf("skill%02d", i)] = &Skill{Source: h1(fmt.Sprint(i))}
	}
	if n := len(big.Tools) + len(big.Skills); n < parallelBlocks {
		t.Fatalf("the big file has %d blocks, fewer than the %d that are formatted in parallel", n, parallelBlocks)
	}
	for name, f := range map[string]*File{"empty": New(), "full": fullFile(), "big": big} {
		if got, want := f.Bytes(), wholeFileBytes(f); !bytes.Equal(got, want) {
			t.Errorf("%s\ngot:\n%s\nwant:\n%s", name, got, want)
		}
	}
}

// bigFile is a lockfile of a large workspace: 100 javascript tools and
// 20 MCP servers with 50 tools each.
func bigFile() *File {
	f := New()
	for i := 0; i < 100; i++ {
		f.Tools[fmt.Sprintf("js%03d", i)] = &Tool{Kind: "javascript", Source: h1(fmt.Sprint(i)), Deps: sha(fmt.Sprint(i)), Bundle: sha(fmt.Sprint(i)), Bundler: "esbuild 0.28.2"}
	}
	for i := 0; i < 20; i++ {
		m := &Tool{Kind: "mcp", ServerName: "server", ServerVersion: "1.0.0", HashedFields: []string{"description", "inputSchema", "name"},
			Served: map[string]string{}, Definitions: map[string]string{}}
		for j := 0; j < 50; j++ {
			name := fmt.Sprintf("tool_%02d", j)
			def := `{"description":"` + strings.Repeat("Does a thing. ", 20) + `","inputSchema":{"type":"object"},"name":"` + name + `"}`
			m.Served[name] = sha(def)
			m.Definitions[name] = def
		}
		f.Tools[fmt.Sprintf("mcp%02d", i)] = m
	}
	return f
}

func BenchmarkBytes(b *testing.B) {
	f := bigFile()
	b.ReportAllocs()
	for b.Loop() {
		f.Bytes()
	}
}

// BenchmarkBytesJavaScript is the lockfile of 200 javascript tools, whose
// blocks are all plain (plainBlock).
func BenchmarkBytesJavaScript(b *testing.B) {
	f := New()
	for i := range 200 {
		f.Tools[fmt.Sprintf("js%d", i)] = &Tool{Kind: "javascript", Source: h1(fmt.Sprint(i)), Bundle: sha(fmt.Sprint(i)), Bundler: "esbuild 0.28.2"}
	}
	b.ReportAllocs()
	for b.Loop() {
		f.Bytes()
	}
}

func BenchmarkParse(b *testing.B) {
	src := bigFile().Bytes()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, diags := Parse(src, FileName); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}

func BenchmarkDiff(b *testing.B) {
	old, new := bigFile(), bigFile()
	new.Tools["mcp07"].Served["tool_07"] = sha("changed")
	b.ReportAllocs()
	for b.Loop() {
		Diff(old, new)
	}
}
