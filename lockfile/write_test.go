package lockfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dirNames lists a directory's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	// Overwrite an existing file with other content and another mode.
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, fullFile()); err != nil {
		t.Fatalf("got: %v\nwant: no error", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := fullFile().Bytes(); !bytes.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// The file it replaced keeps its mode.
	if info.Mode().Perm() != 0o600 {
		t.Errorf("got:  mode %v\nwant: -rw------- (the old file's)", info.Mode().Perm())
	}
	if names := dirNames(t, dir); len(names) != 1 || names[0] != FileName {
		t.Errorf("got:  %v\nwant: [%s] (no temporary files left)", names, FileName)
	}
	// A new file is 0644 whatever the umask.
	fresh := filepath.Join(t.TempDir(), FileName)
	if err := Write(fresh, fullFile()); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(fresh); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("new file got:  %v, %v\nwant: -rw-r--r--", info.Mode().Perm(), err)
	}
	// A symbolic link is replaced by the file; what it led to is left.
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(t.TempDir(), FileName)
	if err := os.Symlink(target, linked); err != nil {
		t.Fatal(err)
	}
	if err := Write(linked, fullFile()); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(linked); err != nil || !info.Mode().IsRegular() {
		t.Errorf("link got: %v, %v\nwant: replaced by a regular file", info.Mode(), err)
	}
	if old, _ := os.ReadFile(target); string(old) != "old" {
		t.Errorf("the link's target got:\n%s\nwant: left as it was", old)
	}
	// WriteDir writes the same bytes to dir/FileName.
	dir2 := t.TempDir()
	if err := WriteDir(dir2, fullFile()); err != nil {
		t.Fatal(err)
	}
	got2, _ := os.ReadFile(filepath.Join(dir2, FileName))
	if !bytes.Equal(got2, got) {
		t.Errorf("WriteDir\ngot:\n%s\nwant:\n%s", got2, got)
	}
}

func TestWriteFailures(t *testing.T) {
	old := []byte(Header + "\n\nskill \"old\" {\n  source = \"" + h1("old") + "\"\n}\n")
	for _, tc := range []struct {
		name string
		// setup prepares dir (which holds the old lockfile) and returns
		// the path to write.
		setup func(t *testing.T, dir string) string
		file  *File
		want  string
	}{
		{
			name: "read-only directory",
			setup: func(t *testing.T, dir string) string {
				makeReadOnly(t, dir)
				return filepath.Join(dir, FileName)
			},
			file: fullFile(),
			want: "writing",
		},
		{
			name: "rename fails",
			setup: func(t *testing.T, dir string) string {
				// The target is a non-empty directory: the temporary file
				// is written, the rename fails, and the temporary file
				// must be cleaned up.
				target := filepath.Join(dir, "taken")
				if err := os.MkdirAll(filepath.Join(target, "x"), 0o755); err != nil {
					t.Fatal(err)
				}
				return target
			},
			file: fullFile(),
			want: "writing",
		},
		{
			name: "invalid entries",
			setup: func(t *testing.T, dir string) string {
				return filepath.Join(dir, FileName)
			},
			file: &File{Tools: map[string]*Tool{"adder": {Source: "not a hash"}}},
			want: "refusing to write",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			lock := filepath.Join(dir, FileName)
			if err := os.WriteFile(lock, old, 0o644); err != nil {
				t.Fatal(err)
			}
			path := tc.setup(t, dir)
			before := dirNames(t, dir)
			err := Write(path, tc.file)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got:  %v\nwant: an error containing %q", err, tc.want)
			}
			got, rerr := os.ReadFile(lock)
			if rerr != nil || !bytes.Equal(got, old) {
				t.Errorf("old lockfile\ngot:  %q (%v)\nwant: %q", got, rerr, old)
			}
			if after := dirNames(t, dir); strings.Join(after, ",") != strings.Join(before, ",") {
				t.Errorf("directory\ngot:  %v\nwant: %v (no temporary files left)", after, before)
			}
		})
	}
}

// TestCheckThenWrite: CheckEncoded refuses what Write refuses, naming
// the entry, writes nothing, and WriteChecked writes exactly what was
// checked; the zero Checked is refused.
func TestCheckThenWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	bad := &File{Tools: map[string]*Tool{"adder": {Kind: "javascript", Source: "not a hash"}}}
	if _, err := CheckEncoded(path, bad, bad.Bytes()); err == nil || !strings.Contains(err.Error(), `refusing to write `+path+`: the lock entries are invalid: tool "adder": the "source" value`) {
		t.Errorf("CheckEncoded of invalid entries\ngot:  %v\nwant: refused, naming the entry", err)
	}
	if err := WriteChecked(Checked{}); err == nil {
		t.Error("WriteChecked of the zero Checked\ngot:  nil\nwant: an error")
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("files after the refusals\ngot:  %v\nwant: none", names)
	}
	data := fullFile().Bytes()
	c, err := CheckEncoded(path, fullFile(), data)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteChecked(c); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("written\ngot:  %q\nwant: %q", got, data)
	}
}

// TestFingerprint: what Parse reads back from Bytes has the same
// fingerprint; a change to any attribute or entry gives another.
func TestFingerprint(t *testing.T) {
	f := New()
	f.Tools["p"] = &Tool{Kind: "a2a", Card: "sha256:" + strings.Repeat("1", 64), CardName: "Planner", CardJSON: `{"name":"Planner"}`}
	f.Tools["adder"] = &Tool{Kind: "javascript", Source: "h1:" + strings.Repeat("A", 42) + "E=", Bundler: "esbuild 0.28.2"}
	f.Skills["notes"] = &Skill{Source: "h1:" + strings.Repeat("B", 42) + "E="}
	back, diags := Parse(f.Bytes(), FileName)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if back.Fingerprint() != f.Fingerprint() {
		t.Errorf("read back: fingerprint %s\nwant: %s", back.Fingerprint(), f.Fingerprint())
	}
	seen := map[string]string{f.Fingerprint(): "original"}
	for name, edit := range map[string]func(*File){
		"card_json":   func(g *File) { g.Tools["p"].CardJSON = `{"name":"Planner 2"}` },
		"bundler":     func(g *File) { g.Tools["adder"].Bundler = "esbuild 0.28.3" },
		"skill":       func(g *File) { g.Skills["notes"].Source = "h1:" + strings.Repeat("C", 42) + "E=" },
		"entry name":  func(g *File) { g.Tools["adder2"], g.Tools["adder"] = g.Tools["adder"], nil },
		"entry gone":  func(g *File) { delete(g.Skills, "notes") },
		"skill named": func(g *File) { g.Skills["p"] = &Skill{Source: g.Skills["notes"].Source}; delete(g.Skills, "notes") },
		// NULs inside a value cannot imitate the boundary of two.
		"parts shifted": func(g *File) {
			g.Tools["p"].CardName, g.Tools["p"].Card = "", g.Tools["p"].Card+"\x00card_name\x00Planner"
		},
	} {
		g, _ := Parse(f.Bytes(), FileName)
		edit(g)
		fp := g.Fingerprint()
		if prev, dup := seen[fp]; dup {
			t.Errorf("%s: same fingerprint as %s", name, prev)
		}
		seen[fp] = name
	}
}
