package artifact

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/agentform/agentform/internal/pathfold"
)

// FuzzRead checks that Read never panics, that whatever it accepts has
// only safe paths, that Verify never panics on it, and that rebuilding
// what it accepts reads back the same.
func FuzzRead(f *testing.F) {
	f.Add(newSample(f).build(f))
	f.Add(mustBuild(f, []File{{Path: "a", Data: []byte("a"), Executable: true}}))
	f.Add(craft(f, reg("../x", "x")))
	f.Add(craft(f, special(tar.TypeSymlink, "l", "/etc/passwd")))
	f.Add(craft(f, reg("a", "1"), reg("a", "2")))
	f.Add(craft(f, reg(AgentName, `{"format_version":"1","tools":[{"name":"t","block":"tool.t","kind":"python","file":"tools/t/src/"}],"blocks":[{"name":"t","kind":"python","lock":{"kind":"python","source":"h1:x"}}]}`)))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := read(bytes.NewReader(data), 1000, 1<<20)
		if err != nil {
			if a != nil {
				t.Fatalf("read returned an archive and an error: %v", err)
			}
			return
		}
		var files []File
		for _, p := range a.Paths() {
			if why := pathfold.CheckPath(p); why != "" {
				t.Fatalf("read accepted %q: %s", p, why)
			}
			if p != SumsName {
				files = append(files, File{Path: p, Data: a.Files[p], Executable: a.Executable[p]})
			}
		}
		Verify(a, nil)
		Verify(a, newSample(t).lock)
		built, err := Build(files)
		if err != nil {
			t.Fatalf("Build of what read accepted: %v", err)
		}
		b, err := Read(bytes.NewReader(built))
		if err != nil {
			t.Fatalf("Read of what Build wrote: %v", err)
		}
		for _, f := range files {
			if !bytes.Equal(b.Files[f.Path], f.Data) || b.Executable[f.Path] != f.Executable {
				t.Fatalf("%s changed in a rebuild", f.Path)
			}
		}
		if problems := Verify(b, nil); len(problems) > 0 && hasSumsProblem(problems) {
			t.Fatalf("a rebuilt archive fails its own SHA256SUMS: %v", problems)
		}
	})
}

func hasSumsProblem(ps []Problem) bool {
	for _, p := range ps {
		if p.Path == SumsName {
			return true
		}
	}
	return false
}

// FuzzParseAgent checks that ParseAgent never panics, and that what it
// accepts and MarshalAgent can write reads back to the same bytes.
func FuzzParseAgent(f *testing.F) {
	golden, err := MarshalAgent(newSample(f).agent)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add([]byte(`{"format_version":"1","prompt":[{"role":"user","content":"hi"}],"capabilities":{"env":"CAPS"}}`))
	f.Add([]byte(`{"format_version":"1","prompt":{"source":"langfuse","prompt_name":{"env":"P","secret":true,"default":"x"}}}`))
	f.Add([]byte(`{"format_version":"1","tools":[{"parameters":{"b":1e400,"a":"\u003c"},"enabled":{"env":"E"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseAgent(data)
		if err != nil {
			return
		}
		out, err := MarshalAgent(a)
		if err != nil {
			return
		}
		if whole, err := marshalAgentWhole(a); err != nil || !bytes.Equal(out, whole) {
			t.Fatalf("tools and blocks spliced in\ngot:\n%s\nwant (the document encoded whole, %v):\n%s", out, err, whole)
		}
		b, err := ParseAgent(out)
		if err != nil {
			t.Fatalf("ParseAgent of MarshalAgent's output: %v\n%s", err, out)
		}
		again, err := MarshalAgent(b)
		if err != nil {
			t.Fatalf("MarshalAgent again: %v", err)
		}
		if !bytes.Equal(again, out) {
			t.Fatalf("not stable\nfirst:\n%s\nsecond:\n%s", out, again)
		}
	})
}

// marshalAgentWhole is MarshalAgent encoding the whole document at once,
// as it did before it spliced in tools and blocks indented one by one:
// the reference MarshalAgent must match byte for byte.
func marshalAgentWhole(a *Agent) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(canonicalAgent(a)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// TestMarshalAgentSplice: documents with no tools or blocks, one, many
// (the same entries in several documents, as an apply writes them), and
// entries with HTML, Unicode and nested values encode as the whole
// document would.
func TestMarshalAgentSplice(t *testing.T) {
	sample := newSample(t).agent
	empty := *sample
	empty.Tools, empty.Blocks = nil, nil
	one := *sample
	one.Tools, one.Blocks = sample.Tools[:1], sample.Blocks[:1]
	many := *sample
	many.Tools, many.Blocks = nil, nil
	for i := range 50 {
		for _, tool := range sample.Tools {
			tool.Name = fmt.Sprintf("%s_%02d", tool.Name, i)
			tool.Description = fmt.Sprintf("<b>%d</b> & \u2028 é \x7f", i)
			many.Tools = append(many.Tools, tool)
		}
		for _, block := range sample.Blocks {
			block.Name = fmt.Sprintf("%s_%02d", block.Name, i)
			many.Blocks = append(many.Blocks, block)
		}
	}
	for name, a := range map[string]*Agent{"sample": sample, "empty": &empty, "one": &one, "many": &many} {
		for range 2 { // the second time from the memo
			got, err := MarshalAgent(a)
			if err != nil {
				t.Fatal(err)
			}
			want, err := marshalAgentWhole(a)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s\ngot:\n%s\nwant:\n%s", name, got, want)
			}
		}
		// Encoded once, in reverse order, as apply shares them.
		var tools, blocks []Encoded
		for _, tool := range slices.Backward(a.Tools) {
			e, err := EncodeTool(tool)
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, e)
		}
		for _, block := range slices.Backward(a.Blocks) {
			e, err := EncodeBlock(block)
			if err != nil {
				t.Fatal(err)
			}
			blocks = append(blocks, e)
		}
		rest := *a
		rest.Tools, rest.Blocks = nil, nil
		got, err := MarshalAgentEncoded(&rest, tools, blocks)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := marshalAgentWhole(a); !bytes.Equal(got, want) {
			t.Fatalf("%s, encoded entries\ngot:\n%s\nwant:\n%s", name, got, want)
		}
	}
	if _, err := MarshalAgentEncoded(sample, []Encoded{{}}, nil); err == nil {
		t.Error("MarshalAgentEncoded accepted an entry that was not encoded")
	}
}
