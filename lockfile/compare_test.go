package lockfile

import (
	"fmt"
	"reflect"
	"testing"
)

func TestDiff(t *testing.T) {
	edit := func(fn func(f *File)) *File {
		f := fullFile()
		fn(f)
		return f
	}
	for _, tc := range []struct {
		name     string
		old, new *File
		want     []Change
	}{
		{name: "same", old: fullFile(), new: fullFile()},
		{name: "both nil", old: nil, new: New()},
		{
			name: "empty and nil entries are absent",
			old:  fullFile(),
			new: edit(func(f *File) {
				f.Tools["nil"] = nil
				f.Tools["nothing"] = &Tool{}
				f.Skills["nothing"] = &Skill{}
				f.Tools["github"].HashedFields = []string{"outputSchema", "name", "inputSchema", "description", "annotations", "name"}
				f.Tools["github"].Served["x"] = ""
			}),
		},
		{
			name: "from nothing",
			old:  nil,
			new:  edit(func(f *File) { delete(f.Tools, "github"); delete(f.Tools, "formatter"); delete(f.Skills, "writing") }),
			want: []Change{
				{"skill.arithmetic", "add", []string{"source"}},
				{"tool.adder", "add", []string{"kind", "source", "deps", "bundle", "bundler"}},
				{"tool.planner", "add", []string{"kind", "card", "card_name", "card_version"}},
				{"tool.weather", "add", []string{"kind", "source", "uv_lock", "interpreter"}},
			},
		},
		{
			name: "add and remove",
			old:  fullFile(),
			new: edit(func(f *File) {
				delete(f.Tools, "adder")
				delete(f.Skills, "writing")
				f.Tools["zeta"] = &Tool{Kind: "a2a", Card: sha("zeta")}
				f.Skills["new"] = &Skill{Source: h1("new")}
			}),
			want: []Change{
				{"skill.new", "add", []string{"source"}},
				{"skill.writing", "remove", []string{"source"}},
				{"tool.adder", "remove", []string{"kind", "source", "deps", "bundle", "bundler"}},
				{"tool.zeta", "add", []string{"kind", "card"}},
			},
		},
		{
			name: "local sources changed",
			old:  fullFile(),
			new: edit(func(f *File) {
				f.Tools["adder"].Source = h1("adder v2")
				f.Tools["adder"].Bundle = sha("adder bundle v2")
				f.Tools["adder"].Deps = ""
				f.Tools["weather"].Interpreter = "static"
				f.Skills["arithmetic"].Source = h1("arith v2")
			}),
			want: []Change{
				{"skill.arithmetic", "update", []string{"source"}},
				{"tool.adder", "update", []string{"source", "deps", "bundle"}},
				{"tool.weather", "update", []string{"interpreter"}},
			},
		},
		{
			name: "mcp server changed",
			old:  fullFile(),
			new: edit(func(f *File) {
				g := f.Tools["github"]
				g.ServerVersion = "1.5.0"
				g.HashedFields = []string{"description", "name"}
				g.Served["create_issue"] = sha("poisoned")
				g.Definitions["create_issue"] = `{"name":"create_issue","description":"poisoned"}`
				delete(g.Served, "search.repos")
				delete(g.Definitions, "search.repos")
				g.Served["delete_repo"] = sha("delete")
			}),
			want: []Change{
				{"tool.github", "update", []string{
					"server.version", "hashed_fields",
					`tools["create_issue"]`, `tools["delete_repo"]`, `tools["search.repos"]`,
					`definitions["create_issue"]`, `definitions["search.repos"]`,
				}},
			},
		},
		{
			name: "kind changed",
			old:  fullFile(),
			new: edit(func(f *File) {
				f.Tools["planner"] = &Tool{Kind: "mcp", ServerName: "planner"}
			}),
			want: []Change{
				{"tool.planner", "update", []string{"kind", "server.name", "card", "card_name", "card_version"}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff(tc.old, tc.new)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got:  %v\nwant: %v", got, tc.want)
			}
			if eq := tc.old.Equal(tc.new); eq != (len(tc.want) == 0) {
				t.Errorf("Equal\ngot:  %v\nwant: %v", eq, len(tc.want) == 0)
			}
			// The reverse diff swaps add and remove and names the same
			// attributes.
			back := Diff(tc.new, tc.old)
			if len(back) != len(got) {
				t.Fatalf("reverse\ngot:  %v\nwant: %d changes", back, len(got))
			}
			swap := map[string]string{"add": "remove", "remove": "add", "update": "update"}
			for i := range back {
				if back[i].Address != got[i].Address || back[i].Action != swap[got[i].Action] || !reflect.DeepEqual(back[i].Attributes, got[i].Attributes) {
					t.Errorf("reverse\ngot:  %v\nwant: the opposite of %v", back[i], got[i])
				}
			}
		})
	}
}

func TestChangedAttributes(t *testing.T) {
	old := fullFile().Tools["github"]
	new := fullFile().Tools["github"]
	new.ServerVersion = "1.5.0"
	new.HashedFields = []string{"name", "description"}
	new.Served["create_issue"] = sha("poisoned")
	new.Served["new tool"] = sha("new")
	got := ChangedAttributes(old, new)
	want := []AttrChange{
		{"server.version", "1.4.0", "1.5.0"},
		{"hashed_fields", `["annotations", "description", "inputSchema", "name", "outputSchema"]`, `["description", "name"]`},
		{`tools["create_issue"]`, sha(createIssueDef), sha("poisoned")},
		{`tools["new tool"]`, "", sha("new")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got:  %q\nwant: %q", got, want)
	}
	// Keys are quoted as HCL quotes them.
	odd := &Tool{Kind: "mcp", Served: map[string]string{"a\"b${c}": sha("x")}}
	if got := ChangedAttributes(nil, odd); len(got) != 2 || got[1].Name != `tools["a\"b$${c}"]` {
		t.Errorf("got:  %q\nwant: kind and tools[\"a\\\"b$${c}\"]", got)
	}
	if got := ChangedAttributes(old, old); got != nil {
		t.Errorf("got:  %v\nwant: nil", got)
	}
	sk := ChangedSkillAttributes(&Skill{Source: h1("a")}, nil)
	if want := []AttrChange{{"source", h1("a"), ""}}; !reflect.DeepEqual(sk, want) {
		t.Errorf("got:  %v\nwant: %v", sk, want)
	}
}

func TestEqual(t *testing.T) {
	a := fullFile().Tools["github"]
	for i, tc := range []struct {
		x, y *Tool
		want bool
	}{
		{nil, nil, true},
		{nil, &Tool{}, true},
		{&Tool{Kind: "mcp"}, nil, false},
		{a, fullFile().Tools["github"], true},
		{a, &Tool{Kind: "mcp", ServerName: a.ServerName, ServerVersion: a.ServerVersion, HashedFields: a.HashedFields, Served: a.Served}, false},
		{&Tool{Kind: "mcp", Served: map[string]string{}}, &Tool{Kind: "mcp"}, true},
		{&Tool{Kind: "a2a", CardName: "e\u0301"}, &Tool{Kind: "a2a", CardName: "\u00e9"}, true},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got := tc.x.Equal(tc.y); got != tc.want {
				t.Errorf("got:  %v\nwant: %v", got, tc.want)
			}
			if got := tc.y.Equal(tc.x); got != tc.want {
				t.Errorf("reversed\ngot:  %v\nwant: %v", got, tc.want)
			}
		})
	}
	var s *Skill
	if !s.Equal(&Skill{}) || s.Equal(&Skill{Source: h1("a")}) {
		t.Error("got: wrong Skill.Equal for nil\nwant: nil equals empty, differs from a source")
	}
}
