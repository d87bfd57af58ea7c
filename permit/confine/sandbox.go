package confine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc"

	"github.com/mm-agent/mm/permit/runlater"
	"github.com/mm-agent/mm/tools"
)

// Mechanism names what confines commands.
type Mechanism string

const (
	// None: nothing can; a sandbox that was asked for then runs no
	// command.
	None Mechanism = "none"
	// Landlock grants writes path by path (Linux 5.13+): the weaker mode.
	Landlock Mechanism = "landlock"
	// Namespaces give each command its own view of the file system.
	Namespaces Mechanism = "namespaces"
)

// The values of the config's sandbox key.
const (
	WantOn         = "on"
	WantNamespaces = "namespaces"
	WantLandlock   = "landlock"
)

// Options say what the user asked for and what mm knows.
type Options struct {
	// Want is the config's sandbox: on (the strongest mechanism
	// available), namespaces or landlock (that one, or no command runs).
	Want string
	// Network lets confined commands reach the network; without it they
	// get a network namespace of their own (Landlock: no TCP at all).
	Network bool
	// Exe is mm's executable: the helper.
	Exe string
	// Environ is the environment commands start from: where the caches
	// and the home are, which sockets the session has.
	Environ []string
	// Keep are the variables the user keeps (bashEnv.keep patterns): a
	// socket variable named there reaches commands, and its socket too.
	Keep []string
	// Own are mm's own directories (config, state): read-only to
	// commands wherever they are.
	Own []string
	// Aside is where files that run later, made by a command, are kept
	// once taken out of the workspace; "" keeps them in the private temp
	// directory, which goes when mm exits.
	Aside string
}

// Sandbox confines the commands of one mm. Its zero value is not usable;
// New makes one, Close removes its private temp directory.
type Sandbox struct {
	opts Options
	mech Mechanism
	why  string
	tmp  string // the commands' /tmp (namespaces) or $TMPDIR (Landlock)

	// jobs wait for the namespaces that outlive their command — a job it
	// left in the background runs on, as it would unconfined — until
	// Close ends them, and start the spare helpers; left are the inner
	// helpers of those namespaces, spare the helper started ahead for
	// the next command (spare_linux.go).
	jobs   conc.WaitGroup
	mu     sync.Mutex
	left   map[*os.Process]bool
	spare  *helper
	closed bool

	cachesOnce sync.Once
	caches     []string // build caches writable where they are
}

// New picks the mechanism: for `on` namespaces when this kernel lets mm
// set them up (it tries, with a probe), else Landlock, else none; for
// `namespaces` or `landlock` that one or none. It never fails: a
// sandbox that cannot be set up is one whose Mechanism is None, and
// Prepare then refuses every command.
func New(ctx context.Context, opts Options) *Sandbox {
	s := &Sandbox{opts: opts, mech: None}
	if runtime.GOOS != "linux" {
		s.why = "commands can be confined on Linux only, not on " + runtime.GOOS
		return s
	}
	dir, err := os.MkdirTemp("", "mm-sandbox-")
	if err != nil {
		s.why = "cannot create its temp directory: " + err.Error()
		return s
	}
	s.tmp = dir
	var nsErr string
	if opts.Want == WantOn || opts.Want == WantNamespaces {
		if nsErr = s.probe(ctx); nsErr == "" {
			s.mech, s.why = Namespaces, "sandbox: "+opts.Want+", and this kernel lets mm create user, mount and pid namespaces"
			s.refill()
			return s
		}
	}
	switch {
	case opts.Want == WantNamespaces:
		s.why = "namespaces cannot be set up here: " + nsErr
	case LandlockABI() == 0:
		s.why = "this kernel has no Landlock (Linux 5.13+ with Landlock enabled)"
		if nsErr != "" {
			s.why = "namespaces cannot be set up here (" + nsErr + ") and " + s.why
		}
	case !opts.Network && LandlockABI() < 4:
		s.why = "Landlock cannot cut the network before Linux 6.7 (its ABI 4), and sandbox.network is off"
	case opts.Want == WantLandlock:
		s.mech, s.why = Landlock, "sandbox: landlock"
	default:
		s.mech, s.why = Landlock, "namespaces cannot be set up here: "+nsErr
	}
	return s
}

// Refused tells the model why a confined command may have been refused
// a write, when its output says so ("Permission denied", "Read-only file
// system", "Operation not permitted"), "" otherwise.
func (s *Sandbox) Refused(out string) string {
	if s == nil {
		return ""
	}
	if !strings.Contains(out, "ermission denied") && !strings.Contains(out, "peration not permitted") && !strings.Contains(out, "ead-only file system") {
		return ""
	}
	if s.mech == Landlock {
		return "[mm: the sandbox lets a command write inside the workspace's directories and its existing top-level files, not create, remove or rename files at the workspace root or beside a file that runs later under another name, nor write files that run later (.git, .mm, .vscode, .envrc…, what they link to), nor write /tmp (use $TMPDIR): write those with write_file, which asks the user, or ask the user to run the command]\n"
	}
	return "[mm: the sandbox lets a command write the workspace, /tmp (its own), and the Go, pip and cargo caches; everything else is read-only — the home directory, mm's files, the system — and so, in the workspace, are the files that run later (.git, .mm, .vscode, .envrc…, what they link to): write those with write_file, which asks the user, or ask the user to run the command]\n"
}

// probe runs the helper with an empty plan: "" when namespaces work,
// else the helper's one line saying why not.
func (s *Sandbox) probe(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	p := Plan{Probe: true, Tmp: s.tmp, Network: s.opts.Network}
	cmd := exec.CommandContext(ctx, s.opts.Exe, "__sandbox", "--plan", p.encode(), "--")
	cmd.Dir = "/"
	cmd.Env = []string{}
	out, err := cmd.CombinedOutput()
	if err == nil {
		return ""
	}
	why := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "mm: sandbox:"))
	if why == "" {
		why = err.Error()
	}
	return why
}

// Mechanism is what confines commands, and why that one.
func (s *Sandbox) Mechanism() (Mechanism, string) {
	if s == nil {
		return None, "sandbox: off"
	}
	return s.mech, s.why
}

// Warning is the ⚠ line a user must see at start, "" when the sandbox is
// the strongest kind: Landlock's limits, or that no command will run.
func (s *Sandbox) Warning() string {
	if s == nil {
		return ""
	}
	switch s.mech {
	case Landlock:
		if s.opts.Want == WantLandlock {
			return ""
		}
		return "⚠ sandbox: Landlock only — " + s.why + ". Confined commands cannot create files at the workspace root (go build -o app, python -m venv) nor write build caches outside it, and they still reach your session's sockets (tmux, ssh-agent), the shared /tmp and your other processes"
	case None:
		return "⚠ sandbox: " + s.opts.Want + " cannot be set up — " + s.why + ": mm runs no commands (set sandbox: off to run them unconfined)"
	}
	return ""
}

// Describe is the sandbox in one line, for mm doctor and the log.
func (s *Sandbox) Describe() string {
	m, why := s.Mechanism()
	switch m {
	case Namespaces:
		net := "network on"
		if !s.opts.Network {
			net = "network off"
		}
		return fmt.Sprintf("namespaces (user, mount, pid, IPC; %s) — %s", net, why)
	case Landlock:
		return "Landlock — " + why
	}
	return "none — " + why
}

// Close ends the jobs confined commands left running — their /tmp goes
// now — and the spare helper, and removes the private temp directory.
func (s *Sandbox) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	s.closed = true
	spare := s.spare
	s.spare = nil
	for p := range s.left {
		killGroup(p)
	}
	s.mu.Unlock()
	if spare != nil {
		spare.close()
	}
	s.jobs.Wait()
	if s.tmp == "" {
		return nil
	}
	return os.RemoveAll(s.tmp)
}

// adopt waits, until it ends, for the namespace of a command that has
// ended: its inner helper stays while background jobs run.
func (s *Sandbox) adopt(p *os.Process) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		killGroup(p)
	}
	if s.left == nil {
		s.left = map[*os.Process]bool{}
	}
	s.left[p] = true
	s.jobs.Go(func() {
		_, _ = p.Wait() // the command's status came already
		s.mu.Lock()
		delete(s.left, p)
		s.mu.Unlock()
	})
}

// take is a helper for the next command: the spare, or a new one.
func (s *Sandbox) take() (*helper, error) {
	s.mu.Lock()
	h := s.spare
	s.spare = nil
	s.mu.Unlock()
	if h != nil {
		return h, nil
	}
	return s.spawn()
}

// refill starts the spare helper of a namespaces sandbox, unless one
// waits already or the sandbox is closed. A helper that cannot start is
// no spare: the next command starts one itself, and says why it cannot.
func (s *Sandbox) refill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.spare != nil || s.mech != Namespaces {
		return
	}
	s.jobs.Go(func() {
		h, err := s.spawn()
		if err != nil {
			return
		}
		s.mu.Lock()
		keep := !s.closed && s.spare == nil
		if keep {
			s.spare = h
		}
		s.mu.Unlock()
		if !keep {
			h.close()
		}
	})
}

// Command is one command line to confine.
type Command struct {
	// Roots are the workspace roots the command may write; Dir, where it
	// runs, is added when outside them.
	Roots []string
	Dir   string
	// Named are more files that run later wherever they are (the ones
	// mm's configuration names): read-only to the command.
	Named []string
}

// Run is one confined command: what to start instead of it, and what
// to do once it ended.
type Run struct {
	// Env is added, last, to the command's environment.
	Env []string
	s   *Sandbox
	// plan is the namespaces' (nil under Landlock), landlock Landlock's:
	// what is set up around the command (start_linux.go). late are the
	// hooks directories, read-only too, which git names while Prepare
	// returns and the helper builds the view: hooks asks it.
	plan     *Plan
	landlock *landlockPlan
	hooks    conc.WaitGroup
	late     []string
	// h is the command's helper; ended is set once the command has
	// ended; watch ends the command when the context of Start ends, until
	// stop.
	h     *helper
	ended atomic.Bool
	watch conc.WaitGroup
	stop  chan struct{}
	// roots and their files that ran later before the command.
	roots  []string
	before []snapshot
}

// Refusal is what the model reads instead of any command's output when
// the sandbox asked for cannot be set up; "" when commands run. A nil
// Sandbox (sandbox: off) runs them unconfined.
func (s *Sandbox) Refusal() string {
	if s == nil || s.mech != None {
		return ""
	}
	return "[not run: the sandbox (" + s.opts.Want + ") cannot be set up here — " + s.why + ". mm runs no commands then; tell the user, who can set sandbox: off]"
}

// Prepare confines c: it returns what to start, or a refusal the model
// reads when no mechanism can.
func (s *Sandbox) Prepare(ctx context.Context, c Command) (*Run, string) {
	switch s.mech {
	case None:
		return nil, s.Refusal()
	case Landlock:
		// The workspace's files that run later now and the links of
		// such names (scan), and git's hooks directory, looked for side
		// by side; what the command may write follows from them.
		r := &Run{s: s, roots: []string{c.Dir}, Env: []string{"TMPDIR=" + s.tmp}}
		var hooks string
		var wg conc.WaitGroup
		wg.Go(func() { hooks = runlater.Hooks(c.Dir) })
		r.before = r.scan()
		wg.Wait()
		var lp landlockPlan
		lp.Dirs, lp.Files = r.before[0].Grants(hooks)
		lp.Dirs, lp.Network = append(lp.Dirs, s.tmp), s.opts.Network
		r.landlock = &lp
		return r, ""
	}
	roots := rootsOf(c)
	r := &Run{s: s, roots: roots}
	p := Plan{Tmp: s.tmp, Network: s.opts.Network, Keep: s.opts.Keep}
	for _, root := range roots {
		if real := tools.Real(root); real != "/" { // mm started in / makes no system writable
			p.Writable = append(p.Writable, real)
		}
	}
	p.Writable = append(p.Writable, s.buildCaches(ctx)...)
	// What runs later now and what links of such names lead to (scan),
	// and git's hooks directory, looked for side by side; the last is
	// not waited for here.
	r.hooks.Go(func() {
		for _, root := range roots {
			if hooks := runlater.Hooks(root); hooks != "" {
				r.late = append(r.late, hooks)
			}
		}
	})
	r.before = r.scan()
	for _, snap := range r.before {
		for _, e := range snap.Entries {
			if !e.Link {
				p.ReadOnly = append(p.ReadOnly, e.Path)
			}
		}
		p.ReadOnly = append(p.ReadOnly, snap.Targets()...)
	}
	if home := lookup(s.opts.Environ, "HOME"); home != "" {
		// Read-only anyway, unless a workspace holds it: mm started in
		// the home directory must not make ~/.bashrc writable.
		p.ReadOnly = append(p.ReadOnly, tools.Real(home))
	}
	for _, f := range append(slices.Clone(s.opts.Own), c.Named...) {
		p.ReadOnly = append(p.ReadOnly, tools.Real(f))
	}
	r.plan = &p
	r.Env = append(r.Env, "TMPDIR=/tmp", "npm_config_cache=/tmp/.npm-cache")
	return r, ""
}

// Argv goes before the command's own argv where another program starts
// it (the editor's terminal); mm starts it with Start.
func (r *Run) Argv() []string {
	if r.landlock != nil {
		return append([]string{r.s.opts.Exe, "__sandbox"}, r.landlock.args()...)
	}
	r.hooks.Wait()
	p := *r.plan
	p.ReadOnly = append(slices.Clone(p.ReadOnly), r.late...)
	return []string{r.s.opts.Exe, "__sandbox", "--plan", p.encode(), "--"}
}

// rootsOf are c's roots, with its directory when outside them, without
// the ones inside another.
func rootsOf(c Command) []string {
	all := slices.Clone(c.Roots)
	inside := false
	for _, r := range all {
		inside = inside || under(c.Dir, r)
	}
	if !inside && c.Dir != "" {
		all = append(all, c.Dir)
	}
	var out []string
	for _, r := range all {
		if !slices.ContainsFunc(all, func(o string) bool { return o != r && under(r, o) }) && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// buildCaches are the build and package caches commands write where
// they are: Go's (created when missing: a fresh home has none, and go
// test fails without one), and pip's and cargo's when they exist. npm's
// is not among them — its directory also holds what npx runs — and goes
// to the private /tmp instead (Prepare).
func (s *Sandbox) buildCaches(ctx context.Context) []string {
	s.cachesOnce.Do(func() { s.caches = caches(ctx, s.opts.Environ) })
	return s.caches
}

func caches(ctx context.Context, environ []string) []string {
	var out []string
	if goCaches, err := goEnv(ctx, environ, "GOCACHE", "GOMODCACHE"); err == nil {
		for _, d := range goCaches {
			if filepath.IsAbs(d) && os.MkdirAll(d, 0o755) == nil {
				out = append(out, d)
			}
		}
	}
	home := lookup(environ, "HOME")
	cache := lookup(environ, "XDG_CACHE_HOME")
	if cache == "" && home != "" {
		cache = filepath.Join(home, ".cache")
	}
	cargo := lookup(environ, "CARGO_HOME")
	if cargo == "" && home != "" {
		cargo = filepath.Join(home, ".cargo")
	}
	for _, d := range []string{lookup(environ, "PIP_CACHE_DIR"), filepath.Join(cache, "pip"), filepath.Join(cargo, "registry"), filepath.Join(cargo, "git")} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && filepath.IsAbs(d) {
			out = append(out, d)
		}
	}
	return out
}

// goEnv asks the go command where its caches are — its answer, not a
// guess, follows GOENV files and defaults. It runs outside any
// workspace, whose go.mod could name a toolchain to download and run.
func goEnv(ctx context.Context, environ []string, names ...string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	goCmd, err := lookPath("go", environ)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, goCmd, append([]string{"env"}, names...)...)
	cmd.Dir = "/"
	cmd.Env = append(slices.Clone(environ), "GOTOOLCHAIN=local", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n"), nil
}

// lookPath finds program in env's PATH, as the shell that would have
// started it does.
func lookPath(program string, env []string) (string, error) {
	if strings.Contains(program, "/") {
		return program, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + program
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: command not found", program)
}
