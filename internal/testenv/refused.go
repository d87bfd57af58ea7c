package testenv

import (
	"fmt"
	"testing"
)

// RefusedURL is "http://127.0.0.1:PORT", where every connection is
// refused for as long as the test runs. A server merely closed does not
// give that: the kernel hands its port to the next listener that asks,
// and in a run of hundreds of fake servers, another test's server then
// answers the "dead" URL. The port is held instead: bound, never
// listened on, so connecting gets a reset and nothing else can take it.
func RefusedURL(t testing.TB) string {
	t.Helper()
	port, release, err := holdPort()
	if err != nil {
		t.Fatalf("testenv: no loopback port to hold: %v", err)
	}
	t.Cleanup(release)
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}
