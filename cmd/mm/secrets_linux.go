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

	"github.com/mm-agent/mm/permit/childenv"
)

// handoverVar names the descriptor the secrets arrive on after the
// re-exec.
const handoverVar = "MM_SECRETS_FD"

// hideSecrets keeps mm's secrets out of reach of the programs it starts:
// a command can read its parent's environment (/proc/$PPID/environ) and
// memory when the parent is dumpable, whatever environment the child was
// given. So mm marks itself non-dumpable (PR_SET_DUMPABLE 0:
// /proc/<pid>/environ, mem and ptrace are closed to other processes of
// the user) and re-executes itself without the secret variables in its
// environment, handing them over through a pipe. It returns the variables
// handed over to this process, which main puts into mm's environment value
// (config.Env): a child gets them only through the child environment
// policy.
//
// What the policy drops by default (names with KEY, TOKEN, SECRET,
// PASSWORD, CREDENTIAL, and MM_API_KEY) is hidden here, before anything
// is read; hide is how the config's own key variables (apiKeyEnv, under
// whatever name: LLM_AUTH) are hidden once the config is read, by the same
// re-exec, before anything starts — so the config is read once per
// process. hide is nil for the sandbox's helper, which mm starts with the
// child environment already. Anything that fails leaves mm as it was
// started (non-dumpable still), never stopped.
func hideSecrets(args []string) (held map[string]string, hide func(names []string)) {
	nonDumpable()
	held = receiveSecrets()
	if len(args) > 0 && args[0] == "__sandbox" {
		return held, nil
	}
	failed := false
	hide = func(names []string) {
		if !failed {
			failed = reexec(held, names) != nil
		}
	}
	hide(childenv.Policy{Drop: []string{"MM_API_KEY"}}.Dropped(os.Environ()))
	return held, hide
}

// reexec executes mm again without the variables of names in its
// environment, handing them over, with held, through a pipe. It returns
// nil without doing anything when none of names is in the environment,
// else only when mm could not hide them (then mm goes on as started; a
// failed exec says so on stderr).
func reexec(held map[string]string, names []string) error {
	var payload strings.Builder
	var kept []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(names, name) {
			payload.WriteString(kv)
			payload.WriteByte(0)
			continue
		}
		kept = append(kept, kv)
	}
	if payload.Len() == 0 {
		return nil
	}
	for k, v := range held {
		payload.WriteString(k + "=" + v)
		payload.WriteByte(0)
	}
	// A pipe holds 64 KiB without a reader: more would block the write.
	if payload.Len() > 60<<10 {
		return fmt.Errorf("%d bytes of secrets", payload.Len())
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = w.WriteString(payload.String())
	w.Close()
	if err != nil {
		return err
	}
	fd := int(r.Fd())
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, 0); errno != 0 {
		return errno
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	err = syscall.Exec(exe, os.Args, append(kept, handoverVar+"="+strconv.Itoa(fd)))
	// Still here: the exec failed; go on as started.
	fmt.Fprintln(os.Stderr, "mm: could not hide the secrets of the environment:", err)
	return err
}

// receiveSecrets reads the variables handed over by the re-exec that
// started this process; nil when none was.
func receiveSecrets() map[string]string {
	fd := os.Getenv(handoverVar)
	if fd == "" {
		return nil
	}
	os.Unsetenv(handoverVar)
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
