package resolve

import (
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"golang.org/x/net/http/httpguts"

	"github.com/agentform/agentform/internal/manifest"
)

// headerProblem reports a header of an mcp or a2a block that no HTTP
// request can carry, as net/http would refuse it: a name that is not an
// HTTP token or a value with a line break, NUL or other control character.
// The manifest refuses those written in it; this finds the ones a
// runtime() value brings, at the headers argument (the request would
// otherwise fail at the url). No value is quoted: it may be a secret.
// values holds the headers read, as Request.StringMap returns them.
func headerProblem(headers manifest.Dynamic, values map[string]string) *hcl.Diagnostic {
	envs := map[string]string{}
	if headers.Value != cty.NilVal && !headers.Value.IsNull() && headers.Value.CanIterateElements() {
		for it := headers.Value.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			if ref, ok := refOf(ev); ok {
				envs[k.AsString()] = ref.Env
			}
		}
	}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var detail string
		switch {
		case !httpguts.ValidHeaderFieldName(name):
			detail = fmt.Sprintf("%q is not a valid HTTP header name: a name is letters, digits and !#$%%&'*+-.^_`|~, without spaces or a colon. Fix the name in headers.", name)
		case !httpguts.ValidHeaderFieldValue(values[name]):
			if env, ok := envs[name]; ok {
				detail = fmt.Sprintf("The value of header %q, given by runtime(%q), is not a valid HTTP header value: it holds a line break, a NUL or another control character (the value is not shown). Set %s to a value on one line.", name, env, env)
			} else {
				detail = fmt.Sprintf("The value of header %q is not a valid HTTP header value: it holds a line break, a NUL or another control character. Fix it in headers.", name)
			}
		default:
			continue
		}
		return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid HTTP header", Detail: detail, Subject: headers.Range.Ptr()}
	}
	return nil
}

// tokenProblem reports an auth_token that cannot be sent in an
// Authorization header, at the auth_token argument, without quoting it.
func tokenProblem(s manifest.String, token string) *hcl.Diagnostic {
	if httpguts.ValidHeaderFieldValue(token) {
		return nil
	}
	detail := "The auth_token is not a valid HTTP header value: it holds a line break, a NUL or another control character (the token is not shown). Write it on one line."
	if r := s.Runtime; r != nil {
		detail = fmt.Sprintf("The auth_token given by runtime(%q) is not a valid HTTP header value: it holds a line break, a NUL or another control character (the token is not shown). Set %s to the token alone, on one line.", r.Env, r.Env)
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid auth_token", Detail: detail, Subject: s.Range.Ptr()}
}
