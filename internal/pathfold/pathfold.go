// Package pathfold says when two paths name one file on a file system that
// ignores letter case and Unicode normalisation form, as those of macOS
// (APFS, HFS+) and Windows (NTFS) do by default: "Notes.py" and "notes.py",
// or "é" written precomposed and decomposed, are one file there, and
// whichever unpacks second replaces the other. The artifact builder and
// reader refuse such paths, and the manifest and resolution report them
// where they come from, all by this one rule. CheckPath is the other rule
// all four share: which paths an artifact can hold at all.
package pathfold

import (
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Key returns the name under which such a file system knows the path p:
// p in Unicode normalisation form C, case-folded with full folding ("ſ"
// is "s", "ς" is "σ"), then in form C again. Two paths with the same key
// name one file there. p is taken as written: clean it first when other
// spellings of it ("a/./b") must count as the same file.
func Key(p string) string {
	return norm.NFC.String(cases.Fold().String(norm.NFC.String(p)))
}

// Twins returns the first two of paths, in their order, that differ but
// share a Key (the earlier one first), or "", "" when no two do. Paths
// given more than once as written are not twins. A path's directories
// count too, against the other paths: "Notes" and "notes/todo.txt" are
// twins, returned as "Notes" and "notes" (whichever comes first first),
// since the file and the directory would be one name there. Two
// directories are not ("Docs/a" beside "docs/b"): their files unpack
// into one directory, and none over another.
func Twins(paths []string) (first, second string) {
	files := make(map[string]string, len(paths))
	dirs := make(map[string]string)
	spelled := make(map[string]bool) // directories already seen as written
	for _, p := range paths {
		for i := 0; i < len(p); i++ {
			if p[i] != '/' || spelled[p[:i]] {
				continue
			}
			d := p[:i]
			spelled[d] = true
			k := Key(d)
			if q, ok := files[k]; ok && q != d {
				return q, d
			}
			if _, ok := dirs[k]; !ok {
				dirs[k] = d
			}
		}
		k := Key(p)
		if q, ok := files[k]; ok && q != p {
			return q, p
		}
		if q, ok := dirs[k]; ok && q != p {
			return q, p
		}
		files[k] = p
	}
	return "", ""
}
