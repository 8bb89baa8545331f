package pathfold

import "testing"

func TestKey(t *testing.T) {
	same := [][2]string{
		{"Notes.py", "notes.py"},
		{"skills/r/SKILL.md", "skills/r/skill.md"},
		{"e\u0301.txt", "\u00e9.txt"},                // decomposed and precomposed
		{"\u00c9.txt", "e\u0301.txt"},                // and in other case
		{"\u017ftrasse", "Strasse"},                  // long s folds to s
		{"\u03c3\u03c2", "\u03a3\u03a3"},             // final sigma
		{"STRASSE", "stra\u00dfe"},                   // full folding: ß is ss
		{"\u212bngstr\u00f6m", "\u00e5ngstr\u00f6m"}, // the Ångström sign is Å
	}
	for _, s := range same {
		if Key(s[0]) != Key(s[1]) {
			t.Errorf("Key(%+q) = %+q, Key(%+q) = %+q: want them equal", s[0], Key(s[0]), s[1], Key(s[1]))
		}
	}
	differ := [][2]string{
		{"a.txt", "b.txt"},
		{"a/b", "a-b"},
		{"a/./b", "a/b"}, // Key does not clean
	}
	for _, s := range differ {
		if Key(s[0]) == Key(s[1]) {
			t.Errorf("Key(%+q) = Key(%+q) = %+q: want them different", s[0], s[1], Key(s[0]))
		}
	}
}

func TestTwins(t *testing.T) {
	tests := []struct {
		paths         []string
		first, second string
	}{
		{nil, "", ""},
		{[]string{"a", "b", "c"}, "", ""},
		{[]string{"a", "a"}, "", ""},
		{[]string{"A.txt", "B.txt", "a.txt", "b.txt"}, "A.txt", "a.txt"},
		{[]string{"x/\u00e9", "x/e\u0301"}, "x/\u00e9", "x/e\u0301"},
		{[]string{"Docs/a", "docs/b"}, "", ""},
		// A file and another file's directory.
		{[]string{"Notes", "notes/todo.txt"}, "Notes", "notes"},
		{[]string{"a/notes/x", "b", "a/Notes"}, "a/notes", "a/Notes"},
		{[]string{"x/\u00e9/y", "x/e\u0301"}, "x/\u00e9", "x/e\u0301"},
		// The same spelling is no twin (a file that is also a directory
		// is another error, found by its callers).
		{[]string{"a", "a/b"}, "", ""},
		{[]string{"a/b", "a/c", "A/d"}, "", ""},
		{[]string{"a/b", "A/b"}, "a/b", "A/b"},
	}
	for _, tt := range tests {
		if first, second := Twins(tt.paths); first != tt.first || second != tt.second {
			t.Errorf("Twins(%+q):\ngot:  %+q, %+q\nwant: %+q, %+q", tt.paths, first, second, tt.first, tt.second)
		}
	}
}
