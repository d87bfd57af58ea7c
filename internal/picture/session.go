package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/txtar"
)

//go:embed session.txtar
var sessionTxtar []byte

// cols is the terminal's width; the picture wraps lines where it would.
const cols = 110

// question ends every permission question of line mode: an answer is
// typed each time it appears.
const question = "[y]es / [a]lways / [n]o / ne[v]er: "

// session is what the picture shows: a prompt, the answers typed at the
// permission questions, the model's script, and the project's files.
type session struct {
	prompt    string
	answers   []string
	scenario  []byte
	workspace map[string][]byte // relative path → content
}

func loadSession() (session, error) {
	a := txtar.Parse(sessionTxtar)
	s := session{workspace: map[string][]byte{}}
	for _, f := range a.Files {
		switch name := f.Name; {
		case name == "prompt":
			s.prompt = strings.TrimSpace(string(f.Data))
		case name == "answers":
			s.answers = strings.Fields(string(f.Data))
		case name == "scenario.yaml":
			s.scenario = f.Data
		case strings.HasPrefix(name, "workspace/"):
			s.workspace[strings.TrimPrefix(name, "workspace/")] = f.Data
		default:
			return s, fmt.Errorf("session.txtar: unknown section %q", name)
		}
	}
	if s.prompt == "" || s.scenario == nil || len(s.workspace) == 0 {
		return s, errors.New("session.txtar needs a prompt, a scenario.yaml and workspace/ files")
	}
	return s, nil
}

// header is the command line the picture starts with, as a shell shows it.
func (s session) header() string {
	return fmt.Sprintf("\x1b[1;32m$\x1b[0m \x1b[1mmm -p %q\x1b[0m\r\n", s.prompt)
}

// record runs mm (the binary at mm) on the session in work/ws, against the
// model server at baseURL, on a pseudo-terminal of cols columns, and
// returns what the terminal received. The environment is built from
// nothing but what the run needs: a fresh home, state and config, the
// runner's Go caches, and a PATH without language servers, whose
// diagnostics would arrive when they like.
func record(ctx context.Context, s session, mm, baseURL, work string) ([]byte, error) {
	ws := filepath.Join(work, "ws")
	for rel, b := range s.workspace {
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, err
		}
	}
	env, err := runEnv(work, baseURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mm, "-p", s.prompt)
	cmd.Dir, cmd.Env = ws, env
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: cols})
	if err != nil {
		return nil, fmt.Errorf("start mm on a terminal: %w", err)
	}
	defer f.Close()
	t := &tty{more: make(chan struct{}, 1), done: make(chan struct{})}
	var reading sync.WaitGroup
	reading.Go(func() { t.readFrom(f) })
	for _, a := range s.answers {
		if err := t.waitFor(ctx, question); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			reading.Wait()
			return t.bytes(), fmt.Errorf("waiting for a permission question: %w\n%s", err, t.bytes())
		}
		if _, err := f.WriteString(a + "\r"); err != nil {
			return nil, err
		}
	}
	err = cmd.Wait()
	reading.Wait() // the terminal reads EOF (EIO) once mm and its children are gone
	if err != nil {
		return t.bytes(), fmt.Errorf("mm -p: %w\n%s", err, t.bytes())
	}
	return t.bytes(), nil
}

// runEnv is the environment of the recorded run.
func runEnv(work, baseURL string) ([]string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the picture runs go test: %w", err)
	}
	out, err := exec.Command(goBin, "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	caches := strings.Fields(string(out))
	if len(caches) != 2 {
		return nil, fmt.Errorf("go env printed %q", out)
	}
	home := filepath.Join(work, "home")
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin",
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"MM_PROVIDER=llamacpp",
		"MM_BASE_URL=" + baseURL,
		"GOCACHE=" + caches[0],
		"GOMODCACHE=" + caches[1],
		"GOTOOLCHAIN=local",
		"GOPROXY=off",
		"GOTELEMETRY=off",
		"GOFLAGS=-count=1", // a real run each time, never "(cached)"
	}, nil
}

// tty collects what the terminal receives.
type tty struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen int           // offset up to which waitFor has matched
	more chan struct{} // a token after each read
	done chan struct{} // closed when the terminal is read to its end
}

func (t *tty) readFrom(f *os.File) {
	defer close(t.done)
	b := make([]byte, 4096)
	for {
		n, err := f.Read(b)
		t.mu.Lock()
		t.buf.Write(b[:n])
		t.mu.Unlock()
		select {
		case t.more <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

func (t *tty) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.buf.Bytes())
}

// waitFor waits until s appears after what the previous call matched.
func (t *tty) waitFor(ctx context.Context, s string) error {
	for {
		ended := false
		select {
		case <-t.done: // everything is in buf: one last look
			ended = true
		default:
		}
		t.mu.Lock()
		i := bytes.Index(t.buf.Bytes()[t.seen:], []byte(s))
		if i >= 0 {
			t.seen += i + len(s)
		}
		t.mu.Unlock()
		switch {
		case i >= 0:
			return nil
		case ended:
			return fmt.Errorf("mm ended before %q appeared", s)
		}
		select {
		case <-t.more:
		case <-t.done:
		case <-ctx.Done():
			return fmt.Errorf("%q did not appear: %w", s, ctx.Err())
		}
	}
}
