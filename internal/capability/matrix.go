package capability

import (
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Reasons reported in Cell.Reason.
const (
	// ReasonUntagged means the tool requires no tag, so every agent may call it.
	ReasonUntagged = "untagged"
	// ReasonGranted means every required tag is satisfied by a held tag.
	ReasonGranted = "granted"
	// ReasonMissing means at least one required tag is not satisfied.
	ReasonMissing = "missing"
)

// Agent is an agent and the capability tags it holds. Holds should already be
// the effective set (see Effective).
type Agent struct {
	// Name identifies the agent.
	Name string
	// Policy is the agent's override policy; the zero value means Locked.
	Policy Policy
	// Holds lists the tags the agent holds.
	Holds []string
}

// Tool is a tool and the capability tags an agent needs to call it.
type Tool struct {
	// Name identifies the tool.
	Name string
	// Requires lists the tags a caller must satisfy; empty means untagged.
	Requires []string
}

// Cell explains whether one agent may call one tool.
type Cell struct {
	// Agent is the agent's name.
	Agent string
	// Tool is the tool's name.
	Tool string
	// Allowed reports whether the agent may call the tool.
	Allowed bool
	// Reason is ReasonUntagged, ReasonGranted or ReasonMissing.
	Reason string
	// Requires lists the tool's required tags, sorted; never nil.
	Requires []string
	// Missing lists the required tags no held tag satisfies, sorted; empty
	// (non-nil) when Allowed.
	Missing []string
	// Matched maps each required tag to the most specific held tag that
	// satisfies it (the longest, ties broken lexicographically); empty
	// (non-nil) when not Allowed.
	Matched map[string]string
	// OverrideReachable is true for a denied cell whose agent has the
	// Extensible policy, so a session override could grant the call.
	OverrideReachable bool
}

// Matrix records which agents may call which tools. Agents and tools are
// indexed in name order, as returned by Agents and Tools. Methods that take
// an index panic if it is out of range. A Matrix is immutable and safe for
// concurrent use.
type Matrix struct {
	agents []Agent
	tools  []Tool
	words  int      // uint64 words per agent row
	bits   []uint64 // len(agents)*words; bit t of row a is set iff a may call t
}

// Compute builds the permission matrix for agents and tools.
//
// Agents and tools are sorted by name (stably, so entries with equal names
// keep their input order) and every tag list is sorted and deduplicated; the
// inputs are not modified. An agent Policy of "" is recorded as Locked. Tags
// are not validated, but satisfaction follows Satisfies exactly for any
// strings.
//
// Compute stores one bit per cell and never compares every held tag with
// every required tag: required tags are interned, every "::"-prefix of every
// required tag is indexed, and an agent's row costs time proportional to the
// (tool, required tag) pairs it satisfies. Rows are computed in parallel on
// runtime.GOMAXPROCS(0) goroutines.
func Compute(agents []Agent, tools []Tool) *Matrix {
	m := &Matrix{
		agents: cloneAgents(agents, true),
		tools:  cloneTools(tools, true),
	}
	m.words = (len(m.tools) + 63) / 64
	m.bits = make([]uint64, len(m.agents)*m.words)
	if len(m.agents) == 0 || len(m.tools) == 0 {
		return m
	}

	rc := newRowComputer(m)
	const chunk = 16 // agents claimed at a time
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(m.agents)) {
		wg.Go(func() {
			s := rc.newScratch()
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= len(m.agents) {
					return
				}
				for a := lo; a < min(lo+chunk, len(m.agents)); a++ {
					rc.row(a, s)
				}
			}
		})
	}
	wg.Wait()
	return m
}

// csr is a compressed sparse row list of lists: the list of key k is
// vals[off[k]:off[k+1]]. It is filled in three passes: count every key,
// layout, then add every value.
type csr struct {
	off  []int32
	vals []int32
	fill []int32
}

// newCSR returns a csr for keys 0..keys-1 holding n values in all.
func newCSR(keys, n int) *csr {
	return &csr{off: make([]int32, keys+1), vals: make([]int32, n)}
}

// count records that key k will receive one more value.
func (c *csr) count(k int32) { c.off[k+1]++ }

// layout turns the counts into offsets.
func (c *csr) layout() {
	for k := 1; k < len(c.off); k++ {
		c.off[k] += c.off[k-1]
	}
	c.fill = slices.Clone(c.off[:len(c.off)-1])
}

// add appends v to the list of key k.
func (c *csr) add(k, v int32) {
	c.vals[c.fill[k]] = v
	c.fill[k]++
}

// list returns the values of key k.
func (c *csr) list(k int32) []int32 { return c.vals[c.off[k]:c.off[k+1]] }

// rowComputer holds the read-only data shared by the goroutines that fill
// the rows of a Matrix.
type rowComputer struct {
	m        *Matrix
	nreq     int                // number of distinct required tags
	index    map[string][]int32 // held tag -> ids of the required tags it satisfies
	reqs     *csr               // tool -> required tag ids
	inv      *csr               // required tag id -> tools requiring it
	need     []int32            // tool -> number of distinct required tags
	padded   [][scanWidth]int32 // tool -> required ids padded with always; never for wide tools
	wide     []int32            // tools with more than scanWidth required tags
	untagged []uint64           // bitset of tools requiring nothing, or nil
}

// newRowComputer interns the required tags of m's tools and builds the
// indexes that rowComputer.row uses.
func newRowComputer(m *Matrix) *rowComputer {
	rc := &rowComputer{m: m, need: make([]int32, len(m.tools))}
	ids := make(map[string]int32)
	var names []string
	var reqs []int32 // required tag ids of all tools, in tool order
	for t, tool := range m.tools {
		rc.need[t] = int32(len(tool.Requires))
		if len(tool.Requires) == 0 {
			if rc.untagged == nil {
				rc.untagged = make([]uint64, m.words)
			}
			rc.untagged[t>>6] |= 1 << (t & 63)
		}
		for _, r := range tool.Requires {
			id, ok := ids[r]
			if !ok {
				id = int32(len(names))
				ids[r] = id
				names = append(names, r)
			}
			reqs = append(reqs, id)
		}
	}
	rc.nreq = len(names)
	always := int32(len(names)) // an extra id that every scratch marks satisfied
	never := always + 1         // an extra id that is never satisfied

	// Lay out tool -> required ids, and invert it into required id -> tools.
	rc.reqs = newCSR(len(m.tools), len(reqs))
	rc.inv = newCSR(len(names), len(reqs))
	for t, n := range rc.need {
		rc.reqs.off[t+1] = rc.reqs.off[t] + n
	}
	copy(rc.reqs.vals, reqs)
	for _, id := range reqs {
		rc.inv.count(id)
	}
	rc.inv.layout()
	rc.padded = make([][scanWidth]int32, len(m.tools))
	for t := range m.tools {
		ids := rc.reqs.list(int32(t))
		for _, id := range ids {
			rc.inv.add(id, int32(t))
		}
		p := &rc.padded[t]
		for i := range p {
			p[i] = always
		}
		if len(ids) <= scanWidth {
			copy(p[:], ids)
		} else {
			p[0] = never
			rc.wide = append(rc.wide, int32(t))
		}
	}

	// Index every string that satisfies some required tag: the tag itself and
	// each of its "::"-prefixes.
	rc.index = make(map[string][]int32)
	for id, r := range names {
		prefixesOf(r, func(p string) { rc.index[p] = append(rc.index[p], int32(id)) })
	}
	return rc
}

// scratch is per-goroutine working space, left clean after each row.
type scratch struct {
	seen  []uint64 // bitset of satisfied required tag ids
	ids   []int32  // the ids set in seen
	count []int32  // tool -> number of its required tags satisfied so far
}

// newScratch allocates working space for one goroutine, with room for the
// extra ids always (rc.nreq, marked satisfied) and never (rc.nreq+1).
func (rc *rowComputer) newScratch() *scratch {
	s := &scratch{seen: make([]uint64, (rc.nreq+1)/64+1), count: make([]int32, len(rc.need))}
	s.seen[rc.nreq>>6] = 1 << (rc.nreq & 63)
	return s
}

// row fills the bitset row of agent a.
//
// It first collects the distinct required tags the agent satisfies. When
// they cover few (tool, required tag) pairs, it counts for each tool how many
// of its required tags are satisfied, touching only those pairs; a tool
// whose count reaches its number of required tags is allowed. When they cover
// many pairs, a sequential scan testing every tool's required tags against
// the satisfied set is cheaper.
func (rc *rowComputer) row(a int, s *scratch) {
	m := rc.m
	row := m.bits[a*m.words : (a+1)*m.words]
	if rc.untagged != nil {
		copy(row, rc.untagged)
	}
	pairs := 0
	for _, h := range m.agents[a].Holds {
		for _, id := range rc.index[h] {
			if s.seen[id>>6]&(1<<(id&63)) == 0 {
				s.seen[id>>6] |= 1 << (id & 63)
				s.ids = append(s.ids, id)
				pairs += len(rc.inv.list(id))
			}
		}
	}
	if pairs*scanFactor < len(m.tools) {
		rc.countRow(row, s)
	} else {
		rc.scanRow(row, s)
	}
	for _, id := range s.ids {
		s.seen[id>>6] &^= 1 << (id & 63) // keep the always bit
	}
	s.ids = s.ids[:0]
}

// scanFactor chooses between rowComputer.countRow and rowComputer.scanRow:
// counting is used when fewer than len(tools)/scanFactor (tool, required
// tag) pairs are satisfied. Counting costs two random accesses per pair and
// scanning one sequential step per tool, so counting wins below about one
// pair per two tools. Both give identical results.
const scanFactor = 2

// scanWidth is the number of required tags per tool that
// rowComputer.scanRow tests without a loop. The unrolled test in scanRow
// reads exactly four slots, so changing this needs a matching change there.
const scanWidth = 4

// countRow sets the bits of row for the tools all of whose required tags are
// among s.ids, touching only the tools that require one of s.ids.
func (rc *rowComputer) countRow(row []uint64, s *scratch) {
	for _, id := range s.ids {
		for _, t := range rc.inv.list(id) {
			s.count[t]++
			if s.count[t] == rc.need[t] {
				row[t>>6] |= 1 << (t & 63)
			}
		}
	}
	for _, id := range s.ids {
		for _, t := range rc.inv.list(id) {
			s.count[t] = 0
		}
	}
}

// scanRow sets the bits of row for the tools all of whose required tags are
// in s.seen, testing every tool without data-dependent branches: tools with
// up to scanWidth required tags are tested through rc.padded, the rest
// through rc.reqs. An untagged tool passes trivially (its bit is already
// set).
func (rc *rowComputer) scanRow(row []uint64, s *scratch) {
	seen := s.seen
	for t, ids := range rc.padded {
		ok := seen[ids[0]>>6] >> (ids[0] & 63)
		ok &= seen[ids[1]>>6] >> (ids[1] & 63)
		ok &= seen[ids[2]>>6] >> (ids[2] & 63)
		ok &= seen[ids[3]>>6] >> (ids[3] & 63)
		row[t>>6] |= (ok & 1) << (t & 63)
	}
	for _, t := range rc.wide {
		ok := uint64(1)
		for _, id := range rc.reqs.list(t) {
			ok &= seen[id>>6] >> (id & 63)
		}
		row[t>>6] |= ok << (t & 63)
	}
}

// Agents returns a copy of the agents in index order (sorted by name), with
// sorted, deduplicated Holds.
func (m *Matrix) Agents() []Agent { return cloneAgents(m.agents, false) }

// Tools returns a copy of the tools in index order (sorted by name), with
// sorted, deduplicated Requires.
func (m *Matrix) Tools() []Tool { return cloneTools(m.tools, false) }

// Allowed reports whether agent agentIdx may call tool toolIdx.
func (m *Matrix) Allowed(agentIdx, toolIdx int) bool {
	row := m.row(agentIdx)
	_ = m.tools[toolIdx] // bounds check against the tool count, not the row width
	return row[toolIdx>>6]&(1<<(toolIdx&63)) != 0
}

// Cell explains whether agent agentIdx may call tool toolIdx. The
// explanation is computed on demand; the returned slices and map are fresh.
func (m *Matrix) Cell(agentIdx, toolIdx int) Cell {
	agent, tool := m.agents[agentIdx], m.tools[toolIdx]
	c := Cell{
		Agent:    agent.Name,
		Tool:     tool.Name,
		Allowed:  m.Allowed(agentIdx, toolIdx),
		Requires: slices.Clone(tool.Requires),
		Missing:  []string{},
		Matched:  map[string]string{},
	}
	if c.Requires == nil {
		c.Requires = []string{}
	}
	switch {
	case len(tool.Requires) == 0:
		c.Reason = ReasonUntagged
	case c.Allowed:
		c.Reason = ReasonGranted
		for _, r := range tool.Requires {
			c.Matched[r], _ = mostSpecific(agent.Holds, r)
		}
	default:
		c.Reason = ReasonMissing
		for _, r := range tool.Requires {
			if _, ok := mostSpecific(agent.Holds, r); !ok {
				c.Missing = append(c.Missing, r)
			}
		}
		c.OverrideReachable = agent.Policy == Extensible
	}
	return c
}

// mostSpecific returns the longest held tag that satisfies required, ties
// broken by the lexicographically smallest, and whether any does.
func mostSpecific(holds []string, required string) (string, bool) {
	best, found := "", false
	for _, h := range holds {
		if !Satisfies(h, required) {
			continue
		}
		if !found || len(h) > len(best) || (len(h) == len(best) && h < best) {
			best, found = h, true
		}
	}
	return best, found
}

// AgentIndex returns the index of the agent named name. If several agents
// share the name, it returns the first of them.
func (m *Matrix) AgentIndex(name string) (int, bool) {
	i, ok := slices.BinarySearchFunc(m.agents, name, func(a Agent, n string) int { return strings.Compare(a.Name, n) })
	return i, ok
}

// ToolIndex returns the index of the tool named name. If several tools share
// the name, it returns the first of them.
func (m *Matrix) ToolIndex(name string) (int, bool) {
	i, ok := slices.BinarySearchFunc(m.tools, name, func(t Tool, n string) int { return strings.Compare(t.Name, n) })
	return i, ok
}

// AllowedCount returns how many tools agent agentIdx may call.
func (m *Matrix) AllowedCount(agentIdx int) int {
	n := 0
	for _, w := range m.row(agentIdx) {
		n += bits.OnesCount64(w)
	}
	return n
}

// Denied returns the indexes of the tools agent agentIdx may not call, in
// ascending order. The result is never nil.
func (m *Matrix) Denied(agentIdx int) []int {
	row := m.row(agentIdx)
	out := make([]int, 0, len(m.tools)-m.AllowedCount(agentIdx))
	for t := range m.tools {
		if row[t>>6]&(1<<(t&63)) == 0 {
			out = append(out, t)
		}
	}
	return out
}

// Reachable returns the names of the tools agent agentIdx may call, sorted
// and deduplicated. The result is never nil.
func (m *Matrix) Reachable(agentIdx int) []string {
	row := m.row(agentIdx)
	out := make([]string, 0, m.AllowedCount(agentIdx))
	for w, word := range row {
		for word != 0 {
			t := w<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			if name := m.tools[t].Name; len(out) == 0 || out[len(out)-1] != name {
				out = append(out, name)
			}
		}
	}
	return out
}

// Holds reports whether agent agentIdx holds a tag that satisfies tag.
func (m *Matrix) Holds(agentIdx int, tag string) bool {
	for _, h := range m.agents[agentIdx].Holds {
		if Satisfies(h, tag) {
			return true
		}
	}
	return false
}

// row returns the bitset row of agent a, panicking if a is out of range.
func (m *Matrix) row(a int) []uint64 {
	_ = m.agents[a]
	return m.bits[a*m.words : (a+1)*m.words]
}

// cloneAgents deep-copies agents into a single tag backing array. If
// normalize is set it also sorts the agents by name, sorts and deduplicates
// each Holds, and records an empty Policy as Locked.
func cloneAgents(agents []Agent, normalize bool) []Agent {
	out := slices.Clone(agents)
	if out == nil {
		out = []Agent{}
	}
	n := 0
	for _, a := range agents {
		n += len(a.Holds)
	}
	buf := make([]string, 0, n)
	for i := range out {
		out[i].Holds, buf = appendTags(buf, out[i].Holds, normalize)
		if normalize && out[i].Policy == "" {
			out[i].Policy = Locked
		}
	}
	if normalize {
		out = sortedByName(out, func(a Agent) string { return a.Name })
	}
	return out
}

// cloneTools deep-copies tools into a single tag backing array. If normalize
// is set it also sorts the tools by name and sorts and deduplicates each
// Requires.
func cloneTools(tools []Tool, normalize bool) []Tool {
	out := slices.Clone(tools)
	if out == nil {
		out = []Tool{}
	}
	n := 0
	for _, t := range tools {
		n += len(t.Requires)
	}
	buf := make([]string, 0, n)
	for i := range out {
		out[i].Requires, buf = appendTags(buf, out[i].Requires, normalize)
	}
	if normalize {
		out = sortedByName(out, func(t Tool) string { return t.Name })
	}
	return out
}

// sortedByName returns items sorted stably by name. It sorts a permutation
// with an index tie-break, which is faster than slices.SortStableFunc on
// large slices of structs.
func sortedByName[T any](items []T, name func(T) string) []T {
	perm := make([]int32, len(items))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, func(i, j int32) int {
		if c := strings.Compare(name(items[i]), name(items[j])); c != 0 {
			return c
		}
		return int(i - j)
	})
	out := make([]T, len(items))
	for i, p := range perm {
		out[i] = items[p]
	}
	return out
}

// appendTags appends tags to buf (sorted and deduplicated if normalize is
// set) and returns the appended part, with its capacity clipped so appending
// to it cannot overwrite its neighbours, and the extended buf. The returned
// part is never nil.
func appendTags(buf, tags []string, normalize bool) (part, rest []string) {
	lo := len(buf)
	buf = append(buf, tags...)
	part = buf[lo:len(buf):len(buf)]
	if normalize {
		slices.Sort(part)
		part = slices.Clip(slices.Compact(part))
		buf = buf[:lo+len(part)]
	}
	return part, buf
}
