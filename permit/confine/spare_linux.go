package confine

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Starting mm's binary is most of what confining a command in
// namespaces would cost: the Go runtime, the package inits and the page
// faults of a big executable take about 5 ms, the namespaces and mounts
// themselves under 1. So the sandbox keeps one inner helper started
// ahead — its namespaces created, its start-up done — that waits for its
// command on a socket; a command takes it, and the next one is started
// once the command has ended, while the model reads the output. Each
// helper serves one command: every command still gets new namespaces and
// a view of the file system built when it starts, from the plan decided
// then.

// helper is a helper process and mm's end of its socket.
type helper struct {
	proc *os.Process
	conn *net.UnixConn
}

// startHelper starts exe as a helper, `mm __sandbox --inner`, with attr
// (its namespaces, its session) and stdio as its descriptors 0 to 2
// (/dev/null when nil); its request will come on descriptor 3. Its
// environment is empty: the command's comes with the request.
func startHelper(exe string, attr *syscall.SysProcAttr, stdio []*os.File) (*helper, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("create the helper's socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "helper"), os.NewFile(uintptr(fds[1]), "request")
	defer theirs.Close()
	defer ours.Close() // FileConn keeps a copy
	if stdio == nil {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return nil, err
		}
		defer null.Close()
		stdio = []*os.File{null, null, null}
	}
	p, err := os.StartProcess(exe, []string{"mm", "__sandbox", "--inner"}, &os.ProcAttr{
		Dir: "/", Env: []string{}, Files: append(stdio[:3:3], theirs), Sys: attr,
	})
	if err != nil {
		return nil, err
	}
	c, err := net.FileConn(ours)
	if err != nil {
		p.Kill()
		p.Wait()
		return nil, fmt.Errorf("open the helper's socket: %w", err)
	}
	return &helper{proc: p, conn: c.(*net.UnixConn)}, nil
}

// send writes v to the helper, a line of JSON; stdio, when given, go
// with it, to become the command's standard input, output and error.
func (h *helper) send(v any, stdio []*os.File) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	var oob []byte
	if stdio != nil {
		oob = unix.UnixRights(int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd()))
	}
	n, _, err := h.conn.WriteMsgUnix(data, oob, nil)
	if err == nil && n < len(data) {
		_, err = h.conn.Write(data[n:])
	}
	return err
}

// status is the command's exit status as the helper reports it, false
// when it reports none: it could not set up, or it was killed.
func (h *helper) status() (int, bool) {
	line, err := bufio.NewReader(h.conn).ReadString('\n')
	code, cerr := strconv.Atoi(strings.TrimSpace(line))
	return code, err == nil && cerr == nil
}

// close ends a helper that will not serve: one never used, or one
// whose request could not be sent.
func (h *helper) close() {
	h.conn.Close()
	h.proc.Kill()
	h.proc.Wait()
}

// spawn starts an inner helper in new namespaces. It leads a session of
// its own, so that the command's process group is the helper's, killed
// as one.
func (s *Sandbox) spawn() (*helper, error) {
	attr := namespaces(s.opts.Network)
	attr.Setsid = true
	h, err := startHelper(s.opts.Exe, attr, nil)
	if err != nil {
		if hint := userNSHint(err); hint != "" {
			err = fmt.Errorf("%w %s", err, hint)
		}
		return nil, fmt.Errorf("create the namespaces: %w", err)
	}
	return h, nil
}
