package acp

import (
	"context"
	"fmt"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/tools"
)

// terminalWait bounds the calls that end a terminal (kill, output,
// release) once the turn is cancelled or timed out.
const terminalWait = 5 * time.Second

// RunInTerminal runs a command in the editor's terminal when the client
// advertised `terminal`: the tool call shows it live, mm waits for
// its exit (killing it at the timeout or on cancel), reads its output and
// releases it. Without the capability it answers tools.ErrNoTerminal and
// the command runs locally.
func (e *editorEnv) RunInTerminal(ctx context.Context, c tools.Command) (tools.Exit, error) {
	conn := e.s.agent.connection()
	if !e.terminal || conn == nil {
		return tools.Exit{}, tools.ErrNoTerminal
	}
	// env -u drops what the policy drops (the terminal starts from the
	// editor's environment, which mm cannot edit), then runs bash — under
	// the sandbox's helper when there is one.
	args := []string{}
	for _, name := range c.Unset {
		args = append(args, "-u", name)
	}
	args = append(append(args, c.Wrap...), "bash", "-o", "pipefail", "-c", c.Line)
	req := sdk.CreateTerminalRequest{
		SessionId: e.s.id,
		Command:   "env",
		Args:      args,
		Cwd:       sdk.Ptr(c.Dir),
		Env:       []sdk.EnvVariable{},
	}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		req.Env = append(req.Env, sdk.EnvVariable{Name: k, Value: v})
	}
	if c.OutputLimit > 0 {
		req.OutputByteLimit = sdk.Ptr(c.OutputLimit)
	}
	created, err := conn.CreateTerminal(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Exit{}, ctx.Err()
		}
		e.s.agent.log.Warn("terminal/create failed; running the command in mm", "err", err)
		return tools.Exit{}, fmt.Errorf("%w: terminal/create: %v", tools.ErrNoTerminal, err)
	}
	id := created.TerminalId
	done := context.WithoutCancel(ctx)
	defer func() {
		rctx, cancel := e.s.agent.ending(done)
		defer cancel()
		if _, err := conn.ReleaseTerminal(rctx, sdk.ReleaseTerminalRequest{SessionId: e.s.id, TerminalId: id}); err != nil {
			e.s.agent.log.Debug("terminal/release failed", "terminal", id, "err", err)
		}
	}()
	if c.CallID != "" {
		e.s.showTerminal(c.CallID, id)
		e.s.update(done, sdk.UpdateToolCall(sdk.ToolCallId(c.CallID), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(id)})))
	}

	wctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	exit, werr := conn.WaitForTerminalExit(wctx, sdk.WaitForTerminalExitRequest{SessionId: e.s.id, TerminalId: id})
	timedOut := werr != nil && ctx.Err() == nil && wctx.Err() != nil
	if werr != nil {
		kctx, cancel := e.s.agent.ending(done)
		if _, err := conn.KillTerminal(kctx, sdk.KillTerminalRequest{SessionId: e.s.id, TerminalId: id}); err != nil {
			e.s.agent.log.Warn("terminal/kill failed", "terminal", id, "err", err)
		}
		cancel()
		if ctx.Err() != nil {
			return tools.Exit{}, ctx.Err()
		}
		if !timedOut {
			return tools.Exit{}, fmt.Errorf("terminal/wait_for_exit: %w", werr)
		}
	}
	octx, ocancel := e.s.agent.ending(done)
	defer ocancel()
	out, err := conn.TerminalOutput(octx, sdk.TerminalOutputRequest{SessionId: e.s.id, TerminalId: id})
	if err != nil {
		return tools.Exit{}, fmt.Errorf("terminal/output: %w", err)
	}
	res := tools.Exit{Output: out.Output, Truncated: out.Truncated, TimedOut: timedOut, Code: -1}
	status := out.ExitStatus
	if werr == nil {
		status = &sdk.TerminalExitStatus{ExitCode: exit.ExitCode, Signal: exit.Signal}
	}
	if status != nil {
		if status.ExitCode != nil {
			res.Code = *status.ExitCode
		}
		if status.Signal != nil {
			res.Signal = *status.Signal
		}
	}
	return res, nil
}

// ending bounds a call that ends a terminal: terminalWait, or until stdin
// ended (no answer can come back then).
func (a *Agent) ending(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(parent, terminalWait)
	go func() { // ends with ctx, which the caller cancels when done
		select {
		case <-a.eof:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// showTerminal remembers the terminal of a call, so its final update
// keeps showing it.
func (s *session) showTerminal(callID, terminalID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.terminals == nil {
		s.terminals = map[string]string{}
	}
	s.terminals[callID] = terminalID
}

// terminalOf returns (and forgets) the terminal of a finished call.
func (s *session) terminalOf(callID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.terminals[callID]
	delete(s.terminals, callID)
	return id
}
