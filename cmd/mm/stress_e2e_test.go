package main

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// TestACPStress (issue 21) drives one `mm acp` from eight goroutines for
// a few seconds with prompts, set_mode, cancel and close on three
// sessions at once (a closed one is replaced), each turn running a tool
// and saving the session. Every request is answered, mm still serves
// afterwards, and it exits 0 at EOF — under -race (CI), the binary is
// built with the race detector, which makes a data race exit 66.
func TestACPStress(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.Scenario{Loop: true, Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo hi"}}}},
		{Content: "done"},
	}})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir()))
	ctx := testenv.Context(t)
	drained := make(chan struct{})
	defer close(drained)
	go func() { // the test client counts permission questions on a small channel
		for {
			select {
			case <-p.client.asked:
			case <-drained:
				return
			}
		}
	}()
	if _, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	var modes []sdk.SessionModeId
	open := func() sdk.SessionId {
		s, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
		if err != nil {
			t.Fatalf("session/new: %v", err)
		}
		if modes == nil && s.Modes != nil {
			for _, m := range s.Modes.AvailableModes {
				modes = append(modes, m.Id)
			}
		}
		return s.SessionId
	}
	var mu sync.Mutex
	ids := []sdk.SessionId{open(), open(), open()}
	pick := func(rng *rand.Rand) sdk.SessionId {
		mu.Lock()
		defer mu.Unlock()
		return ids[rng.IntN(len(ids))]
	}
	// answered bounds every request: one that never returns is a lost
	// answer, not a slow machine.
	answered := func(what string, call func(ctx context.Context) error) {
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		call(cctx) // errors are answers too (a closed session, a cancelled turn)
		if cctx.Err() != nil {
			t.Errorf("%s was never answered", what)
		}
	}
	stop := time.Now().Add(4 * time.Second)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 21))
			for time.Now().Before(stop) {
				id := pick(rng)
				switch n := rng.IntN(20); {
				case n < 8:
					answered("session/prompt", func(ctx context.Context) error {
						_, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("go")}})
						return err
					})
				case n < 13:
					answered("session/set_mode", func(ctx context.Context) error {
						_, err := p.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: modes[rng.IntN(len(modes))]})
						return err
					})
				case n < 19:
					p.conn.Cancel(ctx, sdk.CancelNotification{SessionId: id})
				default:
					answered("session/close", func(ctx context.Context) error {
						_, err := p.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: id})
						return err
					})
					fresh := open()
					mu.Lock()
					for i := range ids {
						if ids[i] == id {
							ids[i] = fresh
						}
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if resp, err := p.prompt(ctx, open(), "still there?"); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("after the storm: %+v, %v", resp, err)
	}
	p.stdin.Close()
	select {
	case err := <-p.done:
		p.done <- err // for the harness's cleanup
		if err != nil {
			t.Fatalf("mm exited with %v at EOF (66: the race detector found a data race; see stderr)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("mm did not exit at EOF")
	}
}
