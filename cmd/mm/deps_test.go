package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportRules enforces docs/architecture.md's "Who may import whom"
// on the whole module, transitively, the way go/build/deps_test.go does
// for the standard library: a rule that is not tested decays.
func TestImportRules(t *testing.T) {
	const mod = "github.com/mm-agent/mm"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	toolImpls := []string{mod + "/tools/"} // any sub-package of tools is an implementation
	rules := []struct {
		pkg       string // package or prefix ending in /
		forbidden []string
		why       string
		allowed   []string // exceptions to forbidden
	}{
		{mod + "/engine", append([]string{mod + "/acp", "github.com/coder/acp-go-sdk", mod + "/lspbridge", mod + "/fileedit", mod + "/cmd/"}, toolImpls...),
			"the engine knows tools only through the contract and knows no front end", nil},
		{mod + "/engine/", append([]string{mod + "/acp", "github.com/coder/acp-go-sdk", mod + "/lspbridge", mod + "/fileedit", mod + "/cmd/"}, toolImpls...),
			"engine sub-packages follow the engine's rules", nil},
		{mod + "/acp", append([]string{mod + "/lspbridge", mod + "/fileedit", mod + "/cmd/"}, toolImpls...),
			"acp stays thin: no tool implementation, lspbridge or fileedit (but for the one file reader)", []string{mod + "/fileedit/disk"}},
		{mod + "/acp/acptest", []string{mod + "/"}, "the fake editor knows the protocol, not mm: any agent can be its peer", nil},
		{mod + "/fileedit", []string{mod + "/"}, "fileedit is a leaf", nil},
		{mod + "/fileedit/disk", []string{mod + "/"}, "the one file reader and writer is a leaf", nil},
		{mod + "/lspbridge", []string{mod + "/"}, "lspbridge is a leaf (but for the one file reader)", []string{mod + "/fileedit/disk"}},
		{mod + "/skills", []string{mod + "/"}, "skills is a leaf (but for the edit distance its typo hints share)", []string{mod + "/internal/textdist"}},
		{mod + "/internal/textdist", []string{mod + "/"}, "internal/textdist is a leaf", nil},
		{mod + "/engine/llm", []string{mod + "/"}, "engine/llm is a leaf", nil},
		{mod + "/engine/detect", []string{mod + "/"}, "engine/detect is a leaf", nil},
		{mod + "/engine/decide", []string{mod + "/"}, "engine/decide is a leaf (but for engine/oneshot)", []string{mod + "/engine/oneshot"}},
		{mod + "/engine/risk", []string{mod + "/"}, "engine/risk is a leaf (but for engine/oneshot)", []string{mod + "/engine/oneshot"}},
		{mod + "/engine/oneshot", []string{mod + "/"}, "engine/oneshot is a leaf", nil},
		{mod + "/tools", []string{mod + "/"}, "the tools contract is a leaf", nil},
		{mod + "/permit", append([]string{mod + "/acp", "github.com/coder/acp-go-sdk", mod + "/engine", mod + "/lspbridge", mod + "/fileedit", mod + "/skills", mod + "/cmd/"}, toolImpls...),
			"the permission tree decides from what it is given: it knows tools only through the contract, and no front end, engine or tool (but for the one file writer)", []string{mod + "/fileedit/disk"}},
		{mod + "/permit/", append([]string{mod + "/acp", "github.com/coder/acp-go-sdk", mod + "/engine", mod + "/lspbridge", mod + "/fileedit", mod + "/skills", mod + "/cmd/"}, toolImpls...),
			"the permission tree's packages follow its rules", []string{mod + "/fileedit/disk"}},
		{mod + "/tools/", []string{mod + "/engine", mod + "/acp", mod + "/cmd/"}, "tools know nothing of the engine or front ends", nil},
		// cmd/mm's own packages (Go already keeps everyone outside cmd/mm
		// from importing them).
		{mod + "/cmd/mm/internal/", []string{mod + "/cmd/mm/internal/app"},
			"only main builds and drives an app.App: the other packages get a Host of funcs from it", nil},
		{mod + "/cmd/mm/internal/exitcode", []string{mod + "/"}, "the exit codes are a leaf", nil},
		{mod + "/cmd/mm/internal/logfile", []string{mod + "/"}, "the log is a leaf (but for the set of known secrets)", []string{mod + "/permit/childenv"}},
		{mod + "/cmd/mm/internal/config", append([]string{mod + "/acp", "github.com/coder/acp-go-sdk", mod + "/engine", mod + "/lspbridge", mod + "/cmd/mm/internal/"}, toolImpls...),
			"the config is read by cmd/mm and knows no front end, engine or tool (but for the model connector's names and the one file reader)", []string{mod + "/engine/llm", mod + "/fileedit/disk"}},
		{mod + "/cmd/mm/internal/line", append([]string{mod + "/acp", "github.com/coder/acp-go-sdk", mod + "/lspbridge", mod + "/cmd/mm/internal/config"}, toolImpls...),
			"the line front end only renders engine events, like acp: no config, no tool implementation but the disk workspace", []string{mod + "/tools/workspace"}},
		{mod + "/cmd/mm/internal/agents", append([]string{mod + "/acp", "github.com/coder/acp-go-sdk", mod + "/lspbridge", mod + "/cmd/mm/internal/config"}, toolImpls...),
			"asked agents get their sessions from the composition root: no config, no front end, no tool implementation but their ask tool", []string{mod + "/tools/ask"}},
		{mod + "/cmd/mm/internal/doctor", append([]string{mod + "/acp", "github.com/coder/acp-go-sdk"}, toolImpls...),
			"mm doctor checks what the composition root built: no front end, no tool implementation", []string{mod + "/tools/workspace"}},
		{mod + "/cmd/mm/internal/setup", append([]string{mod + "/acp", "github.com/coder/acp-go-sdk"}, toolImpls...),
			"mm setup finds servers, asks the user and writes the user's config with doctor's round trip: no front end, no tool implementation", []string{mod + "/tools/workspace"}},
		{mod + "/cmd/mm/internal/eval", append([]string{mod + "/acp", "github.com/coder/acp-go-sdk", mod + "/lspbridge", mod + "/cmd/mm/internal/config"}, toolImpls...),
			"mm eval scores what the composition root built: no front end, no config, no tool implementation (but the terminal asker's disk workspace)", []string{mod + "/tools/workspace"}},
	}
	// Test code lives beside the product, as net/http/httptest does, but
	// never ships in it: only _test.go files (which go list's Deps do not
	// follow) and the hand-run fake model server may import it.
	testOnly := []string{mod + "/engine/llm/llmtest", mod + "/internal/testenv", mod + "/acp/acptest"}
	mayUseTestCode := append([]string{mod + "/cmd/fakellm"}, testOnly...)
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		for _, d := range deps {
			if slices.Contains(testOnly, d) && !slices.Contains(mayUseTestCode, pkg) {
				t.Errorf("%s imports %s: test code never ships in the product", pkg, d)
			}
		}
		for _, r := range rules {
			if !applies(r.pkg, pkg) {
				continue
			}
			seen++
			for _, d := range deps {
				for _, f := range r.forbidden {
					if forbids(f, d) && d != pkg && !strings.HasPrefix(d, pkg+"/") && !slices.Contains(r.allowed, d) {
						t.Errorf("%s imports %s: %s", pkg, d, r.why)
					}
				}
			}
		}
	}
	if seen < 5 {
		t.Fatalf("only %d packages matched the rules: is the module path right?", seen)
	}
}

// TestOnlyPermitDecides: what decides what may happen lives in the
// permit tree (its doc.go): the reader of shell lines is imported there
// only, so no tool re-reads a command line to decide on its own.
func TestOnlyPermitDecides(t *testing.T) {
	const mod = "github.com/mm-agent/mm"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deciders := []string{"mvdan.cc/sh/v3/syntax", "mvdan.cc/sh/v3/expand", "mvdan.cc/sh/v3/interp"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		if strings.HasPrefix(pkg, mod+"/permit/") {
			continue
		}
		for _, d := range deciders {
			if slices.Contains(imports, d) {
				t.Errorf("%s imports %s: the analysis of a shell line lives in permit/shell", pkg, d)
			}
		}
	}
}

func applies(rule, pkg string) bool {
	if strings.HasSuffix(rule, "/") {
		return strings.HasPrefix(pkg, rule)
	}
	return pkg == rule
}

// forbids reports whether dep falls under the forbidden entry f (a package,
// or a prefix ending in /, where the module prefix "mod/" means any
// package of the module).
func forbids(f, dep string) bool {
	if strings.HasSuffix(f, "/") {
		return strings.HasPrefix(dep, f)
	}
	return dep == f || strings.HasPrefix(dep, f+"/")
}
