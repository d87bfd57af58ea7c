//go:build !linux

package main

// hideSecrets does nothing here: no other system has /proc/<pid>/environ
// readable by the user's other processes in the same way; the child
// environment policy still applies.
func hideSecrets([]string) (map[string]string, func([]string)) { return nil, nil }
