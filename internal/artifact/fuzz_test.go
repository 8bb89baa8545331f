package artifact

import (
	"archive/tar"
	"bytes"
	"testing"
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
			if why := checkPath(p); why != "" {
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
