package docs_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mm-agent/mm"

// TestArchitectureDiagram: the import diagram of architecture.md is the
// code's. Each line of it is a chain of package lists joined by arrows,
// "a ──► b, c/{d, e} ──► f/*": every package named on the left of an
// arrow (for "dir/*", one of the packages under dir) imports, directly
// and outside its tests, a package of each entry on its right — so no
// arrow shows an import that does not exist — and every import between
// the module's packages is drawn by some arrow. The "leaves:" line names
// packages that import no package of the module. The rules of what may
// import what are cmd/mm/deps_test.go's.
func TestArchitectureDiagram(t *testing.T) {
	imports := moduleImports(t)
	arrows, leaves := diagram(t)
	if len(arrows) < 10 {
		t.Fatalf("found %d arrows in architecture.md's diagram: is the section right?", len(arrows))
	}
	for _, a := range arrows {
		for _, from := range a.from {
			for _, to := range a.to {
				if !anyImport(imports, from, to) {
					t.Errorf("architecture.md draws %s ──► %s, but %s does not import it", from, to, from)
				}
			}
		}
	}
	for pkg, deps := range imports {
		for _, d := range deps {
			if !slices.ContainsFunc(arrows, func(a arrow) bool { return a.draws(pkg, d) }) {
				t.Errorf("%s imports %s: architecture.md's diagram has no arrow for it", pkg, d)
			}
		}
	}
	for _, l := range leaves {
		if !matchesAny(imports, l) {
			t.Errorf("architecture.md names %s a leaf: no such package", l)
		}
		for pkg, deps := range imports {
			if match(l, pkg) && len(deps) > 0 {
				t.Errorf("architecture.md names %s a leaf, but it imports %s", pkg, strings.Join(deps, ", "))
			}
		}
	}
}

// moduleImports maps each package of the module (its path inside the
// module) to the packages of the module it imports outside its tests.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module+"/")
		imports[pkg] = nil
		for _, d := range fields[1:] {
			if rel, ok := strings.CutPrefix(d, module+"/"); ok {
				imports[pkg] = append(imports[pkg], rel)
			}
		}
	}
	return imports
}

// arrow is one arrow of the diagram, from and to as patterns.
type arrow struct{ from, to []string }

func (a arrow) draws(pkg, dep string) bool {
	return slices.ContainsFunc(a.from, func(f string) bool { return match(f, pkg) }) &&
		slices.ContainsFunc(a.to, func(to string) bool { return match(to, dep) })
}

// diagram reads the first code block under architecture.md's heading
// "Who may import whom".
func diagram(t *testing.T) (arrows []arrow, leaves []string) {
	t.Helper()
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	start := slices.Index(lines, "## Who may import whom")
	if start < 0 {
		t.Fatal(`architecture.md has no section "Who may import whom"`)
	}
	in := false
	for _, l := range lines[start:] {
		if strings.HasPrefix(l, "```") {
			if in {
				break
			}
			in = true
			continue
		}
		if !in || strings.TrimSpace(l) == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(l, "leaves:"); ok {
			leaves = append(leaves, expand(rest)...)
			continue
		}
		steps := strings.Split(l, "──►")
		if len(steps) < 2 {
			t.Errorf("architecture.md's diagram: %q is neither a chain of arrows nor the leaves", l)
			continue
		}
		for i := 1; i < len(steps); i++ {
			arrows = append(arrows, arrow{expand(steps[i-1]), expand(steps[i])})
		}
	}
	return arrows, leaves
}

// expand turns "a, b/{c, d}, e/*" into its patterns: a, b/c, b/d, e/*.
func expand(list string) []string {
	var out []string
	for len(strings.TrimSpace(list)) > 0 {
		list = strings.TrimLeft(list, " ,")
		end := strings.IndexAny(list, ",{")
		if end < 0 {
			out = append(out, strings.TrimSpace(list))
			break
		}
		if list[end] == ',' {
			out = append(out, strings.TrimSpace(list[:end]))
			list = list[end+1:]
			continue
		}
		prefix, rest, _ := strings.Cut(list, "{")
		inner, after, _ := strings.Cut(rest, "}")
		for _, name := range strings.Split(inner, ",") {
			out = append(out, strings.TrimSpace(prefix)+strings.TrimSpace(name))
		}
		list = after
	}
	return out
}

// match reports whether pkg is pattern, or under it for "dir/*".
func match(pattern, pkg string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/*"); ok {
		return strings.HasPrefix(pkg, dir+"/")
	}
	return pkg == pattern
}

func matchesAny(imports map[string][]string, pattern string) bool {
	for pkg := range imports {
		if match(pattern, pkg) {
			return true
		}
	}
	return false
}

// anyImport reports whether a package matching from imports one matching to.
func anyImport(imports map[string][]string, from, to string) bool {
	for pkg, deps := range imports {
		if match(from, pkg) && slices.ContainsFunc(deps, func(d string) bool { return match(to, d) }) {
			return true
		}
	}
	return false
}
