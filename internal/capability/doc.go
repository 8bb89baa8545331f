// Package capability implements agentform's capability-tag rules: tag
// validation, tag satisfaction, agent policies and session overrides, and the
// agent × tool permission matrix with per-cell explanations.
//
// A tag is a non-empty string whose namespace segments are separated by
// "::", for example "math", "math::add" or "math::add::fast". A held tag H
// satisfies a required tag R iff R == H or R starts with H + "::", so holding
// "math" satisfies "math::add" but not "mathematics", and holding "math::add"
// does not satisfy "math". The tag "*" is an ordinary literal tag, not a
// wildcard.
//
// An agent may call a tool iff every tag the tool requires is satisfied by
// some tag the agent holds; a tool that requires nothing is always callable.
//
// [Compute] builds a [Matrix] for many agents and tools without comparing
// every held tag with every required tag: required tags are interned, every
// "::"-prefix of a required tag is indexed, and each agent's row is a bitset
// of allowed tools. Explanations for single cells are derived on demand by
// [Matrix.Cell].
package capability
