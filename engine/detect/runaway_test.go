package detect

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// feedRunaway feeds s in chunks of n bytes and returns the trip and the
// number of bytes fed when it tripped (-1 if it did not).
func feedRunaway(d *RunawayDetector, s string, n int) (*Runaway, int) {
	fed := 0
	for s != "" {
		k := min(n, len(s))
		if r := d.Write(s[:k]); r != nil {
			return r, r.Bytes
		}
		fed += k
		s = s[k:]
	}
	return nil, -1
}

// The recorded case: a model that starts repeating a
// 25-byte line is stopped within 256 bytes of becoming periodic, however
// the stream is chunked.
func TestRunawayCatchesRepeatedLine(t *testing.T) {
	prefix := `{"path": "greetings.log", "content": "Log of the greeter service\nStarted at boot.\n`
	pattern := "Greet 2023-06-15 11:16:00" // 25 bytes
	if len(pattern) != 25 {
		t.Fatal(len(pattern))
	}
	in := prefix + strings.Repeat(pattern, 200)
	for _, n := range []int{1, 2, 3, 7, 16, 25, 100, 4096} {
		d := NewRunawayDetector(RunawayOptions{})
		r, at := feedRunaway(d, in, n)
		if r == nil {
			t.Fatalf("chunks of %d: not caught", n)
		}
		if r.Reason != RunawayPeriodic || r.Period != 25 || !strings.Contains(pattern+pattern, r.Pattern) {
			t.Fatalf("chunks of %d: %+v", n, r)
		}
		if late := at - len(prefix); late > 256 {
			t.Fatalf("chunks of %d: caught %d bytes after it became periodic", n, late)
		}
		if again := d.Write("more"); again != r {
			t.Fatal("a tripped detector must keep answering the same trip")
		}
	}
}

// Every period from 4 to 64 is caught exactly when the window fills.
func TestRunawayEveryPeriod(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for p := 4; p <= 64; p++ {
		pat := randomText(rng, p)
		prefix := randomText(rng, 300)
		d := NewRunawayDetector(RunawayOptions{})
		r, at := feedRunaway(d, prefix+strings.Repeat(pat, 1000/p+10), 5)
		if r == nil || r.Period != p {
			t.Fatalf("period %d: %+v", p, r)
		}
		if late := at - len(prefix); late > DefaultRunawayWindow {
			t.Fatalf("period %d: %d bytes late", p, late)
		}
	}
}

// randomText is printable text with no period (letters, spaces, digits).
func randomText(rng *rand.Rand, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ0123456789.,"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// The detector agrees with a brute-force check of the definition on
// streams over tiny alphabets, where periodic stretches come by chance.
func TestRunawayMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	opts := RunawayOptions{Window: 24, MinPeriod: 2, MaxPeriod: 6}
	for trial := 0; trial < 3000; trial++ {
		n := 20 + rng.IntN(200)
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab"[rng.IntN(2)]
		}
		if trial%3 == 0 { // plant a periodic stretch
			p := 2 + rng.IntN(5)
			at := rng.IntN(n)
			for i := at + p; i < n && i < at+40; i++ {
				b[i] = b[i-p]
			}
		}
		want := bruteRunaway(b, 24, 2, 6)
		d := NewRunawayDetector(opts)
		r, _ := feedRunaway(d, string(b), 1+rng.IntN(9))
		got := -1
		if r != nil {
			got = r.Bytes - 1
		}
		if got != want {
			t.Fatalf("%q: tripped at %d, definition says %d", b, got, want)
		}
	}
}

// bruteRunaway returns the first index i at which b[i-w+1..i] has a period
// in [minP, maxP], or -1.
func bruteRunaway(b []byte, w, minP, maxP int) int {
	for i := w - 1; i < len(b); i++ {
		for p := minP; p <= maxP; p++ {
			ok := true
			for t := i - w + 1 + p; t <= i; t++ {
				if b[t] != b[t-p] {
					ok = false
					break
				}
			}
			if ok {
				return i
			}
		}
	}
	return -1
}

// Short repetitive constructs of real code and prose never trip.
func TestRunawayNoFalsePositive(t *testing.T) {
	tests := map[string]string{
		"table separator":   strings.Repeat("|---", 20) + "|\\n| a | b |",
		"80-char rule":      strings.Repeat("=", 80) + "\\nTitle\\n" + strings.Repeat("=", 80),
		"deep indentation":  "\\n" + strings.Repeat(" ", 64) + "return x\\n" + strings.Repeat(" ", 60) + "}",
		"escaped tabs":      strings.Repeat("\\n\\t\\t\\tx := 1", 3) + strings.Repeat("\\t", 40) + "y",
		"dashes and a rule": strings.Repeat("-", 120) + "\\n" + strings.Repeat("- [ ] task\\n", 3),
		"alternating lines": strings.Repeat("\\tcase 1:\\n\\t\\treturn a\\n\\tcase 2:\\n\\t\\treturn b\\n", 2),
	}
	for name, content := range tests {
		d := NewRunawayDetector(RunawayOptions{})
		if r, _ := feedRunaway(d, `{"path": "x", "content": "`+content+`"}`, 3); r != nil {
			t.Errorf("%s: tripped %+v", name, r)
		}
	}
	// The realistic corpus, fed as write_file arguments.
	files, _ := filepath.Glob("testdata/normal/*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(map[string]string{"path": filepath.Base(f), "content": string(b)})
		for _, n := range []int{1, 4, 13} {
			if r, _ := feedRunaway(NewRunawayDetector(RunawayOptions{}), string(args), n); r != nil {
				t.Errorf("%s: tripped %+v", f, r)
			}
		}
	}
}

// Periods below MinPeriod are caught through their multiples; periods
// above MaxPeriod are not (a repeated block of code is plausible).
func TestRunawayPeriodLimits(t *testing.T) {
	if r, _ := feedRunaway(NewRunawayDetector(RunawayOptions{}), strings.Repeat("ab", 200), 7); r == nil || r.Period != 4 {
		t.Errorf("period 2 should be caught as 4: %+v", r)
	}
	if r, _ := feedRunaway(NewRunawayDetector(RunawayOptions{}), strings.Repeat("!", 300), 7); r == nil {
		t.Error("a run of one character should be caught")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	if r, _ := feedRunaway(NewRunawayDetector(RunawayOptions{}), strings.Repeat(randomText(rng, 65), 20), 7); r != nil {
		t.Errorf("period 65 is outside the default range: %+v", r)
	}
	if r, _ := feedRunaway(NewRunawayDetector(RunawayOptions{}), strings.Repeat("=", 255), 1); r != nil {
		t.Errorf("255 bytes cannot fill the window: %+v", r)
	}
}

func TestRunawayTooLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	d := NewRunawayDetector(RunawayOptions{MaxBytes: 1000})
	r, at := feedRunaway(d, randomText(rng, 2000), 64)
	if r == nil || r.Reason != RunawayTooLong || at != 1001 {
		t.Fatalf("%+v at %d", r, at)
	}
	d = NewRunawayDetector(RunawayOptions{MaxBytes: 1000})
	if r, _ := feedRunaway(d, randomText(rng, 900), 64); r != nil {
		t.Fatalf("a new detector: %+v", r)
	}
	// The default limit: 256 KiB of non-periodic text is fine, one more
	// byte is not.
	d = NewRunawayDetector(RunawayOptions{})
	big := randomText(rng, DefaultRunawayMaxBytes)
	if r, _ := feedRunaway(d, big, 4096); r != nil {
		t.Fatalf("%+v", r)
	}
	if r := d.Write("x"); r == nil || r.Reason != RunawayTooLong {
		t.Fatalf("%+v", r)
	}
}

// BenchmarkRunaway feeds 256 KiB of realistic arguments in 16-byte deltas
// (a token or so each), as a stream does.
func BenchmarkRunaway(b *testing.B) {
	files, _ := filepath.Glob("testdata/normal/*")
	var sb strings.Builder
	for sb.Len() < DefaultRunawayMaxBytes {
		for _, f := range files {
			c, _ := os.ReadFile(f)
			enc, _ := json.Marshal(string(c))
			sb.Write(enc)
		}
	}
	in := sb.String()[:DefaultRunawayMaxBytes]
	d := NewRunawayDetector(RunawayOptions{})
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		d = NewRunawayDetector(RunawayOptions{})
		for s := in; s != ""; {
			k := min(16, len(s))
			if d.Write(s[:k]) != nil {
				b.Fatal("tripped on the corpus")
			}
			s = s[k:]
		}
	}
}

// Tool-call arguments as they stream, split at every byte: the detector stays
// quiet wherever the cut falls, and if the stream stopped there (max_tokens)
// what arrived is classified truncated, never run.
func TestRunawayArgsSplitAtEveryByte(t *testing.T) {
	content, err := os.ReadFile("testdata/normal/write_file_python.py")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]string{"path": "inventory.py", "content": string(content)})
	args := string(raw)
	for i := 0; i <= len(args); i++ {
		d := NewRunawayDetector(RunawayOptions{})
		if r := d.Write(args[:i]); r != nil {
			t.Fatalf("split at %d: %+v", i, r)
		}
		if r := d.Write(args[i:]); r != nil {
			t.Fatalf("split at %d: %+v", i, r)
		}
		if c := CheckArgs(args[:i]); i > 0 && i < len(args) && c.Status != ArgsTruncated {
			t.Fatalf("stopped at %d: %v", i, c.Status)
		}
	}
}
