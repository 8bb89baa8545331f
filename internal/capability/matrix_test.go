package capability

import (
	"reflect"
	"testing"
)

// fixture returns agents and tools in deliberately unsorted order with
// duplicate tags.
func fixture() ([]Agent, []Tool) {
	agents := []Agent{
		{Name: "zed", Policy: Locked, Holds: []string{"math", "net::http", "math::add", "math"}},
		{Name: "alpha", Policy: Extensible, Holds: []string{"fs::read"}},
		{Name: "mid", Holds: nil},
	}
	tools := []Tool{
		{Name: "untagged"},
		{Name: "calc", Requires: []string{"math::add::fast", "math::add", "math::add"}},
		{Name: "fetch", Requires: []string{"net::http::get", "fs::read"}},
		{Name: "stats", Requires: []string{"mathematics"}},
		{Name: "read", Requires: []string{"fs::read"}},
		{Name: "http", Requires: []string{"net::http"}},
	}
	return agents, tools
}

func TestComputeOrderAndNormalization(t *testing.T) {
	agents, tools := fixture()
	m := Compute(agents, tools)

	wantAgents := []Agent{
		{Name: "alpha", Policy: Extensible, Holds: []string{"fs::read"}},
		{Name: "mid", Policy: Locked, Holds: []string{}},
		{Name: "zed", Policy: Locked, Holds: []string{"math", "math::add", "net::http"}},
	}
	if got := m.Agents(); !reflect.DeepEqual(got, wantAgents) {
		t.Errorf("Agents()\ngot:  %#v\nwant: %#v", got, wantAgents)
	}
	wantTools := []Tool{
		{Name: "calc", Requires: []string{"math::add", "math::add::fast"}},
		{Name: "fetch", Requires: []string{"fs::read", "net::http::get"}},
		{Name: "http", Requires: []string{"net::http"}},
		{Name: "read", Requires: []string{"fs::read"}},
		{Name: "stats", Requires: []string{"mathematics"}},
		{Name: "untagged", Requires: []string{}},
	}
	if got := m.Tools(); !reflect.DeepEqual(got, wantTools) {
		t.Errorf("Tools()\ngot:  %#v\nwant: %#v", got, wantTools)
	}

	// The inputs are untouched.
	a0, t0 := fixture()
	if !reflect.DeepEqual(agents, a0) {
		t.Errorf("Compute modified agents\ngot:  %#v\nwant: %#v", agents, a0)
	}
	if !reflect.DeepEqual(tools, t0) {
		t.Errorf("Compute modified tools\ngot:  %#v\nwant: %#v", tools, t0)
	}

	// Returned copies do not alias the matrix.
	got := m.Tools()
	got[0].Requires[0] = "changed"
	got[0].Requires = append(got[0].Requires, "more")
	if again := m.Tools(); !reflect.DeepEqual(again, wantTools) {
		t.Errorf("Tools() after modifying an earlier result\ngot:  %#v\nwant: %#v", again, wantTools)
	}
	ga := m.Agents()
	ga[2].Holds[0] = "changed"
	if again := m.Agents(); !reflect.DeepEqual(again, wantAgents) {
		t.Errorf("Agents() after modifying an earlier result\ngot:  %#v\nwant: %#v", again, wantAgents)
	}
}

func TestComputeStableOrderForDuplicateNames(t *testing.T) {
	tools := []Tool{
		{Name: "b", Requires: []string{"x"}},
		{Name: "a", Requires: []string{"first"}},
		{Name: "a", Requires: []string{"second"}},
	}
	m := Compute([]Agent{{Name: "ag", Holds: []string{"second"}}}, tools)
	want := []Tool{
		{Name: "a", Requires: []string{"first"}},
		{Name: "a", Requires: []string{"second"}},
		{Name: "b", Requires: []string{"x"}},
	}
	if got := m.Tools(); !reflect.DeepEqual(got, want) {
		t.Errorf("Tools()\ngot:  %#v\nwant: %#v", got, want)
	}
	if got, ok := m.ToolIndex("a"); got != 0 || !ok {
		t.Errorf("ToolIndex(%q)\ngot:  %d, %v\nwant: 0, true", "a", got, ok)
	}
	if got, want := m.Reachable(0), []string{"a"}; !equalStrings(got, want) {
		t.Errorf("Reachable(0)\ngot:  %q\nwant: %q", got, want)
	}
}

func TestComputeEmpty(t *testing.T) {
	agents, tools := fixture()
	tests := []struct {
		name       string
		agents     []Agent
		tools      []Tool
		wantAgents int
		wantTools  int
	}{
		{"nil both", nil, nil, 0, 0},
		{"no tools", agents, nil, 3, 0},
		{"no agents", nil, tools, 0, 6},
		{"empty slices", []Agent{}, []Tool{}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Compute(tt.agents, tt.tools)
			if got := len(m.Agents()); got != tt.wantAgents {
				t.Errorf("len(Agents())\ngot:  %d\nwant: %d", got, tt.wantAgents)
			}
			if got := len(m.Tools()); got != tt.wantTools {
				t.Errorf("len(Tools())\ngot:  %d\nwant: %d", got, tt.wantTools)
			}
			if m.Agents() == nil || m.Tools() == nil {
				t.Errorf("Agents() or Tools() is nil\ngot:  %v, %v\nwant: non-nil", m.Agents() == nil, m.Tools() == nil)
			}
			for a := range tt.wantAgents {
				if got := m.AllowedCount(a); got != 0 {
					t.Errorf("AllowedCount(%d)\ngot:  %d\nwant: 0", a, got)
				}
				if got := m.Reachable(a); got == nil || len(got) != 0 {
					t.Errorf("Reachable(%d)\ngot:  %#v\nwant: []string{}", a, got)
				}
				if got := m.Denied(a); got == nil || len(got) != 0 {
					t.Errorf("Denied(%d)\ngot:  %#v\nwant: []int{}", a, got)
				}
			}
			if _, ok := m.AgentIndex("zed"); ok != (tt.wantAgents > 0) {
				t.Errorf("AgentIndex(%q) found\ngot:  %v\nwant: %v", "zed", ok, tt.wantAgents > 0)
			}
		})
	}
}

func TestCell(t *testing.T) {
	m := Compute(fixture())
	empty := map[string]string{}
	tests := []struct {
		agent, tool string
		want        Cell
	}{
		{"zed", "calc", Cell{
			Agent: "zed", Tool: "calc", Allowed: true, Reason: ReasonGranted,
			Requires: []string{"math::add", "math::add::fast"},
			Missing:  []string{},
			// "math" also satisfies both, but "math::add" is more specific.
			Matched: map[string]string{"math::add": "math::add", "math::add::fast": "math::add"},
		}},
		{"zed", "http", Cell{
			Agent: "zed", Tool: "http", Allowed: true, Reason: ReasonGranted,
			Requires: []string{"net::http"}, Missing: []string{},
			Matched: map[string]string{"net::http": "net::http"},
		}},
		{"zed", "fetch", Cell{
			Agent: "zed", Tool: "fetch", Allowed: false, Reason: ReasonMissing,
			Requires: []string{"fs::read", "net::http::get"},
			Missing:  []string{"fs::read"}, Matched: empty,
		}},
		{"zed", "stats", Cell{
			Agent: "zed", Tool: "stats", Allowed: false, Reason: ReasonMissing,
			Requires: []string{"mathematics"}, Missing: []string{"mathematics"}, Matched: empty,
		}},
		{"zed", "untagged", Cell{
			Agent: "zed", Tool: "untagged", Allowed: true, Reason: ReasonUntagged,
			Requires: []string{}, Missing: []string{}, Matched: empty,
		}},
		{"alpha", "calc", Cell{
			Agent: "alpha", Tool: "calc", Allowed: false, Reason: ReasonMissing,
			Requires: []string{"math::add", "math::add::fast"},
			Missing:  []string{"math::add", "math::add::fast"}, Matched: empty,
			OverrideReachable: true,
		}},
		{"alpha", "fetch", Cell{
			Agent: "alpha", Tool: "fetch", Allowed: false, Reason: ReasonMissing,
			Requires: []string{"fs::read", "net::http::get"},
			Missing:  []string{"net::http::get"}, Matched: empty,
			OverrideReachable: true,
		}},
		{"alpha", "read", Cell{
			Agent: "alpha", Tool: "read", Allowed: true, Reason: ReasonGranted,
			Requires: []string{"fs::read"}, Missing: []string{},
			Matched: map[string]string{"fs::read": "fs::read"},
		}},
		{"alpha", "untagged", Cell{
			Agent: "alpha", Tool: "untagged", Allowed: true, Reason: ReasonUntagged,
			Requires: []string{}, Missing: []string{}, Matched: empty,
		}},
		{"mid", "read", Cell{
			Agent: "mid", Tool: "read", Allowed: false, Reason: ReasonMissing,
			Requires: []string{"fs::read"}, Missing: []string{"fs::read"}, Matched: empty,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.agent+"/"+tt.tool, func(t *testing.T) {
			a, ok := m.AgentIndex(tt.agent)
			if !ok {
				t.Fatalf("AgentIndex(%q)\ngot:  not found\nwant: found", tt.agent)
			}
			ti, ok := m.ToolIndex(tt.tool)
			if !ok {
				t.Fatalf("ToolIndex(%q)\ngot:  not found\nwant: found", tt.tool)
			}
			got := m.Cell(a, ti)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Cell(%q, %q)\ngot:  %#v\nwant: %#v", tt.agent, tt.tool, got, tt.want)
			}
			if got := m.Allowed(a, ti); got != tt.want.Allowed {
				t.Errorf("Allowed(%q, %q)\ngot:  %v\nwant: %v", tt.agent, tt.tool, got, tt.want.Allowed)
			}
		})
	}
}

func TestCellMatchedPicksMostSpecific(t *testing.T) {
	tests := []struct {
		name     string
		holds    []string
		required string
		want     string
	}{
		{"root only", []string{"math"}, "math::add::fast", "math"},
		{"longest of a chain", []string{"math", "math::add", "math::add::fast"}, "math::add::fast", "math::add::fast"},
		{"middle of a chain", []string{"math::add", "math"}, "math::add::fast", "math::add"},
		{"string prefixes ignored", []string{"mathematics", "math", "math::addition"}, "math::add", "math"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Compute([]Agent{{Name: "a", Holds: tt.holds}}, []Tool{{Name: "t", Requires: []string{tt.required}}})
			got := m.Cell(0, 0).Matched[tt.required]
			if got != tt.want {
				t.Errorf("Matched[%q] with holds %q\ngot:  %q\nwant: %q", tt.required, tt.holds, got, tt.want)
			}
		})
	}
}

func TestMostSpecificTieBreak(t *testing.T) {
	// Distinct held tags that satisfy the same required tag always differ in
	// length, so the tie-break is only reachable through duplicates; check
	// the helper directly so the rule stays deterministic.
	got, ok := mostSpecific([]string{"b", "a", "a"}, "a")
	if got != "a" || !ok {
		t.Errorf("mostSpecific\ngot:  %q, %v\nwant: %q, true", got, ok, "a")
	}
	got, ok = mostSpecific([]string{"x"}, "y")
	if got != "" || ok {
		t.Errorf("mostSpecific\ngot:  %q, %v\nwant: %q, false", got, ok, "")
	}
}

func TestMatrixQueries(t *testing.T) {
	m := Compute(fixture())
	// Tool indexes: calc 0, fetch 1, http 2, read 3, stats 4, untagged 5.
	tests := []struct {
		agent         string
		wantCount     int
		wantDenied    []int
		wantReachable []string
	}{
		{"alpha", 2, []int{0, 1, 2, 4}, []string{"read", "untagged"}},
		{"mid", 1, []int{0, 1, 2, 3, 4}, []string{"untagged"}},
		{"zed", 3, []int{1, 3, 4}, []string{"calc", "http", "untagged"}},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			a, ok := m.AgentIndex(tt.agent)
			if !ok {
				t.Fatalf("AgentIndex(%q)\ngot:  not found\nwant: found", tt.agent)
			}
			if got := m.AllowedCount(a); got != tt.wantCount {
				t.Errorf("AllowedCount\ngot:  %d\nwant: %d", got, tt.wantCount)
			}
			if got := m.Denied(a); !reflect.DeepEqual(got, tt.wantDenied) {
				t.Errorf("Denied\ngot:  %v\nwant: %v", got, tt.wantDenied)
			}
			if got := m.Reachable(a); !reflect.DeepEqual(got, tt.wantReachable) {
				t.Errorf("Reachable\ngot:  %q\nwant: %q", got, tt.wantReachable)
			}
		})
	}
}

func TestMatrixIndex(t *testing.T) {
	m := Compute(fixture())
	tests := []struct {
		name   string
		lookup func(string) (int, bool)
		key    string
		want   int
		wantOK bool
	}{
		{"agent first", m.AgentIndex, "alpha", 0, true},
		{"agent last", m.AgentIndex, "zed", 2, true},
		{"agent missing", m.AgentIndex, "beta", 0, false},
		{"agent after all", m.AgentIndex, "zzz", 0, false},
		{"tool first", m.ToolIndex, "calc", 0, true},
		{"tool last", m.ToolIndex, "untagged", 5, true},
		{"tool missing", m.ToolIndex, "nope", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.lookup(tt.key)
			if ok != tt.wantOK || (ok && got != tt.want) {
				t.Errorf("index of %q\ngot:  %d, %v\nwant: %d, %v", tt.key, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestMatrixHolds(t *testing.T) {
	m := Compute(fixture())
	zed, _ := m.AgentIndex("zed")
	mid, _ := m.AgentIndex("mid")
	tests := []struct {
		name  string
		agent int
		tag   string
		want  bool
	}{
		{"exact root", zed, "math", true},
		{"child of held root", zed, "math::sub", true},
		{"grandchild of held child", zed, "net::http::get", true},
		{"held exactly", zed, "net::http", true},
		{"parent of held child", zed, "net", false},
		{"string prefix only", zed, "mathematics", false},
		{"unrelated", zed, "fs::read", false},
		{"agent holding nothing", mid, "math", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.Holds(tt.agent, tt.tag); got != tt.want {
				t.Errorf("Holds(%d, %q)\ngot:  %v\nwant: %v", tt.agent, tt.tag, got, tt.want)
			}
		})
	}
}

func TestMatrixIndexOutOfRangePanics(t *testing.T) {
	m := Compute(fixture()) // 3 agents, 6 tools: one 64-bit word per row
	tests := []struct {
		name string
		call func()
	}{
		{"Allowed tool past end within word", func() { m.Allowed(0, 6) }},
		{"Allowed negative tool", func() { m.Allowed(0, -1) }},
		{"Allowed agent past end", func() { m.Allowed(3, 0) }},
		{"Cell agent past end", func() { m.Cell(3, 0) }},
		{"AllowedCount agent past end", func() { m.AllowedCount(3) }},
		{"Denied negative agent", func() { m.Denied(-1) }},
		{"Holds agent past end", func() { m.Holds(3, "math") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("panic\ngot:  none\nwant: index out of range")
				}
			}()
			tt.call()
		})
	}
}
