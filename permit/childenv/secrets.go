package childenv

import (
	"slices"
	"strings"
	"sync"
)

// Secrets are the secrets mm learns while it runs: an editor keeps mm
// for hours, and a config read again at a new session may name a new
// apiKeyEnv. From then on, every policy sharing the set drops those
// variables from a command's environment and masks their values in its
// output — in sessions already open too, whose policies were made before
// — and the log masks them (cmd/mm/internal/logfile). The zero value is
// empty; a nil *Secrets holds nothing.
type Secrets struct {
	mu            sync.Mutex
	names, values []string
}

// minLogged is the shortest value Secrets masks: shorter ones would
// garble every line.
const minLogged = 4

// Add learns variable names and secret values.
func (s *Secrets) Add(names, values []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		if n != "" && !contains(s.names, n) {
			s.names = append(s.names, n)
		}
	}
	for _, v := range values {
		if len(v) >= minLogged && !contains(s.values, v) {
			s.values = append(s.values, v)
		}
	}
}

// Mask replaces every secret value in str by [redacted].
func (s *Secrets) Mask(str string) string {
	for _, v := range s.snapshot(nil) {
		str = strings.ReplaceAll(str, v, "[redacted]")
	}
	return str
}

// snapshot returns the values (and fills names when not nil).
func (s *Secrets) snapshot(names *[]string) []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if names != nil {
		*names = append([]string(nil), s.names...)
	}
	return append([]string(nil), s.values...)
}

// Filter drops from environ the variables learned, by name or value.
func (s *Secrets) Filter(environ []string) []string {
	var names []string
	values := s.snapshot(&names)
	if len(names)+len(values) == 0 {
		return environ
	}
	out := environ[:0:0]
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !matchAny(names, name) && !slices.ContainsFunc(values, func(s string) bool { return carries(value, s) }) {
			out = append(out, kv)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
