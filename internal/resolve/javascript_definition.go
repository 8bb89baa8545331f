package resolve

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// JavaScriptDefinition reads the tool object a bundle exports under
// export, as plan read it when it bundled the tool: its description ("" when
// it has none, and the block's own was used) and its parameters, as
// canonical JSON. Evaluation, when reading the bundle's syntax is not
// enough, is bounded by timeout and has no I/O, as at plan time. serve and
// verify compare agent.json's text with it, so that an edited agent.json
// cannot tell a model something other than the pinned code says.
func JavaScriptDefinition(ctx context.Context, bundle []byte, export string, timeout time.Duration) (description string, parameters json.RawMessage, err error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	pkg := &jsPackage{rel: "the bundle"}
	tool, diags, read := jsReadScript(ctx, bundle, pkg, export, timeout, nil, nil)
	if !read {
		cjs, d := jsCommonJS(pkg, &jsBuilt{bundle: bundle}, nil)
		if d.HasErrors() {
			return "", nil, diagsError(d)
		}
		tool, diags = jsReadTool(ctx, cjs, nil, pkg, export, timeout, nil, nil)
	}
	if diags.HasErrors() {
		return "", nil, diagsError(diags)
	}
	return tool.description, tool.parameters, nil
}

// diagsError joins the errors of diags into one error.
func diagsError(diags hcl.Diagnostics) error {
	var msgs []string
	for _, d := range diags.Errs() {
		var hd *hcl.Diagnostic
		if errors.As(d, &hd) {
			msgs = append(msgs, hd.Summary+": "+hd.Detail)
		} else {
			msgs = append(msgs, d.Error())
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}
