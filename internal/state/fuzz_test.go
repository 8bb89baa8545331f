package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to every decoder of stored records: each
// must either fail with ErrCorrupt or return a record that re-encodes to
// stable bytes. None may panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("tool.adder"), []byte(`{"address":"tool.adder","type":"tool","name":"adder","fingerprint":"f","attributes":{"a":"b"},"lock":{"x": [1, 2]},"artifact":{"path":"p","sha256":"s","size":3}}`))
	f.Add([]byte("assistant"), []byte(`["adder","shell"]`))
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x01"), []byte(`{"serial":1,"time":"2026-01-02T03:04:05Z","user_host":"a@b","version":"0.1.0","actions":[{"address":"tool.a","action":"create"}],"capability_changes":[{"agent":"a","tool":"t","change":"granted"}],"checks":[{"name":"c","status":"pass"}]}`))
	f.Add([]byte("lineage"), []byte("6ba7b810-9dad-11d1-80b4-00c04fd430c8"))
	f.Add([]byte("serial"), []byte("\x00\x00\x00\x00\x00\x00\x00\x02"))
	f.Add([]byte(""), []byte("null"))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		checkCorrupt := func(what string, err error) {
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s\ngot:  %v\nwant: nil or %v", what, err, ErrCorrupt)
			}
		}
		stable := func(what string, v any, decode func([]byte) (any, error)) {
			first, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%s: re-encoding a decoded record: %v", what, err)
			}
			again, err := decode(first)
			if err != nil {
				t.Fatalf("%s: decoding a re-encoded record: %v\n%s", what, err, first)
			}
			second, err := json.Marshal(again)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first, second) {
				t.Fatalf("%s: unstable encoding\ngot:  %s\nwant: %s", what, second, first)
			}
		}

		if r, err := decodeResource(key, value); err != nil {
			checkCorrupt("resource", err)
		} else {
			stable("resource", r, func(b []byte) (any, error) { return decodeResource(key, b) })
		}
		if row, err := decodeMatrixRow(key, value); err != nil {
			checkCorrupt("matrix", err)
		} else {
			stable("matrix", row, func(b []byte) (any, error) { return decodeMatrixRow(key, b) })
		}
		if e, err := decodeHistory(key, value); err != nil {
			checkCorrupt("history", err)
		} else {
			stable("history", e, func(b []byte) (any, error) { return decodeHistory(key, b) })
		}
		if s, err := decodeSerial(value); err != nil {
			checkCorrupt("serial", err)
		} else if got := serialKey(s); value != nil && !bytes.Equal(got, value) {
			t.Fatalf("serial\ngot:  %x\nwant: %x", got, value)
		}
		_, err := decodeLineage(value)
		checkCorrupt("lineage", err)
		checkCorrupt("format_version", checkFormat(value))
	})
}
