package cli

import (
	"context"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/agentform/agentform/internal/manifest"
	"github.com/agentform/agentform/planner"
)

// planForReport loads, resolves and plans the workspace against its state
// (read-only) for the reporting commands (audit, graph). The plan is
// returned even when it has errors (a drift error is itself a finding);
// it is nil only when the manifest, the lockfile or the state could not be
// read, with the reason in the diagnostics or the error.
func (m *Meta) planForReport(ctx context.Context, rf resolveFlags, lockTimeout time.Duration, operation string) (*manifest.Config, *planner.Plan, *planner.Applied, hcl.Diagnostics, error) {
	lockAhead := m.readLockAhead()
	cfg, diags := m.loadManifest()
	if diags.HasErrors() {
		return cfg, nil, nil, diags, nil
	}
	db, err := m.openState(true, lockTimeout, operation)
	if err != nil {
		return cfg, nil, nil, diags, err
	}
	prior, err := planner.AppliedFromState(db)
	if db != nil {
		db.Close()
	}
	if err != nil {
		return cfg, nil, nil, diags, err
	}
	ws, lock, d := m.resolveWorkspace(ctx, cfg, rf, false, lockAhead)
	diags = append(diags, d...)
	if ws == nil {
		return cfg, nil, prior, diags, nil
	}
	plan := planner.New(ctx, cfg, planner.Options{Resolution: ws, Lock: lock, Applied: prior, LockReadonly: rf.lockMode == "readonly"})
	return cfg, plan, prior, append(diags, plan.Diagnostics...), nil
}
