package main

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// TestACPStress drives one `mm acp` from eight goroutines for a few
// seconds with prompts, set_mode, cancel and close on three sessions at
// once (a closed one is replaced), each turn running a tool and saving
// the session. Every request is answered, mm still serves afterwards, and
// it exits 0 at EOF — under -race (CI), the binary is built with the race
// detector, which makes a data race exit 66.
func TestACPStress(t *testing.T) {
	t.Parallel()
	w := newWorldOn(t, llmtest.NewServer(llmtest.Scenario{Loop: true, Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{bashCall("echo hi")}},
		{Content: "done"},
	}}), "XDG_STATE_HOME="+t.TempDir())
	ctx := w.ctx
	p := w.serve(acptest.Options{})
	var modes []sdk.SessionModeId
	open := func() sdk.SessionId {
		s := p.Open(ctx, sdk.NewSessionRequest{Cwd: w.dir})
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
						_, err := p.Conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("go")}})
						return err
					})
				case n < 13:
					answered("session/set_mode", func(ctx context.Context) error {
						_, err := p.Conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: modes[rng.IntN(len(modes))]})
						return err
					})
				case n < 19:
					p.Conn.Cancel(ctx, sdk.CancelNotification{SessionId: id})
				default:
					answered("session/close", func(ctx context.Context) error {
						_, err := p.Conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: id})
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
	if resp, err := p.Prompt(ctx, open(), "still there?"); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("after the storm: %+v, %v", resp, err)
	}
	p.CloseInput()
	if err := p.WaitExit(); err != nil {
		t.Fatalf("mm exited with %v at EOF (66: the race detector found a data race; see stderr)", err)
	}
}
