package confine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The helper is mm itself, in three roles, so that confining a command
// needs nothing but mm's own binary:
//
//	mm __sandbox --inner   the inner helper, started ahead of its
//	    command (spare_linux.go) in new user, mount, pid and IPC
//	    namespaces (and network, when the network is off): it reads its
//	    request — the command, its environment, directory and standard
//	    files, the plan — on descriptor 3. It is pid 1 of the new pid
//	    namespace: it builds the view of the file system the plan says,
//	    drops every capability, starts the command, reports its status on
//	    descriptor 3 and then reaps what the command left running.
//	mm __sandbox --plan PLAN -- ARGV…   the outer helper, for a program
//	    other than mm that starts the command (the editor's terminal): it
//	    starts an inner helper, hands it ARGV with its own environment,
//	    directory and standard files, relays the command's exit status,
//	    and leaves as soon as the command ends.
//	mm __sandbox --write DIR… --write-file FILE… -- ARGV…   Landlock,
//	    for such a program (landlock_linux.go). mm itself needs no helper
//	    for Landlock: it confines a thread of its own and starts the
//	    command from it (start_linux.go).
//
// The inner helper stays because a pid namespace dies with its first
// process: it lives while a job the command put in the background (a
// server under nohup) runs, as it would unconfined, while its status
// lets mm see the command end when it ends.

// SetupFailed is the exit status of a helper that could not confine the
// command: the command did not run.
const SetupFailed = 125

// Main runs the helper; args follow "__sandbox". It returns the exit
// status of the command, or SetupFailed with one line on stderr.
func Main(args []string, stderr io.Writer) int {
	switch {
	case len(args) == 1 && args[0] == "--inner":
		return serve(stderr)
	case len(args) == 0 || args[0] != "--plan":
		return landlockMain(args, stderr)
	case len(args) < 3 || args[2] != "--":
		fmt.Fprintln(stderr, "mm __sandbox: usage: mm __sandbox --plan PLAN -- PROGRAM ARGS…")
		return 2
	}
	p, err := decodePlan(args[1])
	if err != nil {
		fmt.Fprintln(stderr, "mm: sandbox:", err)
		return SetupFailed
	}
	argv := args[3:]
	if len(argv) == 0 && !p.Probe {
		fmt.Fprintln(stderr, "mm: sandbox: no command to run")
		return 2
	}
	return outer(p, argv, stderr)
}

// outer starts an inner helper in its namespaces, hands it the command,
// and returns the command's exit status as soon as the helper reports
// it.
func outer(p Plan, argv []string, stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "mm: sandbox: cannot find mm's executable:", err)
		return SetupFailed
	}
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, "mm: sandbox: cannot read the working directory:", err)
		return SetupFailed
	}
	h, err := startHelper(exe, namespaces(p.Network), []*os.File{os.Stdin, os.Stdout, os.Stderr})
	if err != nil {
		fmt.Fprintln(stderr, "mm: sandbox: cannot create the namespaces:", err, userNSHint(err))
		return SetupFailed
	}
	defer h.conn.Close()
	err = h.send(request{Plan: &p, Argv: argv, Env: os.Environ(), Dir: dir}, nil)
	if err == nil {
		err = h.conn.CloseWrite() // the plan is whole: nothing more
	}
	if err != nil {
		h.close()
		fmt.Fprintln(stderr, "mm: sandbox: cannot hand the command over:", err)
		return SetupFailed
	}
	if code, ok := h.status(); ok {
		// The inner helper lives on while a background job runs; its
		// parent is then whoever adopts orphans.
		return code
	}
	state, err := h.proc.Wait()
	switch {
	case err == nil && state.Success() && p.Probe:
		return 0
	case err == nil && state.ExitCode() > 0:
		return state.ExitCode()
	}
	if err == nil {
		err = errors.New(state.String())
	}
	fmt.Fprintln(stderr, "mm: sandbox: the confined command ended without a status:", err)
	return SetupFailed
}

// serve is a helper started ahead of its command: it reads its request,
// takes on the command's environment, directory and standard files, and
// confines the command as the request says.
func serve(stderr io.Writer) int {
	conn, req, rest, err := receive()
	if err != nil {
		fmt.Fprintln(stderr, "mm: sandbox: cannot read the command:", err)
		return SetupFailed
	}
	defer conn.Close()
	if req.Plan == nil {
		return 0 // mm left before giving it one
	}
	if len(req.Argv) == 0 && !req.Plan.Probe {
		fmt.Fprintln(stderr, "mm: sandbox: no command to run")
		return 2
	}
	os.Clearenv()
	for _, kv := range req.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			os.Setenv(k, v)
		}
	}
	if err := os.Chdir(req.Dir); err != nil {
		fmt.Fprintf(stderr, "mm: sandbox: cannot confine the command: enter %s: %v\n", req.Dir, err)
		return SetupFailed
	}
	return inner(*req.Plan, req.Argv, conn, rest, stderr)
}

// receive reads the request, the first line on descriptor 3; the
// standard files that come with it replace the helper's own. rest is
// what came after the line, the start of what follows (more).
func receive() (conn *net.UnixConn, req request, rest []byte, err error) {
	f := os.NewFile(3, "request")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, req, nil, err
	}
	conn, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, req, nil, errors.New("descriptor 3 is not a Unix socket")
	}
	var data []byte
	var fds []int
	fail := func(err error) (*net.UnixConn, request, []byte, error) {
		closeAll(fds)
		conn.Close()
		return nil, req, nil, err
	}
	buf, oob := make([]byte, 32<<10), make([]byte, unix.CmsgSpace(3*4))
	for !bytes.Contains(data, []byte{'\n'}) {
		n, oobn, flags, _, err := conn.ReadMsgUnix(buf, oob)
		data = append(data, buf[:n]...)
		if oobn > 0 {
			msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
			for i := 0; perr == nil && i < len(msgs); i++ {
				var rights []int
				rights, perr = unix.ParseUnixRights(&msgs[i])
				fds = append(fds, rights...)
			}
			if perr != nil {
				return fail(perr)
			}
		}
		if flags&unix.MSG_CTRUNC != 0 {
			return fail(errors.New("more descriptors than three came"))
		}
		if errors.Is(err, io.EOF) || err == nil && n == 0 && oobn == 0 {
			if len(data) == 0 {
				return conn, req, nil, nil // mm left before giving it one
			}
			return fail(io.ErrUnexpectedEOF)
		}
		if err != nil {
			return fail(err)
		}
	}
	switch len(fds) {
	case 0:
	case 3:
		for i, fd := range fds {
			if err := unix.Dup2(fd, i); err != nil {
				return fail(err)
			}
		}
		closeAll(fds)
	default:
		return fail(fmt.Errorf("%d descriptors came, not 3", len(fds)))
	}
	line, rest, _ := bytes.Cut(data, []byte{'\n'})
	if err := json.Unmarshal(line, &req); err != nil {
		return fail(fmt.Errorf("read the request: %w", err))
	}
	return conn, req, rest, nil
}

// readMore reads what follows the request, to the end of the socket's
// way in; rest is what receive read of it already.
func readMore(conn *net.UnixConn, rest []byte) (more, error) {
	var m more
	tail, err := io.ReadAll(conn)
	if err != nil {
		return m, err
	}
	if data := bytes.TrimSpace(append(rest, tail...)); len(data) > 0 {
		err = json.Unmarshal(data, &m)
	}
	return m, err
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// namespaces are the new namespaces of the inner helper. Where mm is
// root the user namespace maps every id to itself, so files keep their
// owners; elsewhere it maps the user alone, and the inner helper gets
// the capabilities it needs to set up through ambient capabilities,
// which it drops before the command starts.
func namespaces(network bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC,
	}
	if !network {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		a.UidMappings = identity("/proc/self/uid_map")
		a.GidMappings = identity("/proc/self/gid_map")
		a.GidMappingsEnableSetgroups = true
		return a
	}
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
	return a
}

// identity maps every id the current user namespace has to itself.
func identity(file string) []syscall.SysProcIDMap {
	data, err := os.ReadFile(file)
	if err != nil {
		return []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}
	}
	var out []syscall.SysProcIDMap
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		first, err1 := strconv.Atoi(f[0])
		n, err2 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil {
			out = append(out, syscall.SysProcIDMap{ContainerID: first, HostID: first, Size: n})
		}
	}
	return out
}

// userNSHint says why the kernel may refuse a user namespace.
func userNSHint(err error) string {
	if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EINVAL) {
		return ""
	}
	for _, s := range []struct{ file, bad, why string }{
		{"/proc/sys/kernel/unprivileged_userns_clone", "0", "(unprivileged user namespaces are off: kernel.unprivileged_userns_clone=0)"},
		{"/proc/sys/user/max_user_namespaces", "0", "(user namespaces are off: user.max_user_namespaces=0)"},
		{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1", "(AppArmor restricts unprivileged user namespaces: kernel.apparmor_restrict_unprivileged_userns=1)"},
	} {
		if b, err := os.ReadFile(s.file); err == nil && strings.TrimSpace(string(b)) == s.bad {
			return s.why
		}
	}
	return "(user namespaces are not allowed here)"
}

// inner is pid 1 of the new namespaces: it sets up — the plan, then
// what more follows it on conn — starts the command, reports its exit
// status on conn, and reaps.
func inner(p Plan, argv []string, conn *net.UnixConn, rest []byte, stderr io.Writer) int {
	// Capabilities, no_new_privs and Landlock's domain are per thread,
	// and the command is forked from the thread that sets them.
	runtime.LockOSThread()
	fail := func(what string, err error) int {
		fmt.Fprintf(stderr, "mm: sandbox: cannot confine the command: %s: %v\n", what, err)
		return SetupFailed
	}
	dir, err := os.Getwd()
	if err != nil {
		return fail("read the working directory", err)
	}
	environ := os.Environ()
	keptSockets, dropped := socketPaths(environ, p.Keep)
	if err := build(p, keptSockets, dropped); err != nil {
		return fail("build the file system view", err)
	}
	m, err := readMore(conn, rest)
	if err != nil {
		return fail("read the rest of the plan", err)
	}
	for _, path := range m.ReadOnly {
		if err := bindReadOnly(path); err != nil {
			return fail("build the file system view", err)
		}
	}
	if !p.Network {
		if err := loopbackUp(); err != nil {
			return fail("bring up the loopback interface", err)
		}
	}
	// The working directory still points into the mounts as they were.
	if err := os.Chdir(dir); err != nil {
		return fail("enter "+dir, err)
	}
	if p.Probe {
		return 0
	}
	scope()
	if err := dropPrivileges(); err != nil {
		return fail("drop privileges", err)
	}
	env := withoutSockets(environ, p.Keep)
	path, err := lookPath(argv[0], env)
	if err != nil {
		fmt.Fprintln(stderr, "mm: sandbox:", err)
		return 127
	}
	// syscall's ForkExec, not os/exec: this thread forks, and os/exec's
	// first start in a process costs a trial fork of its own.
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2}})
	if err != nil {
		fmt.Fprintln(stderr, "mm: sandbox: start", argv[0]+":", err)
		return 126
	}
	// Nothing of the command's output passes through here: let the
	// reader see its end when the command's own descriptors close.
	if null, err := os.Open(os.DevNull); err == nil {
		for fd := 0; fd <= 2; fd++ {
			unix.Dup2(int(null.Fd()), fd)
		}
		null.Close()
	}
	reap(pid, conn)
	return 0
}

// reap waits for every process of the namespace: the command's status
// goes to status as soon as it ends; the helper returns when the last
// background job has ended too, which ends the namespace.
func reap(command int, status io.WriteCloser) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		if pid == command {
			code := ws.ExitStatus()
			if ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
			fmt.Fprintf(status, "%d\n", code)
			status.Close()
		}
	}
}

// dropPrivileges leaves the command no capability in any namespace: the
// bounding and inheritable sets emptied and the ambient one cleared, so
// that even a command whose user is root in the namespace gains none at
// exec, and no_new_privs, so no set-user-id program gives them back. The
// mounts set up above can then neither be undone nor looked under.
func dropPrivileges() error {
	for c := 0; c < 64; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break // past the last capability
			}
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear the ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read the capabilities: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear the inheritable capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	return nil
}

// loopbackUp brings up lo in the new network namespace: a command may
// still talk to what it starts itself on 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
