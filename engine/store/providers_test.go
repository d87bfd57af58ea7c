package store

import (
	"os"
	"testing"
)

// TestProvidersRemembered: the editor's choice of server is kept per
// workspace, written atomically in the state directory (0600), and a
// corrupt file is no choice.
func TestProvidersRemembered(t *testing.T) {
	s := Open(t.TempDir(), nil)
	a, b := "/work/a", "/work/b"
	if err := s.UpdateProviders(a, func(p *Providers) {
		p.Set = map[string]Endpoint{"mine": {APIType: "openai", BaseURL: "http://127.0.0.1:9/v1"}}
		p.Active = "mine"
	}); err != nil {
		t.Fatal(err)
	}
	got := s.Providers(a)
	if got.Active != "mine" || got.Set["mine"].BaseURL != "http://127.0.0.1:9/v1" {
		t.Errorf("workspace a: %+v", got)
	}
	if other := s.Providers(b); other.Active != "" || len(other.Set) != 0 {
		t.Errorf("workspace b sees a's choice: %+v", other)
	}
	fi, err := os.Stat(s.providersPath(a))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v %v", fi.Mode(), err)
	}
	if err := os.WriteFile(s.providersPath(a), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := s.Providers(a); got.Active != "" {
		t.Errorf("a corrupt file gave %+v", got)
	}
}
