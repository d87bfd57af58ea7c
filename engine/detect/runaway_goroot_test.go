//go:build explore

package detect

// TestRunawayGoroot is the measurement behind the runaway thresholds
// (runaway.go): every .go file of the standard library, fed as write_file
// arguments, and the files that trip. Not part of the normal run:
//
//	go test -tags explore -run Goroot -v ./engine/detect

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestRunawayGoroot(t *testing.T) {
	root := filepath.Join(runtime.GOROOT(), "src")
	files, bytesN, trips := 0, 0, 0
	byP := map[int]int{}
	filepath.WalkDir(root, func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, _ := os.ReadFile(path)
		enc, _ := json.Marshal(map[string]string{"path": path, "content": string(b)})
		files++
		bytesN += len(enc)
		d := NewRunawayDetector(RunawayOptions{MaxBytes: 1 << 30})
		s := string(enc)
		for len(s) > 0 {
			n := min(7, len(s))
			if r := d.Write(s[:n]); r != nil {
				trips++
				byP[r.Period]++
				if trips < 60 {
					fmt.Printf("%s p=%d at %d %q\n", strings.TrimPrefix(path, root), r.Period, r.Bytes, r.Pattern)
				}
				break
			}
			s = s[n:]
		}
		return nil
	})
	fmt.Println("files", files, "bytes", bytesN, "trips", trips, "by period", byP)
}
