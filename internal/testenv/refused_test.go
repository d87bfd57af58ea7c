//go:build unix

package testenv_test

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/mm-agent/mm/internal/testenv"
)

// TestRefusedURL: connecting to the URL is refused, and no listener of
// the run can take its port while the test lasts.
func TestRefusedURL(t *testing.T) {
	url := testenv.RefusedURL(t)
	addr := strings.TrimPrefix(url, "http://")
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("a listener could take the held port %s", addr)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("%s accepted a connection", url)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", url, err)
	}
}
