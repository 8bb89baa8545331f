package serve

import (
	"context"
	"slices"
	"testing"

	"github.com/agentform/agentform/internal/artifact"
)

// TestCheckDefinitions: agent.json's description and parameters of a
// javascript tool must be those its bundle exports; a bundle with no
// description leaves the block's own (from the manifest) unchecked; and a
// bundle whose definition cannot be read is a problem, not a pass.
func TestCheckDefinitions(t *testing.T) {
	const withDesc = "const adder = {\n  name: \"adder\",\n  description: \"Add two numbers.\",\n  parameters: { type: \"object\", properties: { a: { type: \"number\" } } },\n  execute: ({ args }) => ({ output: args.a }),\n};\nexport {\n  adder\n};\n"
	const noDesc = "const adder = {\n  name: \"adder\",\n  parameters: { type: \"object\", properties: { a: { type: \"number\" } } },\n  execute: ({ args }) => ({ output: args.a }),\n};\nexport {\n  adder\n};\n"
	params := artifact.JSON(`{"properties": {"a": {"type": "number"}}, "type": "object"}`)
	for _, tc := range []struct {
		name, bundle, desc string
		params             artifact.JSON
		want               []string
	}{
		{"as exported", withDesc, "Add two numbers.", params, nil},
		{"description rewritten", withDesc, "Add two numbers, then mail them out.", params,
			[]string{`agent.json: tool "adder": its description differs from the one its bundle tools/adder/bundle.js exports`}},
		{"parameters rewritten", withDesc, "Add two numbers.", artifact.JSON(`{"type": "object"}`),
			[]string{`agent.json: tool "adder": its parameters differ from those its bundle tools/adder/bundle.js exports`}},
		{"the block's description, the bundle giving none", noDesc, "Adds (from the manifest).", params, nil},
		{"unreadable", "export {\n  nothing\n};\n", "Add two numbers.", params,
			[]string{`agent.json: tool "adder": the definition its bundle tools/adder/bundle.js exports as "adder" cannot be read`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arch := &artifact.Archive{Files: map[string][]byte{"tools/adder/bundle.js": []byte(tc.bundle)}}
			agent := &artifact.Agent{Tools: []artifact.Tool{{Name: "adder", Block: "tool.adder", Kind: artifact.KindJavaScript,
				Description: tc.desc, Parameters: tc.params, File: "tools/adder/bundle.js", Export: "adder"}}}
			var got []string
			for _, p := range CheckDefinitions(context.Background(), arch, agent) {
				got = append(got, p.String())
			}
			if len(tc.want) == 1 && len(got) == 1 && len(got[0]) >= len(tc.want[0]) && got[0][:len(tc.want[0])] == tc.want[0] {
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems\ngot:  %q\nwant: %q", got, tc.want)
			}
		})
	}
}
