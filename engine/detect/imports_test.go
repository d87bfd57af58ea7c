package detect

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// detect is a leaf (ARCHITECTURE): the standard library only, so the
// engine can depend on it and it can depend on nothing of mm.
func TestImportsStdlibOnly(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s: detect must use the standard library only", f, path)
			}
		}
	}
}
