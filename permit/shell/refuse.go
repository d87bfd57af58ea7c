package shell

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Refusal returns why line must not run, as a text for the model, or ""
// when it may be offered for approval. home is the user's home directory
// ("" when unknown). A catastrophic command is refused before a bare
// background job: it matters more.
func Refusal(line, home string) string {
	if _, err := parse(line); err != nil {
		return "[refused: bash cannot parse this command line (" + err.Error() + ") — fix the quoting or the syntax and send it again]"
	}
	if why := catastrophic(line, home, 0); why != "" {
		return "[refused: " + why + " — mm never runs this. Name exactly what you mean instead, e.g. rm -rf ./build]"
	}
	return bareBackground(line)
}

// maxDepth bounds how deep `bash -c` and `eval` arguments are looked into.
const maxDepth = 4

// catastrophic says why line would destroy the machine or the user's data
// beyond repair, or "". A line that does not parse is refused by the
// caller; a script inside it (bash -c, eval) that does not parse is
// refused here, since bash would run it up to the error.
func catastrophic(line, home string, depth int) string {
	if depth > maxDepth {
		return ""
	}
	f, err := parse(line)
	if err != nil {
		if depth > 0 {
			return "the script given to bash -c or eval does not parse (" + err.Error() + "), and bash would run what comes before the error"
		}
		return ""
	}
	if isForkBomb(line, f) {
		return "this is a fork bomb"
	}
	for _, c := range commands(line, f) {
		if why := catastrophicCommand(c, home, depth); why != "" {
			return why
		}
	}
	return ""
}

func catastrophicCommand(c command, home string, depth int) string {
	for _, r := range c.redirs {
		if strings.Contains(r.op, ">") && isDisk(r.target) {
			return "writing to " + r.target + " would overwrite a disk"
		}
	}
	words := program(c.words)
	if len(words) == 0 {
		return ""
	}
	name, args := baseName(words[0]), words[1:]
	switch {
	case name == "rm" || name == "chmod" || name == "chown" || name == "chgrp":
		if t := wipedTarget(args, home); t != "" {
			return "`" + strings.Join(words, " ") + "` would wipe " + t
		}
	case name == "mkfs" || strings.HasPrefix(name, "mkfs.") || name == "mke2fs" || name == "wipefs":
		return "`" + name + "` would erase a disk"
	case name == "dd":
		for _, a := range args {
			if dev, ok := strings.CutPrefix(a, "of="); ok && isDisk(dev) {
				return "`dd of=" + dev + "` would overwrite a disk"
			}
		}
	case name == "shutdown" || name == "reboot" || name == "halt" || name == "poweroff":
		return "`" + name + "` would stop the machine"
	case name == "init" || name == "telinit":
		if len(args) > 0 && (args[0] == "0" || args[0] == "6") {
			return "`" + name + " " + args[0] + "` would stop the machine"
		}
	case name == "systemctl":
		for _, a := range args {
			switch a {
			case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate":
				return "`systemctl " + a + "` would stop the machine"
			}
		}
	case name == "eval":
		return catastrophic(strings.Join(args, " "), home, depth+1)
	case isShell(name):
		if r := readShell(args); r.hasC {
			return catastrophic(r.script, home, depth+1)
		}
	}
	return ""
}

// wipedTarget returns the argument of a recursive rm/chmod/chown that
// names the root, a top-level directory or the home directory, or "".
func wipedTarget(args []string, home string) string {
	recursive, opts := false, true
	var targets []string
	for _, a := range args {
		switch {
		case opts && a == "--":
			opts = false
		case opts && a == "--recursive":
			recursive = true
		case opts && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--"):
			recursive = recursive || strings.ContainsAny(a, "rR")
		case opts && strings.HasPrefix(a, "--"):
		default:
			targets = append(targets, a)
		}
	}
	if !recursive {
		return ""
	}
	for _, t := range targets {
		if isVital(t, home) {
			return t
		}
	}
	return ""
}

// isVital reports whether a path is one a recursive delete or permission
// change must never touch: /, /*, a top-level directory such as /usr or
// /home (/tmp aside), or the home directory itself (~, ~/, $HOME/*).
func isVital(t, home string) bool {
	for _, h := range []string{"${HOME}", "$HOME"} {
		if rest, ok := strings.CutPrefix(t, h); ok {
			t = "~" + rest
		}
	}
	if home != "" && home != "/" {
		if rest, ok := strings.CutPrefix(t, home); ok && (rest == "" || rest[0] == '/') {
			t = "~" + rest
		}
	}
	for strings.HasSuffix(t, "/*") || t == "*" {
		t = strings.TrimSuffix(strings.TrimSuffix(t, "*"), "/")
		if t == "" {
			t = "/"
		}
	}
	if t == "" {
		return false
	}
	if strings.HasPrefix(t, "~") {
		return path.Clean(t) == "~"
	}
	if !strings.HasPrefix(t, "/") {
		return false
	}
	t = path.Clean(t)
	return t == "/" || (path.Dir(t) == "/" && t != "/tmp")
}

// isDisk reports whether a /dev path is a disk or a partition.
func isDisk(p string) bool {
	dev, ok := strings.CutPrefix(p, "/dev/")
	if !ok {
		return false
	}
	for _, prefix := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "dm-", "md", "mapper/", "loop"} {
		if strings.HasPrefix(dev, prefix) {
			return true
		}
	}
	return false
}

// isForkBomb reports whether the line defines a function that calls
// itself in a pipeline or in the background — `:(){ :|:& };:` and its
// renamed variants: each call spawns more, without end.
func isForkBomb(src string, f *syntax.File) bool {
	bomb := false
	syntax.Walk(f, func(n syntax.Node) bool {
		fd, ok := n.(*syntax.FuncDecl)
		if !ok || fd.Name == nil || fd.Body == nil {
			return !bomb
		}
		name := fd.Name.Value
		syntax.Walk(fd.Body, func(m syntax.Node) bool {
			switch m := m.(type) {
			case *syntax.BinaryCmd:
				if (m.Op == syntax.Pipe || m.Op == syntax.PipeAll) && (calls(src, m.X, name) || calls(src, m.Y, name)) {
					bomb = true
				}
			case *syntax.Stmt:
				if m.Background && calls(src, m, name) {
					bomb = true
				}
			}
			return !bomb
		})
		return !bomb
	})
	return bomb
}

// calls reports whether the tree runs the command name.
func calls(src string, root syntax.Node, name string) bool {
	found := false
	syntax.Walk(root, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			if w, ok := literal(src, c.Args[0]); ok && w == name {
				found = true
			}
		}
		return !found
	})
	return found
}

// bareBackground refuses a command line that ends with `&` while the
// output of that job is not redirected: the job would outlive the call
// with its output lost and nothing to stop it by. The text gives the
// command rewritten with nohup and a log file.
func bareBackground(line string) string {
	f, err := parse(line)
	if err != nil || len(f.Stmts) == 0 {
		return ""
	}
	last := f.Stmts[len(f.Stmts)-1]
	if !last.Background {
		return ""
	}
	// The job's output is that of the last command of the last pipeline
	// of its && / || list; a redirection anywhere on the way sends it
	// to a file.
	job := last
	for {
		if redirectsStdout(line, job) {
			return ""
		}
		b, ok := job.Cmd.(*syntax.BinaryCmd)
		if !ok || (b.Op != syntax.AndStmt && b.Op != syntax.OrStmt) {
			break
		}
		job = b.Y
	}
	pipeline := elements(job)
	if redirectsStdout(line, pipeline[len(pipeline)-1]) {
		return ""
	}
	from := int(job.Pos().Offset())
	text := strings.TrimSpace(line[from:int(last.Semicolon.Offset())])
	fix, log := "nohup cmd > cmd.log 2>&1 &", "cmd.log"
	if first, ok := simple(pipeline); ok {
		log = logName(line, first)
		nohup := "nohup "
		if w, _ := literal(line, first.Args[0]); w == "nohup" {
			nohup = ""
		}
		fix = strings.TrimSpace(line[:from] + nohup + text + " > " + log + " 2>&1 &")
	}
	return fmt.Sprintf("[refused: `%s &` would run in the background with its output lost and no way to stop it. Run instead:\n%s\nthen read %s in a later call (tail -20 %s).]", text, fix, log, log)
}

// elements are the commands of a pipeline, in order.
func elements(st *syntax.Stmt) []*syntax.Stmt {
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		return append(elements(b.X), elements(b.Y)...)
	}
	return []*syntax.Stmt{st}
}

// simple returns the first command of a pipeline made of simple commands
// only (no subshell or group, which nohup cannot prefix).
func simple(pipeline []*syntax.Stmt) (*syntax.CallExpr, bool) {
	for _, st := range pipeline {
		if c, ok := st.Cmd.(*syntax.CallExpr); !ok || len(c.Args) == 0 {
			return nil, false
		}
	}
	return pipeline[0].Cmd.(*syntax.CallExpr), true
}

func redirectsStdout(src string, st *syntax.Stmt) bool {
	for _, r := range st.Redirs {
		if redirOf(src, r).writesStdout() {
			return true
		}
	}
	return false
}

// logName names the log of a background job after its program.
func logName(src string, c *syntax.CallExpr) string {
	var words []string
	for _, w := range c.Args {
		words = append(words, wordText(src, w))
	}
	if words = program(words); len(words) == 0 {
		return "job.log"
	}
	name := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, baseName(words[0]))
	if name = strings.Trim(name, "."); name != "" {
		return name + ".log"
	}
	return "job.log"
}
