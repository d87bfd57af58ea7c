package testenv

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Process is one line of /proc/<pid>/stat, as the tests that look for
// leaked children read it.
type Process struct {
	Comm, State, PPID, PGRP string
}

// Processes lists the processes in /proc by pid (Linux; empty
// elsewhere).
func Processes() map[string]Process {
	out := map[string]Process{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if i < 0 || j < i {
			continue
		}
		f := strings.Fields(s[j+1:])
		if len(f) < 3 {
			continue
		}
		out[e.Name()] = Process{Comm: s[i+1 : j], State: f[0], PPID: f[1], PGRP: f[2]}
	}
	return out
}

// Listener listens on a loopback port and closes every connection it
// accepts: something a network test can reach, or find unreachable. It
// is closed when the test ends.
func Listener(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l
}
