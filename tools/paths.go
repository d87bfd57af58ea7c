package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Resolve turns a path written by the model into an absolute path inside
// the workspace. Relative paths are taken from env.Cwd(). Symlinks are
// resolved (for the part of the path that exists) before the check, so a
// link pointing outside the workspace is refused too. The error text is a
// repair instruction.
func Resolve(env Env, p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", errors.New(`[error: "path" is empty — give a file path relative to the workspace, e.g. "main.go"]`)
	}
	if strings.HasPrefix(p, "~/") || p == "~" {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.Cwd(), p)
	}
	p = filepath.Clean(p)
	if err := Inside(env.Roots(), p); err != nil {
		return "", err
	}
	return p, nil
}

// Inside checks that the absolute path p, its symlinks followed — a
// dangling one too — stays inside one of roots. The error text is a
// repair instruction; a path outside is ErrOutside. Writers that do not
// go through the disk's os.Root (the editor's fs/write_text_file) call it
// again right before writing.
func Inside(roots []string, p string) error {
	real, err := evalExisting(p)
	if err != nil {
		return errors.New("[error: cannot resolve " + p + ": " + err.Error() + "]")
	}
	for _, root := range roots {
		rr, err := evalExisting(filepath.Clean(root))
		if err != nil {
			continue
		}
		if within(rr, real) {
			return nil
		}
	}
	return outsideError("[error: " + p + " is outside the workspace (" + strings.Join(roots, ", ") + ") — use a path inside it]")
}

// ErrOutside marks Resolve's refusal of a path outside the workspace.
var ErrOutside = errors.New("outside the workspace")

// outsideError is that refusal, worded for the model.
type outsideError string

func (e outsideError) Error() string { return string(e) }
func (e outsideError) Unwrap() error { return ErrOutside }

// Rel gives path relative to the session's cwd when it is inside it, for
// short messages; otherwise the absolute path.
func Rel(env Env, path string) string {
	if r, err := filepath.Rel(env.Cwd(), path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func within(root, p string) bool {
	if p == root {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// evalExisting resolves symlinks in the longest existing prefix of p and
// appends the rest unchanged. A dangling link on the way is followed to
// where it points (`notes.txt -> ../outside/x`): writing there would
// create its target, so that target is what confinement must check.
func evalExisting(p string) (string, error) {
	rest := ""
	cur := p
	for hops := 0; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if hops++; hops > 40 {
				return "", errors.New("too many levels of symbolic links")
			}
			target, err := os.Readlink(cur)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			cur = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// Real is where a write to the absolute path p lands: every link on the
// way followed — a dangling final one too, whose target the write would
// create — and the part that does not exist yet appended as written. A
// path that cannot be resolved (a loop) is returned as it is.
func Real(p string) string {
	real, err := evalExisting(filepath.Clean(p))
	if err != nil {
		return filepath.Clean(p)
	}
	return real
}
