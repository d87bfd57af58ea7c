package acp

import (
	"context"
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine/store"
)

// UnstableForkSession is session/fork (unstable ACP): the session — its
// conversation, transcript, mode, model and thought level — copied under
// a new id at its current end, opened, and stored; the fork and the
// original go on independently, and both are listed and can be loaded.
// The fork's title is the original's with " (fork)".
func (a *Agent) UnstableForkSession(ctx context.Context, p sdk.UnstableForkSessionRequest) (sdk.UnstableForkSessionResponse, error) {
	b, err := a.builder()
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, err
	}
	// A session is forked in its own workspace only, as it is loaded.
	open, rec, err := a.stored(p.SessionId, p.Cwd)
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, err
	}
	if open != nil {
		rec = open.engine.Record()
	}
	fork := *rec
	fork.ID = store.NewID()
	if fork.Title != "" {
		fork.Title += " (fork)"
	}
	var mcp []sdk.McpServer
	if len(p.McpServers) > 0 { // the same JSON shape under another name
		raw, _ := json.Marshal(p.McpServers)
		if err := json.Unmarshal(raw, &mcp); err != nil {
			return sdk.UnstableForkSessionResponse{}, invalid("mcpServers: " + err.Error())
		}
	}
	s, err := a.open(ctx, b, sdk.SessionId(fork.ID), p.Cwd, p.AdditionalDirectories, &fork, mcp)
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, err
	}
	s.save()
	a.log.Info("session forked", "from", p.SessionId, "session", fork.ID)
	var opts []sdk.UnstableSessionConfigOption
	raw, _ := json.Marshal(s.configOptions(ctx))
	json.Unmarshal(raw, &opts)
	return sdk.UnstableForkSessionResponse{SessionId: s.id, Modes: modeState(s.policy.Mode()), ConfigOptions: opts}, nil
}
