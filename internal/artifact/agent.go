package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// FormatVersion is the agent.json format this package writes and reads.
const FormatVersion = "1"

// Agent is agent.json: one agent as apply resolved it, with everything a
// host needs to run it and nothing known only at runtime. Values that
// runtime() supplies are kept as references (RuntimeRef); a secret's value
// or default never appears. docs/agent-json.md documents the schema for
// users.
//
// Lists are written sorted (see MarshalAgent), so their order here does
// not matter.
type Agent struct {
	// FormatVersion is FormatVersion; MarshalAgent sets it.
	FormatVersion string `json:"format_version"`
	Name          string `json:"name"`
	Version       string `json:"version"`
	Description   string `json:"description"`
	Graph         Graph  `json:"graph"`
	Model         Model  `json:"model"`
	// Prompt is nil when the agent has no prompt (written as null).
	Prompt *Prompt `json:"prompt"`
	// Capabilities are the tags the agent holds, as written in the
	// manifest; a runtime reference when the whole list is runtime().
	Capabilities Strings `json:"capabilities"`
	// CapabilityPolicy is "locked" or "extensible" (apply writes "locked"
	// when the manifest leaves it unset), or a runtime reference.
	CapabilityPolicy String `json:"capability_policy"`
	// Runtime lists every runtime reference the agent needs, once each:
	// from its own fields, its prompt, its tools and their blocks.
	Runtime []RuntimeRef `json:"runtime"`
	// Tools lists every registered tool of the workspace, disabled ones
	// included.
	Tools []Tool `json:"tools"`
	// Blocks lists the tool blocks behind Tools with their lock entries.
	Blocks []Block `json:"blocks"`
	Skills []Skill `json:"skills"`
	// Matrix is this agent's row of the capability matrix: one cell per
	// enabled registered tool.
	Matrix []Cell `json:"matrix"`
	// Network is the workspace's network block, the egress policy of the
	// agent's tools; nil (absent) when the workspace has none, which
	// means no network at all.
	Network *Network `json:"network,omitempty"`
	// LockfileDigest is lockfile.File.Digest() of the lockfile written
	// with this artifact ("sha256:<hex>").
	LockfileDigest string `json:"lockfile_digest"`
}

// Graph is the agent's execution graph.
type Graph struct {
	// Type is the graph type ("react").
	Type string `json:"type"`
	// Model is the model call policy; nil when the manifest sets none.
	Model *ModelPolicy `json:"model,omitempty"`
}

// ModelPolicy is the graph's model call policy. Each field is nil when
// the manifest leaves it unset; numbers are copied from the manifest
// unchanged.
type ModelPolicy struct {
	Timeout *Int   `json:"timeout,omitempty"`
	Retry   *Retry `json:"retry,omitempty"`
}

// Retry is the retry policy for model calls, copied from the manifest.
type Retry struct {
	MaxAttempts    Int `json:"max_attempts"`
	InitialBackoff Int `json:"initial_backoff"`
	MaxBackoff     Int `json:"max_backoff"`
}

// Model names the model the agent uses; either part may be a runtime
// reference.
type Model struct {
	Provider String `json:"provider"`
	Name     String `json:"name"`
}

// Prompt forms: which of Prompt's fields is used.
const (
	PromptText     = "text"
	PromptMessages = "messages"
	PromptLangfuse = "langfuse"
)

// Prompt is the agent's prompt in one of three forms, chosen by Kind. It
// marshals as a JSON string (text), an array of {role, content} objects
// (messages), or an object with "source": "langfuse" (langfuse).
type Prompt struct {
	Kind     string
	Text     string
	Messages []Message
	Langfuse *Langfuse
}

// Message is one {role, content} entry of a multi-turn prompt.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Langfuse fetches the prompt from Langfuse when the agent starts. Every
// field but PromptName is nil when unset; keys are usually secret runtime
// references.
type Langfuse struct {
	PromptName          String  `json:"prompt_name"`
	PublicKey           *String `json:"public_key,omitempty"`
	SecretKey           *String `json:"secret_key,omitempty"`
	BaseURL             *String `json:"base_url,omitempty"`
	Label               *String `json:"label,omitempty"`
	Version             *Int    `json:"version,omitempty"`
	CacheTTLSeconds     *Int    `json:"cache_ttl_seconds,omitempty"`
	FetchTimeoutSeconds *Int    `json:"fetch_timeout_seconds,omitempty"`
	MaxRetries          *Int    `json:"max_retries,omitempty"`
}

// langfuseJSON is Langfuse's wire form, with its "source" marker first.
type langfuseJSON struct {
	Source string `json:"source"`
	Langfuse
}

// MarshalJSON writes the prompt in its Kind's form.
func (p Prompt) MarshalJSON() ([]byte, error) {
	switch p.Kind {
	case PromptText:
		return marshalCanonical(p.Text)
	case PromptMessages:
		msgs := p.Messages
		if msgs == nil {
			msgs = []Message{}
		}
		return marshalCanonical(msgs)
	case PromptLangfuse:
		if p.Langfuse == nil {
			return nil, errors.New("langfuse prompt without its settings")
		}
		return marshalCanonical(langfuseJSON{Source: "langfuse", Langfuse: *p.Langfuse})
	default:
		return nil, fmt.Errorf("unknown prompt kind %q", p.Kind)
	}
}

// UnmarshalJSON reads any of the three forms.
func (p *Prompt) UnmarshalJSON(data []byte) error {
	*p = Prompt{}
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return errors.New("empty prompt")
	}
	switch t[0] {
	case '"':
		p.Kind = PromptText
		return json.Unmarshal(t, &p.Text)
	case '[':
		p.Kind = PromptMessages
		return json.Unmarshal(t, &p.Messages)
	case '{':
		var w langfuseJSON
		if err := json.Unmarshal(t, &w); err != nil {
			return err
		}
		if w.Source != "langfuse" {
			return fmt.Errorf("prompt object with source %q, want \"langfuse\"", w.Source)
		}
		p.Kind = PromptLangfuse
		p.Langfuse = &w.Langfuse
		return nil
	default:
		return errors.New("prompt is not a string, an array or an object")
	}
}

// MarshalAgent returns agent.json for a: indented by two spaces, keys in
// the order of the Go fields (map keys and the keys of free-form JSON
// values sorted), no HTML escaping, ending in a newline. Lists are sorted
// so that the bytes do not depend on the order apply filled them in:
// tools, blocks, skills and matrix cells by name, runtime references by
// env, and the sets (capabilities, requires, missing, allowed_tools,
// skill files) by value; mcp args keep their order. format_version is
// set to FormatVersion and runtime_enabled to whether enabled is a
// runtime reference. a itself is not modified.
func MarshalAgent(a *Agent) ([]byte, error) {
	if a == nil {
		return nil, errors.New("marshalling agent.json: no agent")
	}
	tools := make([]Encoded, len(a.Tools))
	for i := range a.Tools {
		var err error
		if tools[i], err = EncodeTool(a.Tools[i]); err != nil {
			return nil, fmt.Errorf("marshalling agent.json for %q: %w", a.Name, err)
		}
	}
	blocks := make([]Encoded, len(a.Blocks))
	for i := range a.Blocks {
		var err error
		if blocks[i], err = EncodeBlock(a.Blocks[i]); err != nil {
			return nil, fmt.Errorf("marshalling agent.json for %q: %w", a.Name, err)
		}
	}
	return MarshalAgentEncoded(a, tools, blocks)
}

// Encoded is one element of agent.json's "tools" or "blocks" list,
// encoded once by EncodeTool or EncodeBlock. Those two lists are most of every
// agent.json of a workspace and nearly the same in each, so apply encodes
// each element once and gives the entries to MarshalAgentEncoded for
// every agent. The zero Encoded is not valid.
type Encoded struct {
	name string
	// indented is the element as it appears in the document, without the
	// indentation of its first line.
	indented []byte
}

// EncodeTool encodes t as MarshalAgent writes it in "tools".
func EncodeTool(t Tool) (Encoded, error) {
	c := canonicalTool(t)
	b, err := encodeElement(&c)
	return Encoded{name: c.Name, indented: b}, err
}

// EncodeBlock encodes b as MarshalAgent writes it in "blocks".
func EncodeBlock(b Block) (Encoded, error) {
	c := canonicalBlock(b)
	enc, err := encodeElement(&c)
	return Encoded{name: c.Name, indented: enc}, err
}

// MarshalAgentEncoded is MarshalAgent with the tools and blocks given
// encoded: a.Tools and a.Blocks are ignored, and the bytes are those
// MarshalAgent returns for the Tools and Blocks the entries were encoded
// from. Entries are sorted by name; entries of the same name keep their
// order, as MarshalAgent keeps that of a.Tools and a.Blocks.
func MarshalAgentEncoded(a *Agent, tools, blocks []Encoded) ([]byte, error) {
	if a == nil {
		return nil, errors.New("marshalling agent.json: no agent")
	}
	for _, e := range slices.Concat(tools, blocks) {
		if e.indented == nil {
			return nil, fmt.Errorf("marshalling agent.json for %q: a tool or block was not encoded", a.Name)
		}
	}
	rest := *a
	rest.Tools, rest.Blocks = nil, nil
	c := canonicalAgent(&rest)
	c.Tools, c.Blocks = nil, nil
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("marshalling agent.json for %q: %w", a.Name, err)
	}
	byName := func(x, y Encoded) int { return strings.Compare(x.name, y.name) }
	tools = slices.Clone(tools)
	slices.SortStableFunc(tools, byName)
	blocks = slices.Clone(blocks)
	slices.SortStableFunc(blocks, byName)
	out, err := spliceLists(b.Bytes(), []splice{{"tools", tools}, {"blocks", blocks}})
	if err != nil {
		return nil, fmt.Errorf("marshalling agent.json for %q: %w", a.Name, err)
	}
	return out, nil
}

// encodeElement returns the indented encoding of v as an element of a
// top-level list of a document encoded with two-space indentation,
// remembered by its compact encoding (elementMemo).
func encodeElement(v any) ([]byte, error) {
	compact := compactBuffers.Get().(*bytes.Buffer)
	defer compactBuffers.Put(compact)
	compact.Reset()
	enc := json.NewEncoder(compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	value := bytes.TrimSuffix(compact.Bytes(), []byte("\n"))
	if indented, ok := elementMemo.getShared(value); ok {
		return indented, nil
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, value, "    ", "  "); err != nil {
		return nil, err
	}
	elementMemo.put(value, ind.Bytes())
	return ind.Bytes(), nil
}

// compactBuffers hold encodeElement's compact encodings, which only live
// until the memo lookup.
var compactBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// splice is a top-level member of a document and the entries of its list.
type splice struct {
	key     string
	entries []Encoded
}

// spliceLists returns doc, a document encoded with two-space indentation
// whose top-level members lists[i].key are null, in that order, with
// each set to its entries: what encoding the document with the lists in
// place would have given.
func spliceLists(doc []byte, lists []splice) ([]byte, error) {
	size := len(doc)
	for _, l := range lists {
		for _, e := range l.entries {
			size += len(e.indented) + len("    ,\n")
		}
	}
	out := make([]byte, 0, size+len("[\n  ]")*len(lists))
	for _, l := range lists {
		null := []byte("\n  \"" + l.key + "\": null")
		at := bytes.Index(doc, null)
		if at < 0 || bytes.Contains(doc[at+len(null):], null) {
			return nil, fmt.Errorf("no single top-level %q to fill in; this is a bug in agentform", l.key)
		}
		out = append(out, doc[:at+len(null)-len("null")]...)
		doc = doc[at+len(null):]
		if len(l.entries) == 0 {
			out = append(out, "[]"...)
			continue
		}
		out = append(out, "[\n"...)
		for i, e := range l.entries {
			out = append(out, "    "...)
			out = append(out, e.indented...)
			if i < len(l.entries)-1 {
				out = append(out, ',')
			}
			out = append(out, '\n')
		}
		out = append(out, "  ]"...)
	}
	return append(out, doc...), nil
}

// ParseAgent reads agent.json. Unknown fields are ignored, so that a
// newer minor revision can add some; a different format_version is
// ErrFormatVersion.
func ParseAgent(data []byte) (*Agent, error) {
	var a Agent
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("reading %s: %w", AgentName, err)
	}
	if a.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("reading %s: %w: %q (this agentform reads %q)", AgentName, ErrFormatVersion, a.FormatVersion, FormatVersion)
	}
	return &a, nil
}

// canonicalAgent returns a copy of a with its lists sorted and its derived
// fields set. Slices are copied before sorting; nothing a points to is
// modified.
func canonicalAgent(a *Agent) *Agent {
	c := *a
	c.FormatVersion = FormatVersion
	c.Capabilities = sortedStrings(a.Capabilities)

	c.Runtime = slices.Clone(a.Runtime)
	slices.SortStableFunc(c.Runtime, func(x, y RuntimeRef) int { return x.compare(&y) })
	c.Runtime = slices.CompactFunc(c.Runtime, func(x, y RuntimeRef) bool { return x.compare(&y) == 0 })

	c.Tools = make([]Tool, len(a.Tools))
	for i, t := range a.Tools {
		c.Tools[i] = canonicalTool(t)
	}
	slices.SortStableFunc(c.Tools, func(x, y Tool) int { return strings.Compare(x.Name, y.Name) })

	c.Blocks = make([]Block, len(a.Blocks))
	for i, b := range a.Blocks {
		c.Blocks[i] = canonicalBlock(b)
	}
	slices.SortStableFunc(c.Blocks, func(x, y Block) int { return strings.Compare(x.Name, y.Name) })

	c.Skills = make([]Skill, len(a.Skills))
	for i, s := range a.Skills {
		s.AllowedTools = sortedSet(s.AllowedTools)
		s.Files = sortedSet(s.Files)
		c.Skills[i] = s
	}
	slices.SortStableFunc(c.Skills, func(x, y Skill) int { return strings.Compare(x.Name, y.Name) })

	c.Matrix = make([]Cell, len(a.Matrix))
	for i, cell := range a.Matrix {
		cell.Missing = sortedSet(cell.Missing)
		c.Matrix[i] = cell
	}
	slices.SortStableFunc(c.Matrix, func(x, y Cell) int { return strings.Compare(x.Tool, y.Tool) })
	return &c
}

// canonicalTool is t as agent.json holds it: requires sorted,
// runtime_enabled set, bash commands [] rather than null.
func canonicalTool(t Tool) Tool {
	t.Requires = sortedSet(t.Requires)
	t.RuntimeEnabled = t.Enabled.Runtime != nil
	if t.Bash != nil && t.Bash.Commands == nil {
		bash := *t.Bash
		bash.Commands = []string{}
		t.Bash = &bash
	}
	return t
}

// canonicalBlock is b as agent.json holds it: the lock's hashed fields
// sorted, once each.
func canonicalBlock(b Block) Block {
	if b.Lock != nil {
		l := *b.Lock
		l.HashedFields = slices.Compact(slices.Sorted(slices.Values(l.HashedFields)))
		b.Lock = &l
	}
	return b
}

// sortedSet returns a sorted copy of a set of strings, never nil, so that
// it marshals as [] when empty.
func sortedSet(s []string) []string {
	out := slices.Clone(s)
	if out == nil {
		out = []string{}
	}
	slices.Sort(out)
	return out
}

// sortedStrings sorts a literal list by value (runtime elements last, in
// their order); a list that is a runtime reference is returned as is.
func sortedStrings(l Strings) Strings {
	if l.Runtime != nil {
		return l
	}
	out := Strings{Values: slices.Clone(l.Values)}
	slices.SortStableFunc(out.Values, func(x, y String) int {
		switch {
		case x.Runtime != nil && y.Runtime != nil:
			return 0
		case x.Runtime != nil:
			return 1
		case y.Runtime != nil:
			return -1
		}
		return strings.Compare(x.Value, y.Value)
	})
	return out
}
