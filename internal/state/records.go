package state

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/bbolt"
)

// Artifact is the file an agent's apply produced (DESIGN §8).
type Artifact struct {
	// Path is the artifact's path relative to the workspace, slash-separated
	// (e.g. "dist/assistant.agent.tgz").
	Path string `json:"path"`
	// SHA256 is the hex digest of the artifact file.
	SHA256 string `json:"sha256"`
	// Size is the artifact file's size in bytes.
	Size int64 `json:"size"`
}

// Resource is one applied resource, stored under its Address.
type Resource struct {
	// Address is "<Type>.<Name>": "tool.adder", "skill.x", "agent.assistant".
	Address string `json:"address"`
	// Type is the address's first part: "tool", "skill" or "agent".
	Type string `json:"type"`
	// Name is the address's second part, the block's label.
	Name string `json:"name"`
	// Kind is the resource's kind where it has one (a tool's "javascript",
	// "python", "bash", "mcp", "a2a").
	Kind string `json:"kind,omitempty"`
	// Fingerprint is the digest of the resource's normalised configuration and
	// resolved inputs as applied; plans compare it to decide update or no-op.
	Fingerprint string `json:"fingerprint"`
	// Attributes are the resource's displayable attributes as applied (e.g.
	// "source": "h1:…", "capabilities": "a, b"); plans diff them.
	Attributes map[string]string `json:"attributes,omitempty"`
	// Lock is the resource's lockfile entry as JSON, when it has one. It is
	// stored compacted (insignificant whitespace removed).
	Lock json.RawMessage `json:"lock,omitempty"`
	// Artifact is the agent's artifact; agents only.
	Artifact *Artifact `json:"artifact,omitempty"`
}

// Resources returns every resource in state, sorted by address.
func (db *DB) Resources() ([]Resource, error) {
	out := []Resource{}
	err := db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketResources)
		if b == nil {
			return nil
		}
		// bbolt iterates in byte order of the keys, which is the string order
		// of the addresses.
		return b.ForEach(func(k, v []byte) error {
			r, err := decodeResource(k, v)
			if err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Resource returns the resource at address; ok is false when state has none.
func (db *DB) Resource(address string) (r Resource, ok bool, err error) {
	err = db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketResources)
		if b == nil || address == "" {
			return nil
		}
		v := b.Get([]byte(address))
		if v == nil {
			return nil
		}
		r, err = decodeResource([]byte(address), v)
		ok = err == nil
		return err
	})
	return r, ok, err
}

// Matrix returns the capability matrix as applied: agent name → the tools it
// may call, sorted. An agent that may call nothing has an empty, non-nil list.
func (db *DB) Matrix() (map[string][]string, error) {
	out := map[string][]string{}
	err := db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketMatrix)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			tools, err := decodeMatrixRow(k, v)
			if err != nil {
				return err
			}
			out[string(k)] = tools
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Tools returns the registered tools as the last apply recorded them (the
// matrix's columns), sorted; known is false when no apply recorded them:
// before the first commit, and in databases written before they were
// recorded.
func (db *DB) Tools() (tools []string, known bool, err error) {
	err = db.view(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return nil
		}
		v := meta.Get(keyTools)
		if v == nil {
			return nil
		}
		if err := json.Unmarshal(v, &tools); err != nil {
			return fmt.Errorf("decoding tools: %w: %w", ErrCorrupt, err)
		}
		if tools == nil {
			return fmt.Errorf("decoding tools: %w: not a list", ErrCorrupt)
		}
		for _, t := range tools {
			if t == "" {
				return fmt.Errorf("decoding tools: %w: an empty tool name", ErrCorrupt)
			}
		}
		known = true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return tools, known, nil
}

// encodeTools validates Commit.Tools and encodes them sorted and without
// duplicates; nil is an empty list.
func encodeTools(tools []string) ([]byte, error) {
	out := slices.Clone(tools)
	if out == nil {
		out = []string{}
	}
	for _, t := range out {
		if t == "" {
			return nil, fmt.Errorf("%w: an empty tool name", ErrInvalid)
		}
	}
	slices.Sort(out)
	return json.Marshal(slices.Compact(out))
}

// checkAddress reports whether r's Address is "<Type>.<Name>" with both parts
// non-empty and Type free of dots, so that an address splits one way only.
func checkAddress(r Resource) error {
	if r.Type == "" || r.Name == "" || strings.Contains(r.Type, ".") || r.Address != r.Type+"."+r.Name {
		return fmt.Errorf("%w: resource address %q is not <type>.<name> (type %q, name %q)", ErrInvalid, r.Address, r.Type, r.Name)
	}
	return nil
}

// encodeResource validates and encodes one resource record.
func encodeResource(r Resource) ([]byte, error) {
	if err := checkAddress(r); err != nil {
		return nil, err
	}
	v, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding resource %q: %w", ErrInvalid, r.Address, err)
	}
	return v, nil
}

// decodeResource decodes the record stored under key, which must be its own
// address, in the form Commit enforces.
func decodeResource(key, v []byte) (Resource, error) {
	var r Resource
	if err := json.Unmarshal(v, &r); err != nil {
		return Resource{}, fmt.Errorf("decoding resource %q: %w: %w", key, ErrCorrupt, err)
	}
	if r.Address != string(key) {
		return Resource{}, fmt.Errorf("decoding resource %q: %w: record has address %q", key, ErrCorrupt, r.Address)
	}
	if err := checkAddress(r); err != nil {
		return Resource{}, fmt.Errorf("decoding resource %q: %w: %w", key, ErrCorrupt, err)
	}
	return r, nil
}

// normaliseMatrix validates the matrix and returns each row sorted and free
// of duplicates, with nil rows as empty lists.
func normaliseMatrix(m map[string][]string) (map[string][]string, error) {
	out := make(map[string][]string, len(m))
	for agent, tools := range m {
		if agent == "" {
			return nil, fmt.Errorf("%w: matrix row with an empty agent name", ErrInvalid)
		}
		row := slices.Clone(tools)
		if row == nil {
			row = []string{}
		}
		slices.Sort(row)
		row = slices.Compact(row)
		if len(row) > 0 && row[0] == "" {
			return nil, fmt.Errorf("%w: matrix row %q has an empty tool name", ErrInvalid, agent)
		}
		out[agent] = row
	}
	return out, nil
}

// decodeMatrixRow decodes the tools of the agent stored under key.
func decodeMatrixRow(key, v []byte) ([]string, error) {
	var tools []string
	if err := json.Unmarshal(v, &tools); err != nil {
		return nil, fmt.Errorf("decoding matrix %q: %w: %w", key, ErrCorrupt, err)
	}
	if tools == nil {
		// JSON null; Commit always stores a list.
		return nil, fmt.Errorf("decoding matrix %q: %w: not a list", key, ErrCorrupt)
	}
	return tools, nil
}
