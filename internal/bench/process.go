package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// Sample is one run of a child process.
type Sample struct {
	// Wall is the time from starting the process to reaping it.
	Wall time.Duration
	// PeakRSSKiB is the process's peak resident set size in KiB (ru_maxrss,
	// which covers the descendants it waited for), or -1 where the platform
	// does not report it.
	PeakRSSKiB int64
	// CPU is the CPU time the process (and the descendants it waited for)
	// spent, user and system.
	CPU time.Duration
}

// child is a command to run in a directory with extra environment.
type child struct {
	dir  string
	env  []string
	name string
	args []string
	// withStderr makes run return the standard error (where warnings go)
	// after the standard output.
	withStderr bool
}

// run starts the child, waits for it and returns its sample and standard
// output. A non-zero exit is an error wrapping ErrChildFailed with the
// start of its standard error (the end of its standard output when it
// wrote no error).
func (c child) run(ctx context.Context) (Sample, string, error) {
	cmd := exec.CommandContext(ctx, c.name, c.args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		msg := head(stderr.String(), 2000)
		if msg == "" {
			msg = tail(stdout.String(), 2000)
		}
		return Sample{}, stdout.String(), fmt.Errorf("%w: %s: %v\n%s", ErrChildFailed, c, err, msg)
	}
	out := stdout.String()
	if c.withStderr {
		out += stderr.String()
	}
	ps := cmd.ProcessState
	return Sample{Wall: wall, PeakRSSKiB: maxRSSKiB(ps), CPU: ps.UserTime() + ps.SystemTime()}, out, nil
}

// String is the command line, for errors and progress.
func (c child) String() string {
	return strings.Join(append([]string{c.name}, c.args...), " ")
}

// head returns the first n bytes of s.
func head(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Measure is the median of several samples of one command.
type Measure struct {
	// Median is the median wall time.
	Median time.Duration
	// PeakRSSKiB is the median of the runs' peak RSS in KiB, -1 when unknown.
	PeakRSSKiB int64
	// CPU is the median CPU time.
	CPU time.Duration
	// Samples are the runs in the order they ran.
	Samples []Sample
}

// summarise returns the medians of samples, which must not be empty. For
// an even count the median is the mean of the two middle values.
func summarise(samples []Sample) Measure {
	walls := make([]int64, len(samples))
	rss := make([]int64, len(samples))
	cpu := make([]int64, len(samples))
	for i, s := range samples {
		walls[i], rss[i], cpu[i] = int64(s.Wall), s.PeakRSSKiB, int64(s.CPU)
	}
	return Measure{Median: time.Duration(median(walls)), PeakRSSKiB: median(rss), CPU: time.Duration(median(cpu)), Samples: samples}
}

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
