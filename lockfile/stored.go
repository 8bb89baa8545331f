package lockfile

// Stored returns a copy of t as the lockfile stores it, which is what Parse
// reads back from Bytes for an entry Validate accepts: every string
// NFC-normalised valid UTF-8 (definitions and card_json still the same
// JSON), hashed_fields distinct and sorted, map entries without a value
// left out. A lock entry made by resolving and one read from the file then
// hold the same text, so that what is built from either (an artifact's
// block lock) is the same byte for byte. Stored returns nil for a nil
// tool.
func (t *Tool) Stored() *Tool {
	if t == nil {
		return nil
	}
	return &Tool{
		Kind:          canon(t.Kind),
		Source:        canon(t.Source),
		Deps:          canon(t.Deps),
		Bundle:        canon(t.Bundle),
		Bundler:       canon(t.Bundler),
		UVLock:        canon(t.UVLock),
		Interpreter:   canon(t.Interpreter),
		ServerName:    canon(t.ServerName),
		ServerVersion: canon(t.ServerVersion),
		HashedFields:  normalFields(t.HashedFields),
		Served:        storedMap(t.Served, canon),
		Definitions:   storedMap(t.Definitions, canonJSON),
		Card:          canon(t.Card),
		CardName:      canon(t.CardName),
		CardVersion:   canon(t.CardVersion),
		CardJSON:      canonJSON(t.CardJSON),
	}
}

// Keeps reports whether the lockfile stores s as it is: valid UTF-8 in
// normal form C (NFC), as HCL reads every string back.
func Keeps(s string) bool {
	return canon(s) == s
}

// Canonical returns s as the lockfile stores it.
func Canonical(s string) string {
	return canon(s)
}

// storedMap is m as the lockfile stores it: keys and values canonical,
// entries without a value left out (of keys that are the same once
// canonical, the one Bytes writes), nil when none is left.
func storedMap(m map[string]string, value func(string) string) map[string]string {
	var out map[string]string
	for _, e := range entries(m, func(s string) bool { return s == "" }) {
		if out == nil {
			out = make(map[string]string, len(m))
		}
		out[canon(e.name)] = value(e.value)
	}
	return out
}
