package lspbridge

import (
	"github.com/mm-agent/mm/fileedit/disk"

	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ServerConfig says how to run the language server of one language.
// The zero value of every optional field is documented; Command is required.
type ServerConfig struct {
	// Command is the server's argv; Command[0] is looked up on PATH and the
	// server is used only when it is found there.
	Command []string
	// Env is the server's environment; nil: mm's own.
	Env []string
	// RootMarkers are file names that mark a workspace root, in priority
	// order: the first marker found in any ancestor of a file wins over a
	// later marker found nearer (go.work beats a nearer go.mod). An entry may
	// hold alternatives of equal priority separated by "|"
	// ("setup.cfg|setup.py"): the nearest of them wins. With no marker found
	// the root is the workspace root given to Warm, or the file's directory.
	RootMarkers []string
	// Extensions are the file extensions, with the dot, of this language.
	Extensions []string
	// LanguageIDs maps an extension to the LSP languageId when it differs
	// from the language name (".tsx": "typescriptreact"). Nil: the name.
	LanguageIDs map[string]string
	// InitOptions are sent as initializationOptions. Nil: none.
	InitOptions map[string]any
	// Settings answer workspace/configuration requests by section: the
	// section "python.analysis" is looked up as Settings["python"]["analysis"].
	// A section not found is answered with an empty object, never an error
	// (pyright exits on an error). Nil: every section is empty.
	Settings map[string]any
	// ProgressTitles maps a document notification ("textDocument/didOpen",
	// "textDocument/didChange") to the title of the work-done progress the
	// server reports around the diagnostics it computes for that
	// notification. When the server reports it, mm waits for that progress
	// to end — an exact signal — instead of a quiet period. gopls reports
	// them when initializationOptions has "verboseWorkDoneProgress": true.
	// Nil: wait for the document's version, then for Settle of quiet.
	ProgressTitles map[string]string
	// Settle is how long no new diagnostics must arrive, after the edited
	// document's own diagnostics, before other files' are taken as final.
	// Used only when the server reports no progress (see ProgressTitles).
	// Zero: 60 ms.
	Settle time.Duration
	// Workspace says the server reports the problems of every file of the
	// root, not only of the files mm has opened (gopls does; pyright in its
	// default "openFilesOnly" mode does not). False: only opened files.
	Workspace bool
	// Venv, when set, makes mm look for a virtual environment (.venv or
	// venv) in the root and put its interpreter at this dotted path of
	// Settings ("python.pythonPath") for that root — when it may be run
	// (Config.RunVenv).
	Venv string
	// VenvPaths, when set, is the dotted path of Settings where mm lists
	// the virtual environment's site-packages directories when it does
	// not give the server the interpreter ("python.analysis.extraPaths"):
	// the server reads them without running anything, so the venv's
	// packages are still found.
	VenvPaths string
}

// Config configures a Manager. The zero Config has no servers.
type Config struct {
	// Servers maps a language name ("go", "python") to its server.
	Servers map[string]ServerConfig
	// Wait is the least an edit waits for its diagnostics, and bounds a
	// query's wait for its answer. An edit's wait adapts to what the
	// server needed for the earlier checks of the session (wait.go),
	// between Wait and MaxWait; the first check of a server, which waits
	// for its initial analysis, has MaxWait. Zero: 2 s.
	Wait time.Duration
	// MaxWait bounds an edit's wait (raised to Wait when lower). An answer
	// that comes later still reaches the model when the edit asked for it
	// (Snapshot.DeliverLate), within 2 minutes. Zero: 20 s.
	MaxWait time.Duration
	// BaseDir is the directory paths in the text mm writes for the model
	// are relative to (the session's working directory). Empty: absolute.
	BaseDir string
	// Logger receives the servers' stderr and protocol events at debug
	// level. Nil: discard.
	Logger *slog.Logger
	// MaxErrors bounds the new errors listed after an edit, in total; a
	// fifth of it (at least 1) bounds them per file. Zero: 10.
	MaxErrors int
	// Files is where the bridge reads file text: mm's one view of files
	// (the editor's unsaved buffers when it offers them), so the "before"
	// text of an edit and the text a query is asked about are the ones the
	// model saw. The bridge never opens a file itself, except after a
	// command (Changed), when the disk is what changed. Nil: the disk.
	Files Files
	// VenvRoots are the workspace roots whose own configuration the user
	// trusted: a server whose root lies in one of them may run a virtual
	// environment's interpreter that is a file of the workspace
	// (ServerConfig.Venv). pyright runs the interpreter it is given, to
	// learn where imports live; a real venv's bin/python is a link to a
	// Python installed elsewhere, but a repository can ship its own
	// .venv/bin/python script, which would run on the first edit of a .py
	// file. Any other server is not given an interpreter whose real path
	// (links resolved) lies in its root, BaseDir or a root given to Warm,
	// and no server one that lies in a root not trusted on its own — a
	// trusted root's venv linked into an untrusted one included; such a
	// server reads the venv's site-packages instead
	// (ServerConfig.VenvPaths). Nil: none.
	VenvRoots []string
}

// Files reads the current text of a file (an absolute path); a missing
// file is fs.ErrNotExist. tools.Files satisfies it.
type Files interface {
	ReadFile(ctx context.Context, path string) ([]byte, error)
}

// onDisk is the default Files: mm's one bounded file reader.
type onDisk struct{}

func (onDisk) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return disk.Read(ctx, "", path, disk.MaxSource)
}

// files is the configured view, else the disk.
func (c Config) files() Files {
	if c.Files == nil {
		return onDisk{}
	}
	return c.Files
}

// DefaultConfig runs gopls for Go and pyright for Python.
func DefaultConfig() Config {
	return Config{
		Servers: map[string]ServerConfig{
			"go": {
				Command:     []string{"gopls"},
				RootMarkers: []string{"go.work", "go.mod"},
				Extensions:  []string{".go"},
				Workspace:   true,
				InitOptions: goplsOptions(),
				Settings:    map[string]any{"gopls": goplsOptions()},
				ProgressTitles: map[string]string{
					methodDidOpen:    "diagnosing opened files",
					methodDidChange:  "diagnosing changed files",
					methodDidWatched: "diagnosing files changed on disk",
				},
			},
			"python": {
				Command:     []string{"pyright-langserver", "--stdio"},
				RootMarkers: []string{"pyrightconfig.json", "pyproject.toml", "setup.cfg|setup.py", "requirements.txt"},
				Extensions:  []string{".py", ".pyi"},
				Settings: map[string]any{
					"python": map[string]any{"analysis": map[string]any{
						"diagnosticMode":         "openFilesOnly",
						"autoSearchPaths":        true,
						"useLibraryCodeForTypes": true,
					}},
					"pyright": map[string]any{},
				},
				Venv:      "python.pythonPath",
				VenvPaths: "python.analysis.extraPaths",
			},
		},
	}
}

// goplsOptions are gopls's settings: diagnosticsDelay 0s, or errors in
// other packages arrive a second late; verboseWorkDoneProgress, so the end
// of the diagnostics of a change is announced rather than guessed.
func goplsOptions() map[string]any {
	return map[string]any{
		"diagnosticsDelay":        "0s",
		"verboseWorkDoneProgress": true,
	}
}

func (c Config) wait() time.Duration {
	if c.Wait > 0 {
		return c.Wait
	}
	return 2 * time.Second
}

func (c Config) maxWait() time.Duration {
	w := c.MaxWait
	if w <= 0 {
		w = 20 * time.Second
	}
	return max(w, c.wait())
}

func (c Config) maxErrors() (total, perFile int) {
	total = c.MaxErrors
	if total <= 0 {
		total = 10
	}
	return total, max(1, total/5)
}

func (s ServerConfig) settle() time.Duration {
	if s.Settle > 0 {
		return s.Settle
	}
	return 60 * time.Millisecond
}

func (s ServerConfig) languageID(lang, path string) string {
	if id, ok := s.LanguageIDs[filepath.Ext(path)]; ok {
		return id
	}
	return lang
}

// findRoot returns the workspace root of path for a server with the given
// markers: the directory holding the highest-priority marker found among
// path's ancestors, else fallback when it contains path, else path's
// directory.
func findRoot(path string, markers []string, fallback string) string {
	dir := filepath.Dir(path)
	for _, m := range markers {
		alts := strings.Split(m, "|")
		for d := dir; ; d = filepath.Dir(d) {
			if hasAny(d, alts) {
				return d
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if fallback != "" && within(fallback, path) {
		return fallback
	}
	return dir
}

func hasAny(dir string, names []string) bool {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// within reports whether p is root or inside it.
func within(root, p string) bool {
	if p == root {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// venvPython finds the interpreter of a virtual environment in root; venv
// is the environment's directory.
func venvPython(root string) (py, venv string) {
	for _, v := range []string{".venv", "venv"} {
		for _, bin := range []string{"bin/python", "Scripts/python.exe"} {
			p := filepath.Join(root, v, bin)
			if _, err := os.Stat(p); err == nil {
				return p, filepath.Join(root, v)
			}
		}
	}
	return "", ""
}

// runsInside reports whether the program at path is, once links are
// resolved, a file under one of dirs — or cannot be told, which counts
// as inside: a link that does not resolve is not run either.
func runsInside(path string, dirs []string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return true
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if rd, err := filepath.EvalSymlinks(d); err == nil {
			d = rd
		}
		if within(filepath.Clean(d), real) {
			return true
		}
	}
	return false
}

// sitePackages lists the site-packages directories of the virtual
// environment venv (lib/pythonX.Y/site-packages, lib64/…, Windows'
// Lib/site-packages), found by reading directories only.
func sitePackages(venv string) []string {
	var out []string
	for _, pattern := range []string{"lib/python*/site-packages", "lib64/python*/site-packages", "Lib/site-packages"} {
		matches, _ := filepath.Glob(filepath.Join(venv, filepath.FromSlash(pattern)))
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.IsDir() && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// binary reports whether the server's command is on the PATH of the
// server's environment (mm's own when Env is nil), and where.
func (s ServerConfig) binary() (string, bool) {
	if len(s.Command) == 0 {
		return "", false
	}
	p, err := lookPath(s.Command[0], s.Env)
	return p, err == nil
}

// lookPath is exec.LookPath in the PATH of env rather than of the process:
// mm looks for its language servers where the environment it was given
// says, which is the process's own except in tests that run mm in process.
func lookPath(name string, env []string) (string, error) {
	if env == nil || strings.ContainsRune(name, filepath.Separator) {
		return exec.LookPath(name)
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v // the last one wins, as in exec.Cmd
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // exec.LookPath refuses a relative entry too (ErrDot)
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// canonical makes a path absolute and resolves symlinks in its longest
// existing prefix, so that a file named through a link and the same file
// named by a server are one key.
func canonical(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
