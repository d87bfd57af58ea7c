package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/mm-agent/mm/internal/testenv"
)

// noNetwork returns what puts a command in a network namespace of its
// own (in a user namespace, so no privilege is needed): its loopback is
// down, so nothing answers on any usual model-server port whatever runs
// on this machine — the machine of a user who has started no server.
func noNetwork(t *testing.T) func(*exec.Cmd) {
	t.Helper()
	isolate := func(cmd *exec.Cmd) {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET | syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	}
	probe := exec.Command("/bin/sh", "-c", ":")
	isolate(probe)
	if err := probe.Run(); err != nil {
		testenv.Unavailable(t, "cannot start a process without network (user and network namespaces): %v", err)
	}
	return isolate
}
