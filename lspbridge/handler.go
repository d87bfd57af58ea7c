package lspbridge

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// handler answers the server's requests and records its notifications.
// It runs on the connection's reader goroutine, so it never blocks:
// every request is answered at once, and an unknown request gets a null
// result rather than "method not found", which makes pyright exit.
func (s *server) handler(gen int) jsonrpc2.Handler {
	h := s.handle(gen)
	// A panic here would end mm (the connection's goroutine belongs to
	// jsonrpc2): it is recovered, logged as one line, and a call still
	// gets its (null) answer.
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) (err error) {
		answered := false
		once := func(ctx context.Context, result any, rerr error) error {
			answered = true
			return reply(ctx, result, rerr)
		}
		if line := try(s.log, "the "+s.name()+" message handler ("+req.Method()+")", func() { err = h(ctx, once, req) }); line != "" {
			if _, isCall := req.(*jsonrpc2.Call); isCall && !answered {
				return reply(ctx, nil, nil)
			}
		}
		return err
	}
}

func (s *server) handle(gen int) jsonrpc2.Handler {
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		params := []byte(req.Params())
		switch req.Method() {
		case "textDocument/publishDiagnostics":
			s.onPublish(gen, params)
		case "$/progress":
			s.onProgress(gen, params)
		case "workspace/configuration":
			return reply(ctx, s.configuration(params), nil)
		case "workspace/workspaceFolders":
			return reply(ctx, []map[string]any{{"uri": fileURI(s.root), "name": filepath.Base(s.root)}}, nil)
		case "workspace/applyEdit":
			// mm applies edits itself, after permission; commands that
			// edit behind its back are declined.
			return reply(ctx, map[string]any{"applied": false, "failureReason": "mm applies edits itself"}, nil)
		case "window/showDocument":
			return reply(ctx, map[string]any{"success": false}, nil)
		case "window/logMessage", "window/showMessage", "telemetry/event", "$/logTrace":
			s.log.Debug("server message", "method", req.Method(), "params", truncate(string(params), 300))
		default:
			// window/workDoneProgress/create, client/registerCapability,
			// client/unregisterCapability, workspace/*/refresh,
			// window/showMessageRequest and anything newer: null is a
			// valid answer to all of them.
			s.log.Debug("server request", "method", req.Method())
		}
		if _, isCall := req.(*jsonrpc2.Call); isCall {
			return reply(ctx, nil, nil)
		}
		return nil
	}
}

func (s *server) onPublish(gen int, raw []byte) {
	var p protocol.PublishDiagnosticsParams
	if err := json.Unmarshal(raw, &p); err != nil {
		s.log.Debug("bad publishDiagnostics", "err", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	path := s.pathLocked(p.URI)
	if path == "" || gen != s.gen {
		return
	}
	list := make([]Diagnostic, 0, len(p.Diagnostics))
	for _, d := range p.Diagnostics {
		list = append(list, fromProtocol(path, d))
	}
	s.pubSeq++
	s.lastPub = time.Now()
	s.lastEvent = s.lastPub
	s.diags[path] = &fileDiags{version: int32(p.Version), seq: s.pubSeq, list: list}
	s.log.Debug("publishDiagnostics", "path", path, "version", p.Version, "n", len(list))
	s.broadcastLocked()
}

func (s *server) onProgress(gen int, raw []byte) {
	var p struct {
		Token json.RawMessage `json:"token"`
		Value struct {
			Kind  string `json:"kind"`
			Title string `json:"title"`
		} `json:"value"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return
	}
	tok := string(p.Token)
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.gen {
		return
	}
	s.log.Debug("progress", "token", tok, "kind", p.Value.Kind, "title", p.Value.Title)
	switch p.Value.Kind {
	case "begin":
		w := &work{title: p.Value.Title}
		s.tokens[tok] = w
		s.beginWorkLocked(w)
		for _, title := range s.cfg.ProgressTitles {
			if title == w.title {
				s.progressOK = true
			}
		}
	case "end":
		if w := s.tokens[tok]; w != nil {
			w.ended = true
			delete(s.tokens, tok)
		}
	default:
		return
	}
	s.lastEvent = time.Now()
	s.broadcastLocked()
}

// configuration answers workspace/configuration: one value per item,
// found by dotted section in the settings; an empty object when absent.
func (s *server) configuration(raw []byte) []any {
	var p struct {
		Items []struct {
			Section string `json:"section"`
		} `json:"items"`
	}
	_ = json.Unmarshal(raw, &p)
	out := make([]any, len(p.Items))
	for i, it := range p.Items {
		v, ok := lookupPath(s.settings, it.Section)
		if !ok || v == nil {
			v = map[string]any{}
		}
		out[i] = v
	}
	return out
}

// lookupPath finds "a.b.c" in nested maps; the empty path is the whole map.
func lookupPath(m map[string]any, path string) (any, bool) {
	if path == "" {
		return m, m != nil
	}
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// setPath sets "a.b.c" in nested maps, creating the levels.
func setPath(m map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		sub, ok := m[k].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[k] = sub
		}
		m = sub
	}
	m[keys[len(keys)-1]] = v
}

// pathLocked maps a server URI to mm's canonical path, "" for a URI that
// is not a file.
func (s *server) pathLocked(u protocol.DocumentURI) string {
	if p, ok := s.uriPaths[u]; ok {
		return p
	}
	p := pathOf(u)
	if p != "" {
		p = canonical(p)
	}
	s.uriPaths[u] = p
	return p
}

func (s *server) pathOf(u protocol.DocumentURI) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pathLocked(u)
}

// pathOf is uri.URI.Filename without its panic on a non-file URI.
func pathOf(u protocol.DocumentURI) string {
	parsed, err := url.Parse(string(u))
	if err != nil || parsed.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(parsed.Path)
}

func fileURI(path string) protocol.DocumentURI { return uri.File(path) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
