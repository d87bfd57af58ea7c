package lsptool

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/mm-agent/mm/lspbridge"
	"github.com/mm-agent/mm/tools"
)

// EditHook adapts a Manager to the edit tools' diagnostics hook
// (files.Options.Diagnostics): Before right before a write, After once it
// is written, whose text is appended to the tool result. It is defined
// here, by shape, so that neither package imports the other.
type EditHook struct {
	Manager *lspbridge.Manager
	// Late receives the diagnostics that come after the edit's result
	// (the session's inbox); nil drops them.
	Late *lspbridge.Late
}

// Before snapshots the diagnostics of path and waits (bounded) until the
// server has the file's current text, so that the write that follows can
// never slip into the baseline.
func (h EditHook) Before(ctx context.Context, path string) any {
	if h.Manager == nil {
		return nil
	}
	snap := h.Manager.Before(ctx, path)
	snap.DeliverLate(h.Late)
	snap.Wait(ctx)
	return snap
}

// After syncs content, waits (bounded) for the server, and returns the
// diagnostics delta of the edit; "" when no server handles path.
func (h EditHook) After(ctx context.Context, before any, path string, content []byte) string {
	snap, _ := before.(*lspbridge.Snapshot)
	if h.Manager == nil || snap == nil {
		return ""
	}
	return h.Manager.AfterChanges(ctx, snap, []lspbridge.Change{{Path: path, Content: content}})
}

// CommandHook decorates a tool that may change files behind the editor's
// back (bash): once it ran, the language servers are told which files of
// their roots changed, so later diagnostics are true, and what the change
// did to the diagnostics is appended to its result, as after an edit —
// what comes after the result goes to Late, as an edit's does.
type CommandHook struct {
	tools.Tool
	Manager *lspbridge.Manager
	// Late receives the diagnostics that come after the command's result
	// (the session's inbox); nil drops them.
	Late *lspbridge.Late
}

// Run runs the tool, then checks what it changed.
func (h CommandHook) Run(ctx context.Context, env tools.Env, args json.RawMessage) (tools.Result, error) {
	start := time.Now()
	res, err := h.Tool.Run(ctx, env, args)
	if err == nil {
		if diag := h.Manager.ChangedSince(ctx, start, h.Late); diag != "" {
			res.Text = strings.TrimRight(res.Text, "\n") + "\n" + diag
		}
	}
	return res, err
}
