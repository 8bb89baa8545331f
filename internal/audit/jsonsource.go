package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// jsonDoc is the text of a JSON-syntax manifest file with the place of
// every value. hcl's JSON reader keeps positions for blocks and
// attributes but not for the keys of a free-form object (headers,
// config), and the credential scan must mask the value of one key only.
type jsonDoc struct {
	src  []byte
	root *jsonValue
	// pos finds positions of offsets of src, made on first use.
	pos *posIndex
	// values maps the offset of the start of every value to it.
	values map[int]*jsonValue
	// members maps the offset of the opening quote of every key to its
	// member.
	members map[int]*jsonMember
	// strings lists every string value, in text order.
	strings []*jsonValue
	// err is set when the reader could not follow the text to its end
	// (hcl's reader accepted it); errAt is where it stopped.
	err   error
	errAt int
}

// jsonValue is one JSON value: the bytes [start, end) of the text.
type jsonValue struct {
	start, end int
	// str is the decoded string of a string value.
	str      string
	isString bool
	members  []*jsonMember
	elems    []*jsonValue
}

// jsonMember is one key and value of an object.
type jsonMember struct {
	key      string
	keyStart int
	value    *jsonValue
}

// parseJSONDoc indexes src. A text the reader cannot follow yields the
// values read before the error, and err.
func parseJSONDoc(src []byte) *jsonDoc {
	d := &jsonDoc{src: src, values: map[int]*jsonValue{}, members: map[int]*jsonMember{}}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var prev int
	// next reads a token and returns it with its start offset: between
	// tokens there are only spaces, colons and commas.
	next := func() (json.Token, int, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, prev, err
		}
		end := int(dec.InputOffset())
		start := prev
		for start < end && bytes.IndexByte([]byte(" \t\r\n:,"), src[start]) >= 0 {
			start++
		}
		prev = end
		return tok, start, nil
	}
	var value func(tok json.Token, start int, depth int) (*jsonValue, error)
	value = func(tok json.Token, start int, depth int) (*jsonValue, error) {
		if depth > 1000 {
			return nil, errors.New("too deeply nested")
		}
		v := &jsonValue{start: start}
		d.values[start] = v
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				for dec.More() {
					ktok, kstart, err := next()
					if err != nil {
						return nil, err
					}
					key, ok := ktok.(string)
					if !ok {
						return nil, fmt.Errorf("object key at %d is not a string", kstart)
					}
					vtok, vstart, err := next()
					if err != nil {
						return nil, err
					}
					mv, err := value(vtok, vstart, depth+1)
					if err != nil {
						return nil, err
					}
					m := &jsonMember{key: key, keyStart: kstart, value: mv}
					v.members = append(v.members, m)
					d.members[kstart] = m
				}
			case '[':
				for dec.More() {
					etok, estart, err := next()
					if err != nil {
						return nil, err
					}
					ev, err := value(etok, estart, depth+1)
					if err != nil {
						return nil, err
					}
					v.elems = append(v.elems, ev)
				}
			default:
				return nil, fmt.Errorf("unexpected %q at %d", t, start)
			}
			if _, _, err := next(); err != nil { // the closing delimiter
				return nil, err
			}
		case string:
			v.str, v.isString = t, true
			d.strings = append(d.strings, v)
		}
		v.end = prev
		return v, nil
	}
	tok, start, err := next()
	if err == nil {
		d.root, err = value(tok, start, 0)
	}
	if err != nil {
		d.err, d.errAt = err, prev
	}
	return d
}

// objectAt returns the object whose "{" is at off, or the object value of
// the member whose key starts at off; nil when there is none.
func (d *jsonDoc) objectAt(off int) *jsonValue {
	if v := d.values[off]; v != nil && v.members != nil {
		return v
	}
	if m := d.members[off]; m != nil && m.value.members != nil {
		return m.value
	}
	return nil
}

// valueAt returns the value that starts at off, or the value of the
// member whose key starts at off; nil when there is none.
func (d *jsonDoc) valueAt(off int) *jsonValue {
	if m := d.members[off]; m != nil {
		return m.value
	}
	return d.values[off]
}

// member returns the value of key in object v, or nil.
func (v *jsonValue) member(key string) *jsonValue {
	for _, m := range v.members {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// stringLeaves returns every string inside v, v itself included.
func (v *jsonValue) stringLeaves() []*jsonValue {
	if v.isString {
		return []*jsonValue{v}
	}
	var out []*jsonValue
	for _, m := range v.members {
		out = append(out, m.value.stringLeaves()...)
	}
	for _, e := range v.elems {
		out = append(out, e.stringLeaves()...)
	}
	return out
}
