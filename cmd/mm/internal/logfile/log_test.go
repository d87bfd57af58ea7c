package logfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/permit/childenv"
)

// TestLogMasksTheKey: a server error that echoes the key is logged
// without it.
func TestLogMasksTheKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mm.log")
	known := &childenv.Secrets{}
	known.Add(nil, []string{"sk-secret-value-42"})
	log, closeLog, err := Open(path, nil, true, "", known)
	if err != nil {
		t.Fatal(err)
	}
	log.Warn("server said sk-secret-value-42 is bad", "err", errors.New("401: key sk-secret-value-42 refused"), "n", 3)
	closeLog()
	b, _ := os.ReadFile(path)
	got := string(b)
	if strings.Contains(got, "sk-secret-value-42") || strings.Count(got, "[redacted]") != 2 || !strings.Contains(got, "n=3") {
		t.Errorf("log:\n%s", got)
	}
}
