package acptest

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	sdk "github.com/coder/acp-go-sdk"
)

// terminal is a command the editor runs and shows.
type terminal struct {
	cmd  *exec.Cmd
	out  *Stream
	done chan struct{} // closed when the command exited
}

func (c *client) termCall(what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.termCalls = append(c.termCalls, what)
}

func (c *client) term(id string) (*terminal, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.terms[id]
	if t == nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": "unknown terminal " + id})
	}
	return t, nil
}

// CreateTerminal runs the command for real, in its own process group, as
// an editor does.
func (c *client) CreateTerminal(_ context.Context, r sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	c.termCall("create")
	cmd := exec.Command(r.Command, r.Args...)
	if r.Cwd != nil {
		cmd.Dir = *r.Cwd
	}
	cmd.Env = append([]string(nil), c.env...)
	if c.env == nil {
		cmd.Env = os.Environ()
	}
	for _, e := range r.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	out := &Stream{}
	cmd.Stdout, cmd.Stderr = out, out
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return sdk.CreateTerminalResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	t := &terminal{cmd: cmd, out: out, done: make(chan struct{})}
	go func() { cmd.Wait(); close(t.done) }()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nTerms++
	id := fmt.Sprintf("term-%d", c.nTerms)
	c.terms[id] = t
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (c *client) KillTerminal(_ context.Context, r sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	c.termCall("kill")
	t, err := c.term(r.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	killGroup(t.cmd)
	<-t.done
	return sdk.KillTerminalResponse{}, nil
}

func (c *client) TerminalOutput(_ context.Context, r sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	c.termCall("output")
	t, err := c.term(r.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	resp := sdk.TerminalOutputResponse{Output: t.out.String()}
	select {
	case <-t.done:
		resp.ExitStatus = exitStatus(t.cmd.ProcessState)
	default:
	}
	return resp, nil
}

func (c *client) ReleaseTerminal(_ context.Context, r sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	c.termCall("release")
	t, err := c.term(r.TerminalId)
	if err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	killGroup(t.cmd)
	c.mu.Lock()
	delete(c.terms, r.TerminalId)
	c.mu.Unlock()
	return sdk.ReleaseTerminalResponse{}, nil
}

func (c *client) WaitForTerminalExit(ctx context.Context, r sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	c.termCall("wait")
	t, err := c.term(r.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	st := exitStatus(t.cmd.ProcessState)
	return sdk.WaitForTerminalExitResponse{ExitCode: st.ExitCode, Signal: st.Signal}, nil
}

func exitStatus(ps *os.ProcessState) *sdk.TerminalExitStatus {
	if sig := signalOf(ps.Sys()); sig != "" {
		return &sdk.TerminalExitStatus{Signal: sdk.Ptr(sig)}
	}
	return &sdk.TerminalExitStatus{ExitCode: sdk.Ptr(ps.ExitCode())}
}

// closeTerminals kills what the agent left running in the editor's
// terminals, as closing an editor does.
func (c *client) closeTerminals() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.terms {
		killGroup(t.cmd)
	}
}
