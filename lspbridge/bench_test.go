package lspbridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkDiagnosticsDelta measures, for a warm gopls (and pyright), the time from an
// edit written to disk to the diagnostics delta ready (After returning),
// and splits it: server-ms is until the server's last report for the
// edit arrived, overhead-µs is mm's own time after it. Each iteration
// toggles between a broken and a fixed version, so every edit changes
// the diagnostics.
//
//	go test -run '^$' -bench DiagnosticsDelta -benchtime 40x ./lspbridge/
func BenchmarkDiagnosticsDelta(b *testing.B) {
	cases := []struct {
		name, bin, fixture, file, good, bad, want string
	}{
		{"gopls/same-file", "gopls", "go/typeerr", "main.go", "return n * 2", `return "twice"`, "main.go:6:9"},
		{"gopls/cross-package", "gopls", "go/crosspkg", "a/a.go", "func Scale(n int) int {", "func Scale(n, m int) int {", "b/b.go:8:18"},
		// pyright reports no progress: mm waits for the edited file's
		// version, then Settle (60 ms) without a publish.
		{"pyright/same-file", "pyright-langserver", "py/typeerr", "calc.py", "return n * 2", `return "twice"`, "calc.py:2:12"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			need(b, c.bin)
			dir := fixture(b, c.fixture)
			m := newTestManager(b, dir)
			ctx := context.Background()
			path := filepath.Join(dir, c.file)
			// Warm up: open, break, fix.
			edit(b, m, path, c.good, c.bad)
			edit(b, m, path, c.bad, c.good)
			s := m.serverFor(canonical(path), false)
			var server, overhead time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				from, to := c.good, c.bad
				if i%2 == 1 {
					from, to = c.bad, c.good
				}
				b.StopTimer()
				snap := m.Before(ctx, path)
				data, _ := os.ReadFile(path)
				data = []byte(strings.Replace(string(data), from, to, 1))
				if err := os.WriteFile(path, data, 0o644); err != nil {
					b.Fatal(err)
				}
				<-snap.groups[0].done // the baseline is part of Before's cost
				b.StartTimer()
				t0 := time.Now()
				got := m.After(ctx, snap, data)
				t1 := time.Now()
				s.mu.Lock()
				last := s.lastEvent
				s.mu.Unlock()
				server += last.Sub(t0)
				overhead += t1.Sub(last)
				if i%2 == 0 && !strings.Contains(got, c.want) {
					b.Fatalf("edit %d: want %s in:\n%s", i, c.want, got)
				}
			}
			b.ReportMetric(float64(server.Microseconds())/1000/float64(b.N), "server-ms/op")
			b.ReportMetric(float64(overhead.Microseconds())/float64(b.N), "overhead-µs/op")
		})
	}
}
