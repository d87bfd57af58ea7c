//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// handoverVar names the descriptor the secrets arrive on after the
// re-exec.
const handoverVar = "MM_SECRETS_FD"

// hideSecrets keeps mm's secrets out of reach of the programs it starts:
// a command can read its parent's environment (/proc/$PPID/environ) and
// memory when the parent is dumpable, whatever environment the child was
// given. So mm re-executes itself once, at start, without the secret
// variables in its environment, handing them over through a pipe, and
// marks the process non-dumpable (PR_SET_DUMPABLE 0: /proc/<pid>/environ,
// mem and ptrace are closed to other processes of the user). The
// secrets come back from the pipe as the variables it returns, which main
// puts into mm's environment value (config.Env): a child gets them only
// through the child environment policy. Anything that fails leaves mm as
// it was started (non-dumpable still), never stopped.
func hideSecrets(args []string) map[string]string {
	defer nonDumpable()
	if fd := os.Getenv(handoverVar); fd != "" {
		os.Unsetenv(handoverVar)
		return receiveSecrets(fd)
	}
	if len(args) > 0 && args[0] == "__sandbox" {
		return nil
	}
	environ := os.Environ()
	names := secretNames(args, environ)
	if len(names) == 0 {
		return nil
	}
	var payload strings.Builder
	var kept []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(names, name) {
			payload.WriteString(kv)
			payload.WriteByte(0)
			continue
		}
		kept = append(kept, kv)
	}
	// A pipe holds 64 KiB without a reader: more would block the write.
	if payload.Len() == 0 || payload.Len() > 60<<10 {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	if _, err := w.WriteString(payload.String()); err != nil {
		r.Close()
		w.Close()
		return nil
	}
	w.Close()
	fd := int(r.Fd())
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, 0); errno != 0 {
		r.Close()
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		r.Close()
		return nil
	}
	kept = append(kept, handoverVar+"="+strconv.Itoa(fd))
	err = syscall.Exec(exe, os.Args, kept)
	// Still here: the exec failed; go on as started.
	fmt.Fprintln(os.Stderr, "mm: could not hide the secrets of the environment:", err)
	r.Close()
	return nil
}

// receiveSecrets reads the variables handed over by the re-exec.
func receiveSecrets(fd string) map[string]string {
	n, err := strconv.Atoi(fd)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(n), "secrets")
	if f == nil {
		return nil
	}
	defer f.Close()
	vars := map[string]string{}
	rd := bufio.NewReader(f)
	for {
		kv, err := rd.ReadString(0)
		if name, value, ok := strings.Cut(strings.TrimSuffix(kv, "\x00"), "="); ok && name != "" {
			vars[name] = value
		}
		if err != nil {
			break
		}
	}
	return vars
}

// nonDumpable marks the process non-dumpable (PR_SET_DUMPABLE = 4).
func nonDumpable() {
	syscall.RawSyscall(syscall.SYS_PRCTL, 4, 0, 0)
}
