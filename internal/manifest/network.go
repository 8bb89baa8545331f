package manifest

import (
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"golang.org/x/net/http/httpguts"
)

// Network is the top-level network block: the egress policy for tools
// that make HTTP requests. Without it, tools have no network.
type Network struct {
	UserAgent String
	Headers   Dynamic
	Limits    *NetworkLimits
	Policy    *NetworkPolicy
	DeclRange hcl.Range
}

// NetworkLimits bounds outgoing requests.
type NetworkLimits struct {
	ConnectTimeoutMS Int
	ReadTimeoutMS    Int
	RequestTimeoutMS Int
	MaxRedirects     Int
	MaxResponseBytes Int
	ConcurrencyLimit Int
	DeclRange        hcl.Range
}

// NetworkPolicy says which requests are allowed.
type NetworkPolicy struct {
	AllowLoopback  Bool
	AllowPrivate   Bool
	AllowLinkLocal Bool
	// Methods, when set, restricts the HTTP methods.
	Methods StringList
	// Allow lists URL patterns; empty means unrestricted.
	Allow     []URLPattern
	AllowSet  bool
	DeclRange hcl.Range
}

// URLPattern is one allow entry: each component is a pattern and may be
// empty (matches anything).
type URLPattern struct {
	Protocol string `json:"protocol,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	Port     string `json:"port,omitempty"`
	Pathname string `json:"pathname,omitempty"`
}

var httpMethods = []string{"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}

func (d *decoder) decodeNetwork(b *hcl.Block) *Network {
	n := &Network{DeclRange: b.DefRange}
	content, diags := d.content(b.Body, &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "user_agent"}, {Name: "headers"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "limits"}, {Type: "policy"}},
	})
	d.add(diags)
	if content == nil {
		return n
	}
	n.UserAgent = d.str(content.Attributes, field{name: "user_agent", runtime: true}, "")
	d.checkHeaderValue(n.UserAgent, "user_agent")
	if attr, ok := content.Attributes["headers"]; ok {
		if v, _ := d.eval(attr.Expr); v != cty.NilVal {
			if _, isRef := refFromValue(v); isRef {
				n.Headers = Dynamic{Value: v, Set: true, Range: attr.Expr.Range()}
			} else {
				n.Headers = d.stringMap(content.Attributes, field{name: "headers", runtime: true})
				d.checkHeaders(attr, n.Headers)
			}
		}
	}
	if lb := d.singleBlock(content.Blocks, "limits"); lb != nil {
		names := []string{"concurrency_limit", "connect_timeout_ms", "max_redirects", "max_response_bytes", "read_timeout_ms", "request_timeout_ms"}
		var schema hcl.BodySchema
		for _, name := range names {
			schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: name})
		}
		lc, diags := d.content(lb.Body, &schema)
		d.add(diags)
		n.Limits = &NetworkLimits{DeclRange: lb.DefRange}
		if lc != nil {
			num := func(name string, min int64) Int {
				return d.integer(lc.Attributes, field{name: name, runtime: true, min: min, max: 1 << 40}, 0)
			}
			n.Limits.ConnectTimeoutMS = num("connect_timeout_ms", 1)
			n.Limits.ReadTimeoutMS = num("read_timeout_ms", 1)
			n.Limits.RequestTimeoutMS = num("request_timeout_ms", 1)
			n.Limits.MaxRedirects = num("max_redirects", 0)
			if !n.Limits.MaxRedirects.Set {
				n.Limits.MaxRedirects.Value = 5
			}
			n.Limits.MaxResponseBytes = num("max_response_bytes", 1)
			n.Limits.ConcurrencyLimit = num("concurrency_limit", 1)
		}
	}
	if pb := d.singleBlock(content.Blocks, "policy"); pb != nil {
		n.Policy = d.decodeNetworkPolicy(pb)
	}
	return n
}

var urlPatternFields = []string{"hostname", "pathname", "port", "protocol"}

func (d *decoder) decodeNetworkPolicy(b *hcl.Block) *NetworkPolicy {
	p := &NetworkPolicy{DeclRange: b.DefRange}
	content, diags := d.content(b.Body, &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "methods"}, {Name: "allow"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "addresses"}},
	})
	d.add(diags)
	if content == nil {
		return p
	}
	p.Methods = d.strList(content.Attributes, field{name: "methods", runtime: true, oneOf: httpMethods})
	if ab := d.singleBlock(content.Blocks, "addresses"); ab != nil {
		ac, diags := d.content(ab.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
			{Name: "allow_loopback"}, {Name: "allow_private"}, {Name: "allow_link_local"},
		}})
		d.add(diags)
		if ac != nil {
			p.AllowLoopback = d.boolean(ac.Attributes, field{name: "allow_loopback", runtime: true}, false)
			p.AllowPrivate = d.boolean(ac.Attributes, field{name: "allow_private", runtime: true}, false)
			p.AllowLinkLocal = d.boolean(ac.Attributes, field{name: "allow_link_local", runtime: true}, false)
		}
	}
	attr, ok := content.Attributes["allow"]
	if !ok {
		return p
	}
	p.AllowSet = true
	v, _, ok := d.runtimeArg(attr, field{name: "allow"})
	if !ok {
		return p
	}
	if !v.Type().IsTupleType() && !v.Type().IsListType() {
		d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			"The \"allow\" argument is a list of URL patterns, like [{ protocol = \"https\", hostname = \"api.example.com\" }]; got %s.", friendly(v))
		return p
	}
	ranges := elemRanges(attr.Expr, v.LengthInt())
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		if !ev.Type().IsObjectType() {
			d.errorf(ranges[i], "Invalid URL pattern", "Entry %d of \"allow\" must be an object with any of %s.", i+1, quotedList(urlPatternFields))
			continue
		}
		var pat URLPattern
		valid := true
		for name := range ev.Type().AttributeTypes() {
			if !slices.Contains(urlPatternFields, name) {
				d.errorf(keyRange(exprAt(attr.Expr, i), name), "Invalid URL pattern", "Entry %d of \"allow\" has %q; a URL pattern has only %s.%s", i+1, name, quotedList(urlPatternFields), didYouMean(name, urlPatternFields))
				valid = false
				continue
			}
			sv, err := convert.Convert(ev.GetAttr(name), cty.String)
			if err != nil || sv.IsNull() {
				d.errorf(ranges[i], "Invalid URL pattern", "The %q of entry %d of \"allow\" must be a string.", name, i+1)
				valid = false
				continue
			}
			switch name {
			case "protocol":
				pat.Protocol = sv.AsString()
			case "hostname":
				pat.Hostname = sv.AsString()
			case "port":
				pat.Port = sv.AsString()
			case "pathname":
				pat.Pathname = sv.AsString()
			}
		}
		for _, c := range []struct{ name, value string }{{"protocol", pat.Protocol}, {"hostname", pat.Hostname}, {"port", pat.Port}} {
			err := CheckURLPatternPart(c.name, c.value)
			if err == nil {
				err = neverMatchingPart(c.name, c.value)
			}
			if err != nil {
				d.errorf(subRange(exprAt(attr.Expr, i), c.name), "Invalid URL pattern", "In entry %d of \"allow\", %s.", i+1, err)
				valid = false
			}
		}
		if valid {
			p.Allow = append(p.Allow, pat)
		}
	}
	return p
}

// CheckURLPatternPart checks one part of a network allow pattern as
// agentform serve reads it: a protocol is a URL scheme pattern (with or
// without its trailing ":"), a literal port a port number, and a hostname
// has no character that ends a host in a URL. It returns nil for the
// other parts (pathname) and for an empty value, which matches anything.
func CheckURLPatternPart(name, value string) error {
	switch name {
	case "protocol":
		for _, c := range strings.TrimSuffix(value, ":") {
			if !(c == '*' || c == ':' || c == '_' || c == '+' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return fmt.Errorf("the protocol %q is not a URL scheme pattern, like \"https\"", value)
			}
		}
	case "port":
		if value != "" && !strings.ContainsAny(value, "*:") {
			if n, err := strconv.Atoi(value); err != nil || n < 0 || n > 65535 {
				return fmt.Errorf("the port %q is not a port number (0 to 65535)", value)
			}
		}
	case "hostname":
		if strings.ContainsAny(value, "/?#@") {
			return fmt.Errorf("the hostname %q has characters a hostname cannot have (put a path in pathname)", value)
		}
	}
	return nil
}

// Filesystem is the top-level filesystem block: what tools see as their
// filesystem, as a list of mounts.
type Filesystem struct {
	Mounts    []Mount
	DeclRange hcl.Range
}

// Mount places a backend at a path of the tool's filesystem.
type Mount struct {
	Path    string   `json:"path"`
	Backend *Backend `json:"backend"`
}

// Backend is a filesystem backend: memory, host (a host directory),
// read_only (wrapping another backend) or overlay (upper over lower).
type Backend struct {
	Kind           string   `json:"kind"`
	Root           string   `json:"root,omitempty"`
	FollowSymlinks bool     `json:"follow_symlinks,omitempty"`
	Inner          *Backend `json:"inner,omitempty"`
	Upper          *Backend `json:"upper,omitempty"`
	Lower          *Backend `json:"lower,omitempty"`
}

var backendFields = map[string][]string{
	"memory":    {"kind"},
	"host":      {"follow_symlinks", "kind", "root"},
	"read_only": {"inner", "kind"},
	"overlay":   {"kind", "lower", "upper"},
}

func (d *decoder) decodeFilesystem(b *hcl.Block) *Filesystem {
	fs := &Filesystem{DeclRange: b.DefRange}
	content, diags := d.content(b.Body, &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "mounts", Required: true}}})
	d.add(diags)
	if content == nil || diags.HasErrors() {
		return fs
	}
	attr := content.Attributes["mounts"]
	v, _, ok := d.runtimeArg(attr, field{name: "mounts"})
	if !ok {
		return fs
	}
	if !v.Type().IsTupleType() && !v.Type().IsListType() {
		d.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			"The \"mounts\" argument is a list of { path, backend } objects; got %s.", friendly(v))
		return fs
	}
	ranges := elemRanges(attr.Expr, v.LengthInt())
	// Each path mounted once: which of two mounts of one path counts is
	// for nobody to guess (and the audit would judge the first).
	type mountAt struct {
		n   int
		rng hcl.Range
	}
	seen := map[string]mountAt{}
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		rng := ranges[i]
		if !ev.Type().IsObjectType() || !ev.Type().HasAttribute("path") || !ev.Type().HasAttribute("backend") {
			d.errorf(rng, "Invalid mount", "Mount %d must be an object with \"path\" and \"backend\", like { path = \"/\", backend = { kind = \"memory\" } }.", i+1)
			continue
		}
		for name := range ev.Type().AttributeTypes() {
			if name != "path" && name != "backend" {
				d.errorf(rng, "Invalid mount", "Mount %d has %q; a mount has only \"path\" and \"backend\".", i+1, name)
			}
		}
		pv, err := convert.Convert(ev.GetAttr("path"), cty.String)
		if err != nil || pv.IsNull() || len(pv.AsString()) == 0 || pv.AsString()[0] != '/' {
			d.errorf(subRange(attr.Expr, i, "path"), "Invalid mount", "The path of mount %d must be an absolute path inside the tool's filesystem, like \"/data\".", i+1)
			continue
		}
		prng := subRange(attr.Expr, i, "path")
		clean := path.Clean(pv.AsString())
		if prev, dup := seen[clean]; dup {
			d.errorf(prng, "Duplicate mount", "Mount %d mounts %q, which mount %d (at %s) mounts already. Mount each path once: remove one, or give it another path.", i+1, clean, prev.n, prev.rng)
			continue
		}
		seen[clean] = mountAt{i + 1, prng}
		be := d.decodeBackend(exprAt(attr.Expr, i, "backend"), ev.GetAttr("backend"), fmt.Sprintf("mount %d", i+1))
		if be != nil {
			fs.Mounts = append(fs.Mounts, Mount{Path: pv.AsString(), Backend: be})
		}
	}
	return fs
}

func (d *decoder) decodeBackend(expr hcl.Expression, v cty.Value, where string) *Backend {
	rng := expr.Range()
	kinds := sortedKeys(backendFields)
	if v.IsNull() || !v.Type().IsObjectType() || !v.Type().HasAttribute("kind") {
		d.errorf(rng, "Invalid filesystem backend", "The backend of %s must be an object with a kind: %s.", where, quotedList(kinds))
		return nil
	}
	kv, err := convert.Convert(v.GetAttr("kind"), cty.String)
	if err != nil || kv.IsNull() {
		d.errorf(rng, "Invalid filesystem backend", "The kind of the backend of %s must be a string.", where)
		return nil
	}
	be := &Backend{Kind: kv.AsString()}
	allowed, ok := backendFields[be.Kind]
	if !ok {
		d.errorf(subRange(expr, "kind"), "Invalid filesystem backend", "%q is not a backend kind. Valid kinds: %s.%s", be.Kind, quotedList(kinds), didYouMean(be.Kind, kinds))
		return nil
	}
	for name := range v.Type().AttributeTypes() {
		if !slices.Contains(allowed, name) {
			d.errorf(rng, "Invalid filesystem backend", "A %s backend (in %s) has no %q; it takes %s.", be.Kind, where, name, quotedList(allowed))
			return nil
		}
	}
	str := func(name string) (string, bool) {
		sv, err := convert.Convert(v.GetAttr(name), cty.String)
		if err != nil || sv.IsNull() {
			d.errorf(rng, "Invalid filesystem backend", "The %q of the %s backend in %s must be a string.", name, be.Kind, where)
			return "", false
		}
		return sv.AsString(), true
	}
	nested := func(name string) *Backend {
		if !v.Type().HasAttribute(name) {
			d.errorf(rng, "Invalid filesystem backend", "A %s backend (in %s) needs %q.", be.Kind, where, name)
			return nil
		}
		return d.decodeBackend(exprAt(expr, name), v.GetAttr(name), where)
	}
	switch be.Kind {
	case "host":
		if !v.Type().HasAttribute("root") {
			d.errorf(rng, "Invalid filesystem backend", "A host backend (in %s) needs root, the host directory it exposes.", where)
			return nil
		}
		if be.Root, ok = str("root"); !ok {
			return nil
		}
		if v.Type().HasAttribute("follow_symlinks") {
			bv, err := convert.Convert(v.GetAttr("follow_symlinks"), cty.Bool)
			if err != nil || bv.IsNull() {
				d.errorf(rng, "Invalid filesystem backend", "follow_symlinks (in %s) must be true or false.", where)
				return nil
			}
			be.FollowSymlinks = bv.True()
		}
	case "read_only":
		if be.Inner = nested("inner"); be.Inner == nil {
			return nil
		}
	case "overlay":
		if be.Upper = nested("upper"); be.Upper == nil {
			return nil
		}
		if be.Lower = nested("lower"); be.Lower == nil {
			return nil
		}
	}
	return be
}

// neverMatchingPart reports a part of an allow pattern that passes
// CheckURLPatternPart but that no URL can match, as serve compares it: a
// hostname that ends in a port ("api.example.com:443"; a URL's hostname
// never holds one) and a literal port not written as URLs write it
// ("0443", "+443": serve compares ports as text). serve leaves such a
// pattern in (an artifact built before this check still starts), where it
// allows nothing.
func neverMatchingPart(name, value string) error {
	switch name {
	case "hostname":
		host, port, ok := strings.Cut(value, ":")
		if !ok || strings.HasPrefix(value, "[") || port == "" || strings.ContainsFunc(port, func(r rune) bool { return r < '0' || r > '9' }) {
			return nil
		}
		if _, err := netip.ParseAddr(value); err == nil {
			return nil // an IPv6 address written without brackets
		}
		return fmt.Errorf("the hostname %q holds a port, which a URL's hostname never does, so the pattern would match no URL; write the port apart: { hostname = %q, port = %q }", value, host, port)
	case "port":
		if value == "" || strings.ContainsAny(value, "*:") {
			return nil
		}
		if n, err := strconv.Atoi(value); err == nil && strconv.Itoa(n) != value {
			return fmt.Errorf("the port %q is compared as written, so the pattern would match no URL of port %d; write %q", value, n, strconv.Itoa(n))
		}
	}
	return nil
}

// checkHeaders reports the headers written in the manifest that no HTTP
// request can carry, by the rules net/http applies: a name that is not an
// HTTP token (a space, a colon, a line break), a value with a line break,
// NUL or other control character, at the name or the value. A runtime()
// value is checked where it is read (plan, serve), like the default of
// one here. Values are not quoted: a header may hold a credential.
func (d *decoder) checkHeaders(attr *hcl.Attribute, h Dynamic) {
	if attr == nil || h.Value == cty.NilVal || h.Value.IsNull() || !h.Value.CanIterateElements() {
		return
	}
	if _, isRef := refFromValue(h.Value); isRef {
		return
	}
	for it := h.Value.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		name := k.AsString()
		if !httpguts.ValidHeaderFieldName(name) {
			d.errorf(keyRange(attr.Expr, name), "Invalid HTTP header name",
				"%q is not a valid HTTP header name: a name is letters, digits and !#$%%&'*+-.^_`|~, without spaces, a colon or a line break, like \"X-Api-Key\".%s", name, headerNameHint(name))
			continue
		}
		value, where, what := "", subRange(attr.Expr, name), "The value of header %q"
		if ref, ok := refFromValue(ev); ok {
			if !ref.HasDefault() {
				continue
			}
			dv, err := convert.Convert(ref.Default, cty.String)
			if err != nil || dv.IsNull() {
				continue
			}
			value, what = dv.AsString(), fmt.Sprintf("The default of runtime(%q) for header %%q", ref.Env)
		} else if sv, err := convert.Convert(ev, cty.String); err == nil && !sv.IsNull() {
			value = sv.AsString()
		}
		if !httpguts.ValidHeaderFieldValue(value) {
			d.errorf(where, "Invalid HTTP header value",
				what+" is not a valid HTTP header value: it holds a line break, a NUL or another control character. Write it as a quoted string on one line (a heredoc ends with a line break).", name)
		}
	}
}

// headerNameHint says how to fix a header name written as a whole header
// line ("Authorization: Bearer x") or with spaces ("Api Key").
func headerNameHint(name string) string {
	if before, _, ok := strings.Cut(name, ":"); ok && httpguts.ValidHeaderFieldName(strings.TrimSpace(before)) {
		return fmt.Sprintf(" Write the name alone as the key and the rest as the value: { %q = \"...\" }.", strings.TrimSpace(before))
	}
	if f := strings.Fields(name); len(f) > 1 {
		if joined := strings.Join(f, "-"); httpguts.ValidHeaderFieldName(joined) {
			return fmt.Sprintf(" Did you mean %q?", joined)
		}
	}
	return ""
}

// checkHeaderValue reports a string argument sent in a header (auth_token,
// user_agent) that no HTTP request can carry, without quoting it.
func (d *decoder) checkHeaderValue(s String, name string) {
	value, rng, what := s.Value, s.Range, fmt.Sprintf("The %q argument", name)
	switch {
	case s.literal():
	case s.Runtime != nil && s.Runtime.HasDefault():
		dv, err := convert.Convert(s.Runtime.Default, cty.String)
		if err != nil || dv.IsNull() {
			return
		}
		value, rng, what = dv.AsString(), s.Runtime.Range, fmt.Sprintf("The default of runtime(%q) for %q", s.Runtime.Env, name)
	default:
		return
	}
	if !httpguts.ValidHeaderFieldValue(value) {
		d.errorf(rng, fmt.Sprintf("Invalid value for %q", name),
			"%s is sent in an HTTP header, but it holds a line break, a NUL or another control character. Write it as a quoted string on one line (a heredoc ends with a line break).", what)
	}
}
