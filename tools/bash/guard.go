package bash

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// refusal returns why line must not run, as a text for the model, or ""
// when it may be offered for approval. home is the user's home directory
// ("" when unknown). A catastrophic command is refused before a bare
// background job: it matters more.
func refusal(line, home string) string {
	if why := catastrophic(line, home, 0); why != "" {
		return "[refused: " + why + " — mm never runs this. Name exactly what you mean instead, e.g. rm -rf ./build]"
	}
	return bareBackground(line)
}

// maxDepth bounds how deep `bash -c` and `eval` arguments are looked into.
const maxDepth = 4

// catastrophic says why line would destroy the machine or the user's data
// beyond repair, or "".
func catastrophic(line, home string, depth int) string {
	if depth > maxDepth {
		return ""
	}
	if isForkBomb(line) {
		return "this is a fork bomb"
	}
	for _, c := range commands(lex(line)) {
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
		if script, ok := shellScript(args); ok {
			return catastrophic(script, home, depth+1)
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

func isShell(name string) bool {
	switch name {
	case "bash", "sh", "zsh", "dash", "ksh":
		return true
	}
	return false
}

// shellScript finds the script of `bash -c script` (or -lc, -ec, …).
func shellScript(args []string) (string, bool) {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") {
			return "", false
		}
		if strings.Contains(a, "c") && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// forkBomb matches a function that pipes itself into itself in the
// background: `:(){ :|:& };:` and its renamed variants.
var forkBomb = regexp.MustCompile(`(?:function\s+)?([\w:.-]+)\s*(?:\(\s*\))?\s*\{\s*([\w:.-]+)\s*\|&?\s*([\w:.-]+)\s*&`)

func isForkBomb(line string) bool {
	for _, m := range forkBomb.FindAllStringSubmatch(line, -1) {
		if m[1] == m[2] && m[2] == m[3] {
			return true
		}
	}
	return false
}

// bareBackground refuses a command line that ends with `&` while the
// output of that job is not redirected: the job would outlive the call
// with its output lost and nothing to stop it by. The text gives the
// command rewritten with nohup and a log file.
func bareBackground(line string) string {
	toks := lex(line)
	for len(toks) > 0 && toks[len(toks)-1].op && (toks[len(toks)-1].text == "\n" || toks[len(toks)-1].text == ";") {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 || !toks[len(toks)-1].op || toks[len(toks)-1].text != "&" {
		return ""
	}
	amp := len(toks) - 1
	// Walk back to the start of the job's pipeline (start) and of its last
	// command (last), stepping over subshells and brace groups whole.
	start, last, depth, grouped := amp, amp, 0, false
walk:
	for ; start > 0; start-- {
		t := toks[start-1]
		switch {
		case t.text == ")" || t.text == "}":
			depth++
			grouped = true
		case (t.text == "(" || t.text == "{") && depth > 0:
			depth--
		case !t.op || depth > 0 || isRedirect(t.text):
		case t.text == "|" || t.text == "|&":
			if last == amp {
				last = start
			}
		default:
			break walk
		}
	}
	if last == amp {
		last = start
	}
	depth = 0
	for i := last; i < amp; i++ {
		switch t := toks[i]; {
		case t.text == "(" || t.text == "{":
			depth++
		case t.text == ")" || t.text == "}":
			depth--
		case depth == 0 && t.op && isRedirect(t.text):
			target := ""
			if i+1 < amp && !toks[i+1].op {
				target = toks[i+1].text
			}
			if (redirect{op: t.text, target: target}).writesStdout() {
				return ""
			}
		}
	}
	job := strings.TrimSpace(line[toks[start].pos:toks[amp].pos])
	fix := "nohup cmd > cmd.log 2>&1 &"
	log := "cmd.log"
	if !grouped && start < amp {
		log = logName(toks[start:amp])
		nohup := "nohup "
		if toks[start].text == "nohup" {
			nohup = ""
		}
		fix = strings.TrimSpace(line[:toks[start].pos] + nohup + job + " > " + log + " 2>&1 &")
	}
	return fmt.Sprintf("[refused: `%s &` would run in the background with its output lost and no way to stop it. Run instead:\n%s\nthen read %s in a later call (tail -20 %s).]", job, fix, log, log)
}

// logName names the log of a background job after its program.
func logName(toks []token) string {
	for _, t := range toks {
		if t.op {
			continue
		}
		if words := program([]string{t.text}); len(words) == 0 {
			continue
		}
		name := strings.Map(func(r rune) rune {
			if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
				return r
			}
			return -1
		}, baseName(t.text))
		if name = strings.Trim(name, "."); name != "" {
			return name + ".log"
		}
		break
	}
	return "job.log"
}
