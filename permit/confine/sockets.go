package confine

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// A confined command must not reach the programs of the user's session
// through their sockets: a tmux server runs `tmux run-shell` for whoever
// connects, an ssh agent signs, a desktop bus starts programs. Their
// addresses travel in variables; the sockets themselves live in /tmp and
// /run, which a command gets empty (hidden), or elsewhere, where the
// helper covers the one a variable names with /dev/null.

// socketVars name the session's sockets, or what leads to them, whatever
// their value looks like.
var socketVars = []string{
	"TMUX", "TMUX_PANE", "STY", "ZELLIJ", "ZELLIJ_SESSION_NAME",
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO",
	"DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS",
	"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_RUNTIME_DIR",
	"SWAYSOCK", "I3SOCK", "HYPRLAND_INSTANCE_SIGNATURE",
	"KITTY_LISTEN_ON", "WEZTERM_UNIX_SOCKET", "ALACRITTY_SOCKET",
	"NVIM", "NVIM_LISTEN_ADDRESS", "EMACS_SOCKET_NAME",
	"VSCODE_IPC_HOOK", "VSCODE_IPC_HOOK_CLI", "VSCODE_GIT_IPC_HANDLE",
	"DOCKER_HOST", "PULSE_SERVER", "PIPEWIRE_REMOTE",
}

// SocketVars are the variables of environ a confined command does not
// get: those named above, and any whose value names a socket file or a
// unix: address — the kernel says what is a socket, not the name. keep
// are the names the user keeps (shell patterns, as bashEnv.keep).
func SocketVars(environ, keep []string) []string {
	var out []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if name == "" || kept(keep, name) {
			continue
		}
		if slices.Contains(socketVars, name) || strings.HasPrefix(value, "unix:") || len(sockets(name, value, environ)) > 0 {
			out = append(out, name)
		}
	}
	return out
}

// withoutSockets is environ without SocketVars.
func withoutSockets(environ, keep []string) []string {
	drop := SocketVars(environ, keep)
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, name) {
			out = append(out, kv)
		}
	}
	return out
}

// socketPaths are the socket files the variables of environ name:
// those of kept variables, to show the command although they may live in
// a hidden directory, and those of the others, to cover where the command
// would see them.
func socketPaths(environ, keep []string) (keptSockets, dropped []string) {
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		for _, s := range sockets(name, value, environ) {
			if kept(keep, name) {
				keptSockets = append(keptSockets, s)
			} else {
				dropped = append(dropped, s)
			}
		}
	}
	return keptSockets, dropped
}

// visible reports whether the command sees p: outside the hidden
// directories, or inside a tree shown again (a home under /tmp).
func visible(p string, shown []string) bool {
	if !inHidden(p) {
		return true
	}
	for _, d := range shown {
		if under(p, d) {
			return true
		}
	}
	return false
}

// sockets are the socket files a variable's value names: absolute paths
// within it (TMUX=/tmp/tmux-1000/default,123,0,
// DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus), an X display's
// socket (DISPLAY=:0), a Wayland display's (relative to XDG_RUNTIME_DIR).
func sockets(name, value string, environ []string) []string {
	var out []string
	isSocket := func(p string) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Type() == fs.ModeSocket {
			out = append(out, filepath.Clean(p))
		}
	}
	switch name {
	case "DISPLAY":
		if d, ok := strings.CutPrefix(value, ":"); ok {
			d, _, _ = strings.Cut(d, ".")
			isSocket("/tmp/.X11-unix/X" + d)
		}
	case "WAYLAND_DISPLAY":
		if !path.IsAbs(value) {
			value = path.Join(lookup(environ, "XDG_RUNTIME_DIR"), value)
		}
	}
	for _, f := range strings.FieldsFunc(value, func(r rune) bool { return strings.ContainsRune(",;:= \t", r) }) {
		if strings.HasPrefix(f, "/") {
			isSocket(f)
		}
	}
	return out
}

// hidden are the directories a command gets fresh and empty instead of
// the user's: the places where the session's sockets and other programs'
// files live (/run/user/…, tmux's and ssh-agent's sockets in /tmp). /tmp
// is the plan's private directory instead, when it has one.
var hidden = []string{"/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm"}

// under reports whether p is dir or below it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// inHidden reports whether p lies in a directory the command gets empty.
func inHidden(p string) bool {
	for _, d := range hidden {
		if under(p, d) {
			return true
		}
	}
	return false
}

func kept(keep []string, name string) bool {
	for _, p := range keep {
		if ok, _ := path.Match(strings.ToUpper(p), strings.ToUpper(name)); ok {
			return true
		}
	}
	return false
}

func lookup(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if s, ok := strings.CutPrefix(kv, name+"="); ok {
			v = s
		}
	}
	return v
}
