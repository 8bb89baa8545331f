// Package artifact builds, reads and verifies agent artifacts: the
// deterministic gzip'd tar that "agentform apply" writes for each agent
// (dist/<agent>.agent.tgz) and "agentform verify" and "agentform serve"
// read back.
//
// # Layout
//
// An artifact holds only regular files; directories are implied by the
// paths and never stored:
//
//	agent.json                     the resolved agent (Agent, see MarshalAgent)
//	tools/<block>/bundle.js        javascript: the esbuild ESM bundle
//	tools/<block>/src/...          python: package source, pyproject.toml, uv.lock
//	tools/<block>/agent-card.json  a2a: the canonical agent card
//	skills/<skill>/...             SKILL.md and resources
//	SHA256SUMS                     "<hex sha256>  <path>" for every other entry
//
// # Determinism
//
// Build's output depends only on the files given to it (their paths,
// contents and executable bits), never on their order, the time, the time
// zone, the working directory, the umask, the user or GOMAXPROCS:
//
//   - entries are sorted by path (byte order), with SHA256SUMS last;
//   - every entry is a regular file (typeflag '0') with mtime 0 (the Unix
//     epoch), uid and gid 0, empty user and group names, device numbers 0
//     and mode 0644, or 0755 for a file marked executable;
//   - each header is USTAR when its path fits USTAR's name and prefix
//     fields in ASCII, and PAX (with only a "path" record) otherwise, the
//     rule archive/tar applies to a header whose format is left unset;
//   - the tar stream ends with archive/tar's two zero blocks, with no
//     further padding;
//   - the gzip stream is one member whose header has no name, no comment,
//     no extra field, MTIME 0, XFL 0 and OS 255 (unknown), compressed at
//     CompressionLevel (6) by github.com/klauspost/compress.
//
// The uncompressed tar stream is a function of the input alone. The gzip
// bytes are too, for a given version of the compressor (pinned in go.mod;
// it is pure Go, so the machine and GOARCH do not matter): a version that
// compresses differently changes the bytes of artifacts built after it.
// Artifacts already written stay valid, because a plan compares each one
// with the digest the state recorded when it was written, never with a
// rebuild. klauspost/compress rather than compress/flate because it
// compresses agent.json about 1.5 times and esbuild bundles about 4 times
// as fast, for output within 1% and 5% of the size.
//
// # Reading
//
// Read never writes to disk. It rejects, with the sentinel errors below,
// any entry that is not a regular file, unsafe or non-canonical paths,
// duplicates (paths differing only in letter case or Unicode form too, and
// Build refuses those as well), modes other than 0644 and 0755, owners
// other than 0:0, and archives larger than MaxEntries entries or MaxBytes of
// decompressed tar stream (headers included), so a gzip bomb stops after
// MaxBytes bytes of output. Verify then checks SHA256SUMS, agent.json's
// own digests against the files beside it, and, given a lockfile, the
// digests against the lock.
package artifact
