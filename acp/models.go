package acp

import (
	"context"
	"slices"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
)

// The model picker lists what the server serves (GET /v1/models). Asking
// before answering session/new would make the editor wait on the server:
// a loopback round trip at best, the probe timeout when the server is
// down or still loading. So a session opens with the list last seen (none
// the first time), the server is asked after the answer, and every open
// session whose picker shows another list gets a config_option_update.

// modelList is the served model list last seen, shared by the sessions:
// they all talk to the same server.
type modelList struct {
	mu    sync.Mutex
	list  []string
	shown map[*session][]string // what each session's picker was last sent
}

// offer is the list for s's picker, recorded as shown to s.
func (m *modelList) offer(s *session) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shown == nil {
		m.shown = map[*session][]string{}
	}
	m.shown[s] = m.list
	return m.list
}

// learn records the server's list and returns the sessions among open
// whose picker shows another one.
func (m *modelList) learn(list []string, open []*session) []*session {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.list = list
	var stale []*session
	for _, s := range open {
		if shown, ok := m.shown[s]; ok && !slices.Equal(shown, list) {
			stale = append(stale, s)
		}
	}
	return stale
}

// forget drops a released session.
func (m *modelList) forget(s *session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.shown, s)
}

// fetchModels asks the server for its models through s's builder,
// then updates every open picker that shows another list. It runs after
// an answer, on a goroutine joined by closeAll, or where the user waits
// for a model anyway (choosing one, resuming a session): nil when the
// server cannot say.
func (a *Agent) fetchModels(ctx context.Context, s *session) []string {
	if s.b.Models == nil {
		return nil
	}
	ms, err := s.b.Models(ctx)
	if err != nil {
		a.log.Info("no model picker: the server did not list its models", "err", err)
		return nil
	}
	a.mu.Lock()
	open := make([]*session, 0, len(a.sessions))
	for _, o := range a.sessions {
		open = append(open, o)
	}
	a.mu.Unlock()
	for _, o := range a.models.learn(ms, open) {
		o.update(ctx, sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{
			SessionUpdate: "config_option_update", ConfigOptions: o.configOptions(ctx),
		}})
	}
	return ms
}
