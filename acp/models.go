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
	for _, o := range a.models.learn(ms, a.openSessions()) {
		o.showOptions(ctx)
	}
	return ms
}

// openSessions are the sessions open now.
func (a *Agent) openSessions() []*session {
	a.mu.Lock()
	defer a.mu.Unlock()
	open := make([]*session, 0, len(a.sessions))
	for _, o := range a.sessions {
		open = append(open, o)
	}
	return open
}

// showOptions sends s's config options as they are now.
func (s *session) showOptions(ctx context.Context) {
	s.update(ctx, sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{
		SessionUpdate: "config_option_update", ConfigOptions: s.configOptions(ctx),
	}})
}

// followServer runs once the user pointed mm at another model server
// (providers/set or disable), before the answer. The open sessions'
// pickers list the former server's models, and a model chosen from that
// list would be sent to a server that does not serve it — Ollama, vLLM
// and LM Studio refuse an unknown model. So the new server is asked for
// its list now; a session whose model it does not serve goes back to the
// server's default, and every picker showing something else is updated.
func (a *Agent) followServer(ctx context.Context) {
	open := a.openSessions()
	var ask *session
	for _, s := range open {
		if s.b.Models != nil {
			ask = s
			break
		}
	}
	if ask == nil {
		// No picker open: forget the former server's list, so that the
		// next session does not open with it (its own ask fills it in).
		a.models.learn(nil, nil)
		return
	}
	ms, err := ask.b.Models(ctx)
	if err != nil {
		// A list that cannot be had now is no list: the pickers drop the
		// model option rather than offer the former server's models; the
		// next session's ask brings them back.
		a.log.Info("the model server chosen did not list its models", "err", err)
		ms = nil
	}
	reset := map[*session]bool{}
	for _, s := range open {
		if m := s.engine.Model(); len(ms) > 0 && m != "" && !slices.Contains(ms, m) {
			a.log.Info("the session's model is not served by the server chosen; using its default", "session", s.id, "model", m)
			s.engine.SetModel("")
			if !s.fresh.Load() {
				s.save()
			}
			reset[s] = true
		}
	}
	for _, s := range a.models.learn(ms, open) {
		reset[s] = true
	}
	for _, s := range open {
		if reset[s] {
			s.showOptions(ctx)
		}
	}
}
