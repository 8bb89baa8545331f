package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/agentform/agentform/internal/proctree"
)

// exitNow ends agentform at once with a status (a variable for tests).
var exitNow = os.Exit

// interruptSignals are the signals that stop a command: SIGINT, SIGTERM
// and SIGHUP (its terminal closed, an ssh session lost), unless agentform
// was started with SIGHUP ignored (nohup), which then stays ignored.
func interruptSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// interruptContext returns a context that the first SIGINT, SIGTERM or
// SIGHUP cancels, as Terraform does: the command stops gracefully (resolution
// interrupted, calls cancelled, servers closed) and says so on standard
// error with stopping ("Stopping the call"). A second one does not wait
// for that: it kills every process agentform started (their process
// groups and, on Linux, every process descended from agentform) and exits
// at once with status 1. stop restores the default handling of the
// signals; the command calls it as it returns, after its own cleanup, so
// that a second interrupt during that cleanup still exits at once.
func (m *Meta) interruptContext(stopping string) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, interruptSignals()...)
	done := make(chan struct{})
	go func() {
		select {
		case <-signals:
		case <-done:
			return
		}
		fmt.Fprintf(m.Stderr, "Interrupt received. %s; interrupt again to exit at once.\n\n", stopping)
		cancel()
		select {
		case <-signals:
		case <-done:
			return
		}
		fmt.Fprintln(m.Stderr, "Second interrupt received: stopping every process agentform started and exiting at once.")
		proctree.KillTracked()
		exitNow(ExitError)
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(signals)
			close(done)
			cancel()
		})
	}
}
