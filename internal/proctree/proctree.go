//go:build unix

// Package proctree finds the processes a process started, also those that
// left its process group or session (setsid, start_new_session), so that
// agentform can stop a server's or a runner's whole tree. It reads /proc:
// where there is none (macOS), or where /proc shows another pid namespace
// than agentform's, it finds nothing and callers fall back to killing the
// process group.
package proctree

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ownProc reports whether /proc shows the processes of agentform's own
// pid namespace. In a pid namespace whose /proc was not mounted again
// (unshare --pid --fork without --mount-proc, a sandbox that keeps the
// host's /proc), /proc/PID is not the process agentform knows as PID: its
// parents and start times would be another process's, and the pids found
// would be signalled as agentform's, where they name other processes.
// /proc/self/status lists the pid agentform has in /proc's namespace and
// in each one below it down to its own (NSpid): one, equal to its pid,
// when they are the same. Without NSpid (Linux before 4.1), /proc/self
// must at least name agentform's pid.
var ownProc = sync.OnceValue(func() bool {
	pid := strconv.Itoa(os.Getpid())
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
				f := strings.Fields(rest)
				return len(f) == 1 && f[0] == pid
			}
		}
	}
	self, err := os.Readlink("/proc/self")
	return err == nil && self == pid
})

// Proc is a process as /proc knew it: its pid and its start time, in
// clock ticks since boot, which tells it from a later process given the
// same pid.
type Proc struct {
	Pid   int
	Start uint64
}

// Stat reads the parent and the start time of a process from
// /proc/PID/stat; false when /proc is not of agentform's pid namespace.
func Stat(pid int) (ppid int, start uint64, ok bool) {
	if !ownProc() {
		return 0, 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	// After the command: state ppid pgrp session tty_nr tpgid flags minflt
	// cminflt majflt cmajflt utime stime cutime cstime priority nice
	// num_threads itrealvalue starttime ...
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	return ppid, start, err1 == nil && err2 == nil
}

// Of returns the process pid is now; false without /proc or when there
// is none. Taken while the process cannot have been waited for (its pid
// is still its own), it tells it later from a process given its pid.
func Of(pid int) (Proc, bool) {
	_, start, ok := Stat(pid)
	return Proc{Pid: pid, Start: start}, ok
}

// Descendants returns the processes descended from p as /proc shows them
// now, or none when p is no longer the process it was.
func (p Proc) Descendants() []Proc {
	if _, start, ok := Stat(p.Pid); !ok || start != p.Start {
		return nil
	}
	return Descendants(p.Pid)
}

// parents maps every process /proc lists to its parent, and returns the
// start times beside.
func parents() (map[int]int, map[int]uint64, bool) {
	if !ownProc() {
		return nil, nil, false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil, false
	}
	ppids := make(map[int]int, len(ents))
	starts := make(map[int]uint64, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if ppid, start, ok := Stat(pid); ok {
				ppids[pid], starts[pid] = ppid, start
			}
		}
	}
	return ppids, starts, true
}

// Descendants returns the processes descended from root (not root itself)
// as /proc shows them now. They keep running: a process one of them
// starts after the look is not among them (StopDescendants stops them to
// see every one).
func Descendants(root int) []Proc {
	ppids, starts, ok := parents()
	if !ok {
		return nil
	}
	var out []Proc
	for pid := range ppids {
		if pid != root && descendsFrom(pid, root, ppids) {
			out = append(out, Proc{Pid: pid, Start: starts[pid]})
		}
	}
	return out
}

// StopDescendants stops (SIGSTOP) every process descended from root,
// looking again until a pass finds no new one, and returns their pids.
func StopDescendants(root int) []int {
	seen := map[int]bool{root: true}
	var out []int
	for range 100 {
		ppids, _, ok := parents()
		if !ok {
			break
		}
		found := false
		for pid := range ppids {
			if seen[pid] || !descendsFrom(pid, root, ppids) {
				continue
			}
			seen[pid] = true
			out = append(out, pid)
			_ = syscall.Kill(pid, syscall.SIGSTOP)
			found = true
		}
		if !found {
			break
		}
	}
	return out
}

// Kill kills (SIGKILL) each of procs that is still the process it was:
// same pid, same start time.
func Kill(procs []Proc) {
	for _, p := range procs {
		// The handle first (a pidfd, on Linux), then the check: the
		// signal goes to the process the handle was taken of, so one
		// that took the pid after the check is never hit.
		proc, err := os.FindProcess(p.Pid)
		if err != nil {
			continue
		}
		if _, start, ok := Stat(p.Pid); ok && start == p.Start {
			_ = proc.Signal(syscall.SIGKILL)
		}
		_ = proc.Release()
	}
}

// descendsFrom reports whether root is an ancestor of pid in ppids.
func descendsFrom(pid, root int, ppids map[int]int) bool {
	for range len(ppids) {
		ppid, ok := ppids[pid]
		if !ok || ppid <= 0 {
			return false
		}
		if ppid == root {
			return true
		}
		pid = ppid
	}
	return false
}

// KillTree kills the process p, its process group and every process
// descended from it (found in /proc while p, its group and each
// descendant are stopped, so that none of them starts another unseen).
// start is p's start time from /proc (Stat): once p has been waited for,
// or without /proc, only its group is killed. A process whose parent
// chain to p was broken before (p ended, or it was reparented to init
// before p became a subreaper) is not found.
func KillTree(p *os.Process, start uint64) {
	pid := p.Pid
	_ = syscall.Kill(-pid, syscall.SIGSTOP)
	var tree []int
	if start != 0 && p.Signal(syscall.SIGSTOP) == nil {
		if _, s, ok := Stat(pid); ok && s == start {
			tree = StopDescendants(pid)
		}
	}
	for _, d := range tree {
		_ = syscall.Kill(d, syscall.SIGKILL)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = p.Kill()
}

// tracked are the processes agentform started that lead a process group
// of their own, with their start times (0 without /proc).
var (
	trackedMu sync.Mutex
	tracked   = map[*os.Process]uint64{}
)

// Track records p, a process agentform started as the leader of a
// process group of its own, until the returned function is called (once
// p has been waited for): KillTracked kills it with its group and its
// descendants.
func Track(p *os.Process) (untrack func()) {
	_, start, _ := Stat(p.Pid)
	trackedMu.Lock()
	tracked[p] = start
	trackedMu.Unlock()
	return func() {
		trackedMu.Lock()
		delete(tracked, p)
		trackedMu.Unlock()
	}
}

// KillTracked kills every process Track recorded (KillTree: its group and
// its descendants) and, on Linux, every other process descended from
// agentform found in /proc (one a library started, an MCP server not yet
// connected): for an exit at once (a second interrupt), which must leave
// nothing running.
func KillTracked() {
	trackedMu.Lock()
	procs := make(map[*os.Process]uint64, len(tracked))
	for p, start := range tracked {
		procs[p] = start
	}
	trackedMu.Unlock()
	for p, start := range procs {
		KillTree(p, start)
	}
	self := os.Getpid()
	ppids, _, _ := parents()
	rest := StopDescendants(self)
	for _, pid := range rest {
		if ppids[pid] == self {
			// A child of agentform's: its group too, when it leads one
			// (a pid names no other group while its process lives).
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
