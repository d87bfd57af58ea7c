package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mm-agent/mm/internal/testenv"
)

// testRelease is a release of the working tree as it is, with stamps
// the test can recognise.
func testRelease() release {
	return release{root: filepath.Join("..", ".."), version: "v1.2.3", commit: "0123456789ab", time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// hostPlatform is the platform of this machine, whose archive can run.
func hostPlatform(t *testing.T) platform {
	for _, p := range platforms() {
		if p.goos == runtime.GOOS && p.goarch == runtime.GOARCH {
			return p
		}
	}
	testenv.Unavailable(t, "no release platform is %s/%s: its archive cannot run here", runtime.GOOS, runtime.GOARCH)
	return platform{}
}

// TestRegistryChecks builds the release archive of this machine (Linux
// x86_64 in CI) and the registry entry, then runs on them what the ACP
// registry's CI runs on a proposed entry (testdata/SOURCE.md): the
// schema and the registry's own rules on agent.json and icon.svg; the
// archive unpacked in an empty directory; the launch check; the auth
// check — empty HOME, TERM=dumb, the registry's initialize — with
// nothing but JSON-RPC on stdout and a clean exit when stdin closes.
func TestRegistryChecks(t *testing.T) {
	t.Parallel()
	p := hostPlatform(t)
	r := testRelease()
	consultModule(t, r.root)
	dist := t.TempDir()
	// Bounded by go test's -timeout only: the packages are compiled
	// already where scripts/test ran release -check first, not on a
	// fresh machine.
	name, err := r.archive(t.Context(), p, dist)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.entry(dist); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dist, "registry", "mm")
	var e entry
	checkEntry(t, folder, &e)
	checkIcon(t, filepath.Join(folder, "icon.svg"))

	tg := e.Distribution.Binary[p.name]
	if got := filepath.Base(tg.Archive); got != name {
		t.Errorf("the entry's %s archive is %s; the release built %s", p.name, got, name)
	}
	sandbox := t.TempDir()
	extracted := filepath.Join(sandbox, "extracted")
	if err := unpack(filepath.Join(dist, name), extracted); err != nil {
		t.Fatal(err)
	}
	exe := findExe(t, extracted, strings.TrimPrefix(tg.Cmd, "./"))
	if out, err := exec.Command(exe, "--version").Output(); err != nil || string(out) != "mm v1.2.3 (commit 0123456789ab)\n" {
		t.Errorf("--version = %q, %v: the stamps are not in the binary", out, err)
	}
	launchCheck(t, exe, tg.Args, extracted)
	authCheck(t, exe, tg.Args, extracted, filepath.Join(sandbox, "auth-home"))
}

// consultModule stats every file of the module under root. go test
// keeps a test's result until the files the test consulted change; the
// build of mm runs in a child, whose reads go test does not see, so
// without this a change to mm would leave the cached pass of the checks
// standing.
func consultModule(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "dist") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			_, err = os.Stat(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkEntry validates agent.json against the registry's schema and
// rules, and decodes it into e.
func checkEntry(t *testing.T, folder string, e *entry) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(folder, "agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema jsonschema.Schema
	b, err := os.ReadFile(filepath.Join("testdata", "agent.schema.json"))
	if err == nil {
		err = json.Unmarshal(b, &schema)
	}
	if err != nil {
		t.Fatal(err)
	}
	rs, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var instance any
	if err := json.Unmarshal(raw, &instance); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(instance); err != nil {
		t.Errorf("agent.json against the registry's schema: %v", err)
	}
	if err := json.Unmarshal(raw, e); err != nil {
		t.Fatal(err)
	}
	if e.ID != filepath.Base(folder) {
		t.Errorf("id %q is not its folder's name %q", e.ID, filepath.Base(folder))
	}
	families := map[string]bool{}
	inURL := regexp.MustCompile(`/(?:download|releases)/v?([\d.]+)/`)
	for name, tg := range e.Distribution.Binary {
		families[strings.Split(name, "-")[0]] = true
		m := inURL.FindStringSubmatch(tg.Archive)
		if strings.Contains(tg.Archive, "/latest/") || m == nil || m[1] != e.Version {
			t.Errorf("%s: the archive URL %s does not name version %s", name, tg.Archive, e.Version)
		}
	}
	for _, f := range []string{"darwin", "linux", "windows"} {
		if !families[f] {
			t.Errorf("no build for %s", f)
		}
	}
	if len(e.Distribution.Binary) != 6 {
		t.Errorf("%d platforms, want the six", len(e.Distribution.Binary))
	}
}

// checkIcon is the registry's icon check: 16×16, square, currentColor
// and no colour of its own.
func checkIcon(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	w := regexp.MustCompile(`<svg[^>]*\swidth=["'](\d+)`).FindStringSubmatch(svg)
	h := regexp.MustCompile(`<svg[^>]*\sheight=["'](\d+)`).FindStringSubmatch(svg)
	if w == nil || h == nil || w[1] != "16" || h[1] != "16" {
		t.Errorf("the icon is not 16x16: width %v, height %v", w, h)
	}
	allowed := map[string]bool{"currentcolor": true, "none": true, "inherit": true}
	for _, attr := range []string{"fill", "stroke"} {
		for _, m := range regexp.MustCompile(`(?i)\b`+attr+`\s*=\s*["']([^"']+)["']`).FindAllStringSubmatch(svg, -1) {
			if !allowed[strings.ToLower(strings.TrimSpace(m[1]))] {
				t.Errorf("the icon has %s=%q (currentColor or none only)", attr, m[1])
			}
		}
	}
	if regexp.MustCompile(`(?i)\bstyle\s*=`).MatchString(svg) {
		t.Error("the icon has a style attribute: colours go in fill and stroke")
	}
	if !strings.Contains(strings.ToLower(svg), "currentcolor") {
		t.Error("the icon does not use currentColor")
	}
}

// unpack extracts a .tar.gz or .zip into dir as the registry does
// (Python's extractall with the "data" filter: no path out of dir).
func unpack(archive, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, mode os.FileMode, r io.Reader) error {
		if !filepath.IsLocal(name) {
			return fmt.Errorf("%s leaves the directory", name)
		}
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_EXCL, mode.Perm())
		if err != nil {
			return err
		}
		_, err = io.Copy(f, r)
		return errors.Join(err, f.Close())
	}
	if strings.HasSuffix(archive, ".zip") {
		zr, err := zip.OpenReader(archive)
		if err != nil {
			return err
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err == nil {
				err = errors.Join(write(f.Name, f.Mode(), rc), rc.Close())
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			return fmt.Errorf("%s: not a regular file", hdr.Name)
		}
		if err := write(hdr.Name, os.FileMode(hdr.Mode), tr); err != nil {
			return err
		}
	}
}

// findExe finds cmd in the unpacked archive as the registry does (the
// first file of that name under it) and says whether it lies at the
// root, where the archives must put it.
func findExe(t *testing.T, dir, cmd string) string {
	t.Helper()
	var found string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && found == "" && d.Name() == cmd && !d.IsDir() {
			found = p
		}
		return nil
	})
	if found != filepath.Join(dir, cmd) {
		t.Fatalf("%s is not at the archive's root (found %q)", cmd, found)
	}
	return found
}

// launchCheck is verify_agents.py's: the command run with empty stdin
// exits 0 or is still running after the registry's 10 s.
func launchCheck(t *testing.T, exe string, args []string, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() == nil && err != nil {
		t.Errorf("launch check: %s %v with empty stdin: %v\n%s", exe, args, err, stderr.String())
	}
}

// authCheck is client.py's: HOME an empty directory, TERM=dumb, the
// registry's initialize; the answer must list an auth method of type
// agent or terminal. Then stdin closes: mm must exit 0, having written
// nothing but JSON-RPC on stdout.
func authCheck(t *testing.T, exe string, args []string, dir, home string) {
	t.Helper()
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TERM=dumb", "HOME="+home)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	const initialize = `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"}, "clientCapabilities": {"terminal": true, "fs": {"readTextFile": true, "writeTextFile": true}, "_meta": {"terminal_output": true, "terminal-auth": true}}}}`
	io.WriteString(stdin, initialize+"\n")
	var all []string
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("mm closed stdout before answering initialize; stderr:\n%s", stderr.String())
		}
		all = append(all, l)
		checkAuthMethods(t, l)
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no answer to initialize within the registry's 60 s; stderr:\n%s", stderr.String())
	}
	stdin.Close()
	exited := make(chan error, 1)
	go func() {
		for l := range lines {
			all = append(all, l)
		}
		exited <- cmd.Wait()
	}()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("with stdin closed mm exited with %v, want 0; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Errorf("mm did not exit within 10 s of stdin closing")
	}
	for _, l := range all {
		var m struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if json.Unmarshal([]byte(l), &m) != nil || m.JSONRPC != "2.0" {
			t.Errorf("stdout carried something else than JSON-RPC: %q", l)
		}
	}
}

// checkAuthMethods reads the answer to initialize as client.py does: a
// method's type is its "type", else told by its _meta ("terminal-auth",
// "agent-auth"), else agent.
func checkAuthMethods(t *testing.T, answer string) {
	t.Helper()
	var m struct {
		Error  json.RawMessage `json:"error"`
		Result struct {
			AuthMethods []struct {
				ID   string         `json:"id"`
				Type string         `json:"type"`
				Meta map[string]any `json:"_meta"`
			} `json:"authMethods"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(answer), &m); err != nil || m.Error != nil {
		t.Fatalf("initialize: %s (%v)", answer, err)
	}
	var valid []string
	for _, a := range m.Result.AuthMethods {
		typ := a.Type
		if _, ok := a.Meta["terminal-auth"]; typ == "" && ok {
			typ = "terminal"
		}
		if typ == "" {
			typ = "agent"
		}
		if typ == "agent" || typ == "terminal" {
			valid = append(valid, a.ID+"("+typ+")")
		}
	}
	if len(valid) == 0 {
		t.Errorf("no auth method of type agent or terminal: %s", answer)
	}
	t.Logf("auth methods: %s", strings.Join(valid, ", "))
}

// TestArchivesAreReproducible: an archive holds the executable alone, at
// its root, executable, dated by the commit; the same input gives the
// same bytes, so that anyone can rebuild a release and compare sums.
func TestArchivesAreReproducible(t *testing.T) {
	t.Parallel()
	r := testRelease()
	exe := []byte("\x7fELF not really")
	for _, p := range []platform{{"linux", "amd64", "linux-x86_64"}, {"windows", "arm64", "windows-aarch64"}} {
		pack := func() []byte {
			var b bytes.Buffer
			var err error
			if p.goos == "windows" {
				err = r.zip(&b, p.exe(), exe)
			} else {
				err = r.tarGz(&b, p.exe(), exe)
			}
			if err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		}
		first := pack()
		if !bytes.Equal(first, pack()) {
			t.Errorf("%s: two packings differ", p.name)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, p.archive(r.version))
		os.WriteFile(path, first, 0o644)
		out := filepath.Join(dir, "out")
		if err := unpack(path, out); err != nil {
			t.Fatal(err)
		}
		ents, _ := os.ReadDir(out)
		if len(ents) != 1 || ents[0].Name() != p.exe() {
			t.Fatalf("%s holds %v, want %s alone", p.name, ents, p.exe())
		}
		fi, _ := ents[0].Info()
		got, _ := os.ReadFile(filepath.Join(out, p.exe()))
		if fi.Mode().Perm()&0o111 == 0 || !bytes.Equal(got, exe) {
			t.Errorf("%s: %s is %v, %q", p.name, p.exe(), fi.Mode(), got)
		}
	}
	if got := platforms()[0].archive("v1.2.3"); got != "mm-1.2.3-darwin-aarch64.tar.gz" {
		t.Errorf("archive name %q", got)
	}
}
