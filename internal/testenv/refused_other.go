//go:build !unix

package testenv

import "net"

// holdPort, where sockets cannot be bound without listening: a port that
// was free a moment ago, which another listener may take.
func holdPort() (port int, release func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port, func() {}, nil
}
