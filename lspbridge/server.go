package lspbridge

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"
)

// LSP methods mm sends or answers.
const (
	methodDidOpen    = "textDocument/didOpen"
	methodDidChange  = "textDocument/didChange"
	methodDidClose   = "textDocument/didClose"
	methodDidWatched = "workspace/didChangeWatchedFiles"
)

// notifyTimeout is notifyTimeoutDefault; tests shorten it.
var notifyTimeout = notifyTimeoutDefault

// Restart policy: a crashed server is restarted after these delays, one
// per crash; one more crash and it is given up and reported. A server that
// ran for healthyRun is forgiven its earlier crashes.
var restartDelays = []time.Duration{0, time.Second, 4 * time.Second}

const (
	healthyRun  = 5 * time.Minute
	initTimeout = 60 * time.Second
	stopGrace   = time.Second
	// notifyTimeoutDefault bounds the sending of one notification: past it the
	// server is taken for hung (it stopped reading its input) and
	// restarted.
	notifyTimeoutDefault = 10 * time.Second
	// maxWork and maxOutstanding bound what a long session accumulates:
	// the progress reports of one title, and the changes announced by
	// commands that no edit waited for.
	maxWork        = 256
	maxOutstanding = 256
)

type serverState int

const (
	stateStarting serverState = iota
	stateReady
	stateFailed
	stateClosed
)

// server is one language server for one (language, root). Its supervisor
// goroutine starts the process, restarts it after a crash, and stops it on
// close; everything else reads the state under mu and waits on sig.
type server struct {
	lang     string
	root     string
	cfg      ServerConfig
	settings map[string]any
	log      *slog.Logger

	mu sync.Mutex
	// sig is closed and replaced whenever the state below changes, so a
	// waiter re-checks its condition only when something happened.
	sig     chan struct{}
	state   serverState
	cur     *proc // the initialized process while stateReady
	gen     int   // incremented per process
	failure string
	notices []string
	docs    map[string]*document // by canonical path
	diags   map[string]*fileDiags
	pubSeq  uint64    // publishDiagnostics received, all generations
	lastPub time.Time // arrival of the last publishDiagnostics
	// lastEvent is the arrival of the last publish or progress report,
	// which lets the benchmark split a wait into the server's time and mm's.
	lastEvent time.Time
	// work is the progress reports of this generation by title, in
	// order: the n-th begun is the n-th notification of its method sent.
	// Past maxWork the oldest are dropped, counted in workBase.
	work     map[string][]*work
	workBase map[string]int
	tokens   map[string]*work
	sent     map[string]int // notifications sent this generation, by method
	// progressOK is set once this process has reported one of the
	// ProgressTitles: from then on every configured title is waited for,
	// even one not seen yet (a change on disk announced first).
	progressOK bool
	uriPaths   map[protocol.DocumentURI]string
	// files reads the text of result locations not open in the server.
	files Files
	// outstanding are the changes Changed announced whose diagnostics
	// have not been waited for yet.
	outstanding []*pending
	// pull is whether the server answers textDocument/diagnostic.
	pull pullSupport
	// imports caches the import scan of the root's files (importers.go).
	imports importCache
	// beforeScan, when set (by tests only), runs as an importer scan
	// starts: a slow walk on a loaded machine is made that way on demand.
	beforeScan func(context.Context)
	// waits are how long the recent checks took (wait.go).
	waits []time.Duration

	// sendMu keeps the count of a notification and its sending together,
	// so the n-th notification sent is the n-th the server reports on.
	sendMu sync.Mutex
	// op lets one sync-and-wait sequence run at a time, so the diagnostics
	// an edit waits for are not mixed with another edit's.
	op chan struct{}

	stop      chan struct{}
	closeCtx  context.Context
	cancelRun context.CancelFunc
	runCtx    context.Context
	wg        sync.WaitGroup
}

// document is a file mm has opened in the server.
type document struct {
	path    string
	uri     protocol.DocumentURI
	langID  string
	version int32
	text    []byte
	gen     int    // generation it was last sent to; stale after a restart
	sentSeq uint64 // pubSeq when the current version was sent
	// current is the file's text while the server is given an older one
	// (text) for a late baseline (rebase); nil otherwise. mm's copy of
	// the file, for the checks that follow, is current.
	current []byte
}

// fileDiags is what the server last published for a file.
type fileDiags struct {
	version int32 // 0: the server gave none
	seq     uint64
	list    []Diagnostic
}

// work is one work-done progress of the server.
type work struct {
	title string
	ended bool
}

// beginWorkLocked records a progress begun; past maxWork of a title the
// older half is forgotten. mu must be held.
func (s *server) beginWorkLocked(w *work) {
	ws := append(s.work[w.title], w)
	if len(ws) > maxWork {
		drop := len(ws) / 2
		s.workBase[w.title] += drop
		ws = append([]*work(nil), ws[drop:]...)
	}
	s.work[w.title] = ws
}

// workEndedLocked reports whether the idx-th progress of title has ended;
// a forgotten one counts as ended (it began maxWork/2 reports ago at
// least). mu must be held.
func (s *server) workEndedLocked(title string, idx int) bool {
	i := idx - s.workBase[title]
	if i < 0 {
		return true
	}
	ws := s.work[title]
	return i < len(ws) && ws[i].ended
}

// newServer makes the server of lang for root; confine are the
// directories whose programs it may not be given to run (Config.VenvRoots).
func newServer(lang, root string, cfg ServerConfig, confine []string, log *slog.Logger) *server {
	settings, note := settingsFor(cfg, root, confine)
	s := &server{
		lang:     lang,
		root:     root,
		cfg:      cfg,
		settings: settings,
		log:      log.With("server", lang, "root", root),
		sig:      make(chan struct{}),
		docs:     make(map[string]*document),
		diags:    make(map[string]*fileDiags),
		uriPaths: make(map[protocol.DocumentURI]string),
		op:       make(chan struct{}, 1),
		stop:     make(chan struct{}),
	}
	if note != "" {
		s.log.Info("virtual environment", "interpreter", note)
	}
	s.runCtx, s.cancelRun = context.WithCancel(context.Background())
	s.resetGenLocked()
	goSafe(&s.wg, s.log, "the "+s.name()+" supervisor", s.supervise, s.broken)
	return s
}

// broken ends a server whose supervisor panicked: its process is stopped
// and every wait ends with the line, as for a server given up.
func (s *server) broken(line string) {
	s.mu.Lock()
	p := s.cur
	s.cur = nil
	if s.state != stateClosed {
		s.state = stateFailed
		s.failure = line
		s.notices = append(s.notices, line)
	}
	s.broadcastLocked()
	s.mu.Unlock()
	if p != nil {
		p.stop(context.Background(), false, 0)
	}
}

// name is what the model reads: the server's command name, without a
// "-langserver" or "-language-server" suffix ("pyright").
func (s *server) name() string {
	n := filepath.Base(s.cfg.Command[0])
	for _, suf := range []string{"-langserver", "-language-server"} {
		n = strings.TrimSuffix(n, suf)
	}
	return n
}

// settingsFor copies cfg.Settings and puts the root's virtual environment
// interpreter at cfg.Venv — unless it is a file under one of confine (a
// program of the repository, which the server would run): then the
// venv's site-packages go to cfg.VenvPaths, and note says so for the log.
func settingsFor(cfg ServerConfig, root string, confine []string) (_ map[string]any, note string) {
	out := deepCopy(cfg.Settings)
	if cfg.Venv == "" {
		return out, ""
	}
	py, venv := venvPython(root)
	if py == "" {
		return out, ""
	}
	if out == nil {
		out = map[string]any{}
	}
	if !runsInside(py, confine) {
		setPath(out, cfg.Venv, py)
		return out, ""
	}
	site := sitePackages(venv)
	if cfg.VenvPaths != "" && len(site) > 0 {
		var paths []any
		if old, ok := lookupPath(out, cfg.VenvPaths); ok {
			paths, _ = old.([]any)
		}
		for _, p := range site {
			paths = append(paths, p)
		}
		setPath(out, cfg.VenvPaths, paths)
	}
	return out, py + " is a file of the workspace, not run until the workspace is trusted; the server reads the venv's site-packages instead"
}

// broadcastLocked wakes every waiter. mu must be held.
func (s *server) broadcastLocked() {
	close(s.sig)
	s.sig = make(chan struct{})
}

func (s *server) resetGenLocked() {
	s.work = make(map[string][]*work)
	s.workBase = make(map[string]int)
	s.tokens = make(map[string]*work)
	s.sent = make(map[string]int)
	s.progressOK = false
}

// supervise runs the server until close: start, wait for a crash, restart
// with backoff, give up after too many crashes.
func (s *server) supervise() {
	crashes := 0
	for {
		started := time.Now()
		p, err := s.startOnce()
		if err == nil {
			select {
			case <-p.conn.Done():
				p.stop(context.Background(), false, 0)
				s.down(p)
				err = fmt.Errorf("%s", p.exitReason())
			case <-s.stop:
				s.mu.Lock()
				ctx := s.closeCtx
				s.mu.Unlock()
				p.stop(ctx, true, stopGrace)
				return
			}
		}
		if s.stopped() {
			return
		}
		if time.Since(started) > healthyRun {
			crashes = 0
		}
		if crashes >= len(restartDelays) {
			s.giveUp(err)
			return
		}
		delay := restartDelays[crashes]
		crashes++
		s.notice(fmt.Sprintf("%s stopped (%v) and was restarted", s.name(), err))
		s.log.Warn("language server crashed", "err", err, "restart_in", delay)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-s.stop:
			t.Stop()
			return
		}
	}
}

func (s *server) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// startOnce starts a process, initializes it and reopens the documents.
func (s *server) startOnce() (*proc, error) {
	s.mu.Lock()
	s.gen++
	gen := s.gen
	s.state = stateStarting
	s.resetGenLocked()
	s.broadcastLocked()
	s.mu.Unlock()

	p, err := startProc(s.root, s.cfg.Command, s.cfg.Env, s.log, s.handler(gen), &s.wg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(s.runCtx, initTimeout)
	defer cancel()
	if err := s.initialize(ctx, p); err != nil {
		p.stop(context.Background(), false, 0)
		return nil, fmt.Errorf("initialize: %w (%s)", err, p.exitReason())
	}
	s.mu.Lock()
	s.cur = p
	s.state = stateReady
	reopen := make([]*document, 0, len(s.docs))
	for _, d := range s.docs {
		reopen = append(reopen, d)
	}
	s.broadcastLocked()
	s.mu.Unlock()
	for _, d := range reopen {
		s.mu.Lock()
		text := d.text
		s.mu.Unlock()
		_, _ = s.syncDoc(ctx, d.path, text)
	}
	return p, nil
}

// down marks the server as restarting after its process died.
func (s *server) down(p *proc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == p {
		s.cur = nil
	}
	s.state = stateStarting
	s.broadcastLocked()
}

func (s *server) giveUp(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = stateFailed
	s.failure = fmt.Sprintf("%s crashed %d times and was given up: %v", s.name(), len(restartDelays)+1, err)
	s.notices = append(s.notices, s.failure)
	s.log.Error("language server given up", "err", err)
	s.broadcastLocked()
}

func (s *server) notice(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices = append(s.notices, text)
}

// takeNotices returns and clears what happened to the server since the
// last report (restarts), for the next tool output.
func (s *server) takeNotices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.notices
	s.notices = nil
	return n
}

// close stops the server and waits for its process and goroutines.
func (s *server) close(ctx context.Context) {
	s.mu.Lock()
	if s.state == stateClosed {
		s.mu.Unlock()
		s.wg.Wait()
		return
	}
	s.closeCtx = ctx
	s.state = stateClosed
	close(s.stop)
	s.broadcastLocked()
	s.mu.Unlock()
	// Let the polite shutdown use ctx, but abort a pending initialize.
	s.cancelRun()
	s.wg.Wait()
}

// ready waits until the server is initialized and returns its process.
func (s *server) ready(ctx context.Context) (*proc, error) {
	for {
		s.mu.Lock()
		st, p, sig, failure := s.state, s.cur, s.sig, s.failure
		s.mu.Unlock()
		switch st {
		case stateReady:
			return p, nil
		case stateFailed:
			return nil, fmt.Errorf("%w: %s", ErrServerFailed, failure)
		case stateClosed:
			return nil, ErrClosed
		}
		select {
		case <-sig:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %s is still starting", ErrNotReady, s.name())
		}
	}
}

// initialize runs the LSP handshake. The capabilities are written as
// plain JSON because go.lsp.dev/protocol v0.12.0 predates some of them
// (position encodings), and because the pull-diagnostics capability must
// stay absent: pyright stops pushing when a client advertises it.
func (s *server) initialize(ctx context.Context, p *proc) error {
	rootURI := fileURI(s.root)
	params := map[string]any{
		"processId":  os.Getpid(),
		"clientInfo": map[string]any{"name": "mm"},
		"rootUri":    rootURI,
		"rootPath":   s.root,
		"workspaceFolders": []map[string]any{
			{"uri": rootURI, "name": filepath.Base(s.root)},
		},
		"capabilities": clientCapabilities(),
	}
	if s.cfg.InitOptions != nil {
		params["initializationOptions"] = s.cfg.InitOptions
	}
	var res struct{}
	if _, err := p.conn.Call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	return p.conn.Notify(ctx, "initialized", map[string]any{})
}

// clientCapabilities is built when a server starts, not at package init.
func clientCapabilities() map[string]any {
	return map[string]any{
		"general": map[string]any{"positionEncodings": []string{"utf-16"}},
		"window":  map[string]any{"workDoneProgress": true},
		"workspace": map[string]any{
			"applyEdit":              true,
			"configuration":          true,
			"workspaceFolders":       true,
			"workspaceEdit":          map[string]any{"documentChanges": true},
			"didChangeConfiguration": map[string]any{"dynamicRegistration": true},
			"didChangeWatchedFiles":  map[string]any{"dynamicRegistration": true, "relativePatternSupport": true},
			"symbol":                 map[string]any{"dynamicRegistration": false},
		},
		"textDocument": map[string]any{
			"synchronization":    map[string]any{"dynamicRegistration": false, "didSave": false},
			"publishDiagnostics": map[string]any{"relatedInformation": false, "versionSupport": true, "codeDescriptionSupport": false},
			"hover":              map[string]any{"contentFormat": []string{"plaintext", "markdown"}},
			"definition":         map[string]any{"linkSupport": false},
			"references":         map[string]any{},
			"documentSymbol":     map[string]any{"hierarchicalDocumentSymbolSupport": true},
			"rename":             map[string]any{"prepareSupport": false},
		},
	}
}

// snapshotDiags copies the diagnostics known now.
func (s *server) snapshotDiags() map[string][]Diagnostic {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]Diagnostic, len(s.diags))
	for p, fd := range s.diags {
		if len(fd.list) > 0 {
			out[p] = fd.list
		}
	}
	return out
}

func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		if sub, ok := v.(map[string]any); ok {
			out[k] = deepCopy(sub)
		}
	}
	return out
}
