// Package manifest turns a workspace's agentc manifest files (*.acl in HCL
// native syntax, *.acl.json in HCL JSON syntax) into a typed Config.
//
// The loader is static: it reads files and nothing else. It never contacts a
// server, runs a program or reads the process environment. Values written as
// runtime("ENV"[, default]) or secret(runtime(...)) are kept as references
// (RuntimeRef) and never evaluated here.
//
// Every problem is reported as an hcl.Diagnostic with the range of the file
// text responsible, so callers can print it the way Terraform does. Loading
// never panics, whatever the input.
package manifest
