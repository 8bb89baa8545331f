package artifact

import (
	"maps"
	"slices"

	"github.com/agentform/agentform/lockfile"
)

// Lock is a tool block's lockfile entry in agent.json: the attributes of
// its tool block in agentform.lock.hcl, under the same names, with empty
// ones omitted. NewLock and Lock.Tool convert to and from lockfile.Tool.
type Lock struct {
	Kind string `json:"kind"`
	// javascript and python.
	Source string `json:"source,omitempty"`
	// javascript.
	Deps    string `json:"deps,omitempty"`
	Bundle  string `json:"bundle,omitempty"`
	Bundler string `json:"bundler,omitempty"`
	// python.
	UVLock      string `json:"uv_lock,omitempty"`
	Interpreter string `json:"interpreter,omitempty"`
	// mcp: Tools holds the digest of each served tool by served name,
	// Definitions its canonical JSON.
	Server       *LockServer       `json:"server,omitempty"`
	HashedFields []string          `json:"hashed_fields,omitempty"`
	Tools        map[string]string `json:"tools,omitempty"`
	Definitions  map[string]string `json:"definitions,omitempty"`
	// a2a.
	Card        string `json:"card,omitempty"`
	CardName    string `json:"card_name,omitempty"`
	CardVersion string `json:"card_version,omitempty"`
	CardJSON    string `json:"card_json,omitempty"`
}

// LockServer is an mcp server's self-reported identity.
type LockServer struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// SkillLock is a skill's lockfile entry in agent.json.
type SkillLock struct {
	// Source is the dirhash Hash1 of the skill directory ("h1:...").
	Source string `json:"source"`
}

// NewLock returns t as agent.json writes it; nil for a nil entry. Maps and
// slices are copied.
func NewLock(t *lockfile.Tool) *Lock {
	if t == nil {
		return nil
	}
	l := &Lock{
		Kind:         t.Kind,
		Source:       t.Source,
		Deps:         t.Deps,
		Bundle:       t.Bundle,
		Bundler:      t.Bundler,
		UVLock:       t.UVLock,
		Interpreter:  t.Interpreter,
		HashedFields: slices.Clone(t.HashedFields),
		Tools:        maps.Clone(t.Served),
		Definitions:  maps.Clone(t.Definitions),
		Card:         t.Card,
		CardName:     t.CardName,
		CardVersion:  t.CardVersion,
		CardJSON:     t.CardJSON,
	}
	if t.ServerName != "" || t.ServerVersion != "" {
		l.Server = &LockServer{Name: t.ServerName, Version: t.ServerVersion}
	}
	return l
}

// Tool returns the entry as a lockfile.Tool; nil for a nil Lock.
func (l *Lock) Tool() *lockfile.Tool {
	if l == nil {
		return nil
	}
	t := &lockfile.Tool{
		Kind:         l.Kind,
		Source:       l.Source,
		Deps:         l.Deps,
		Bundle:       l.Bundle,
		Bundler:      l.Bundler,
		UVLock:       l.UVLock,
		Interpreter:  l.Interpreter,
		HashedFields: slices.Clone(l.HashedFields),
		Served:       maps.Clone(l.Tools),
		Definitions:  maps.Clone(l.Definitions),
		Card:         l.Card,
		CardName:     l.CardName,
		CardVersion:  l.CardVersion,
		CardJSON:     l.CardJSON,
	}
	if l.Server != nil {
		t.ServerName, t.ServerVersion = l.Server.Name, l.Server.Version
	}
	return t
}

// NewSkillLock returns s as agent.json writes it; nil for a nil entry or
// one without a source.
func NewSkillLock(s *lockfile.Skill) *SkillLock {
	if s == nil || s.Source == "" {
		return nil
	}
	return &SkillLock{Source: s.Source}
}

// Skill returns the entry as a lockfile.Skill; nil for a nil SkillLock.
func (l *SkillLock) Skill() *lockfile.Skill {
	if l == nil {
		return nil
	}
	return &lockfile.Skill{Source: l.Source}
}
