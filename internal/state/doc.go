// Package state is agentform's state database: the record of what the last
// apply produced, kept in one bbolt file at <workspace>/.agentform/state.db.
//
// The database holds four buckets, and a fifth while an apply is under way:
//
//	meta       format_version ("1"), lineage (a uuid set at the first commit and
//	           never changed), serial (uint64, big-endian, +1 per commit),
//	           tools (JSON list of the registered tools as applied, the
//	           matrix's columns; absent before the first commit and in
//	           databases written before it existed)
//	resources  address ("tool.adder", "skill.x", "agent.assistant") → JSON Resource
//	matrix     agent name → JSON list of the tools the agent may call as applied
//	history    serial (8 bytes, big-endian) → JSON HistoryEntry
//	pending    artifact path → "sha256:<hex>[ sha256:<hex>...]": artifacts an apply is about to
//	           write that state does not own yet, or will remove after its
//	           commit, with the digests of their bytes (several when
//	           interrupted applies wrote different bytes to one path)
//	           (SetPending, Commit.Pending); absent when nothing is pending,
//	           and in databases written before it existed
//
// Every write (Commit, Remove, SetPending) is one bbolt transaction: it replaces the
// records, appends the history entry and bumps the serial together, so a
// reader sees either the old state or the new one, and a process killed in the
// middle of a write leaves the previous state intact. These invariants hold
// after every transaction and readers rely on them:
//
//   - the serial equals the number of history entries, and history keys run
//     1..serial;
//   - the lineage is empty exactly when the serial is 0;
//   - every resource is stored under its own Address.
//
// Locking is bbolt's: a writer holds an exclusive flock on state.db for as
// long as it is open, readers share a flock, and Open waits at most
// Options.LockTimeout for it. While a writer holds the database it records
// who it is in .agentform/state.db.lock.info so that a process that cannot get
// the lock can say who holds it (see LockError). The lock info is advisory: the
// flock is the lock.
package state
