package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// repository is where the releases are published, and what the registry
// entry names.
const repository = "https://github.com/mm-agent/mm"

//go:embed icon.svg
var icon []byte

// platform is one target: Go's name for it and the registry's.
type platform struct{ goos, goarch, name string }

// platforms are the six the registry knows (its FORMAT.md).
func platforms() []platform {
	return []platform{
		{"darwin", "arm64", "darwin-aarch64"},
		{"darwin", "amd64", "darwin-x86_64"},
		{"linux", "arm64", "linux-aarch64"},
		{"linux", "amd64", "linux-x86_64"},
		{"windows", "arm64", "windows-aarch64"},
		{"windows", "amd64", "windows-x86_64"},
	}
}

func (p platform) exe() string {
	if p.goos == "windows" {
		return "mm.exe"
	}
	return "mm"
}

// archive is the name of p's archive of version (v1.2.3).
func (p platform) archive(version string) string {
	ext := ".tar.gz"
	if p.goos == "windows" {
		ext = ".zip"
	}
	return "mm-" + strings.TrimPrefix(version, "v") + "-" + p.name + ext
}

// release is one version to build from the module at root.
type release struct {
	root    string    // the module's root
	version string    // v1.2.3
	commit  string    // 12 hex digits
	time    time.Time // the commit's: every file of the archives carries it
}

// goBuild builds mm for p into out with the release's flags; ldflags are
// the link's, which change no compiled package.
func goBuild(ctx context.Context, root string, p platform, ldflags, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, "./cmd/mm")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS="+p.goos, "GOARCH="+p.goarch, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for %s/%s: %v\n%s", p.goos, p.goarch, err, b)
	}
	return nil
}

// check cross-compiles mm for every platform as a release does, writing
// nothing: a break on one system is found before a release. This
// machine's platform goes first: the release test builds it too.
func check(ctx context.Context, root string) error {
	ps := platforms()
	for i, p := range ps {
		if p.goos == runtime.GOOS && p.goarch == runtime.GOARCH {
			ps[0], ps[i] = ps[i], ps[0]
		}
	}
	for _, p := range ps {
		if err := goBuild(ctx, root, p, "-s -w", os.DevNull); err != nil {
			return err
		}
	}
	return nil
}

// archive builds mm for p and packs it into dir; it returns the
// archive's name.
func (r release) archive(ctx context.Context, p platform, dir string) (string, error) {
	tmp, err := os.MkdirTemp("", "mm-release-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, p.exe())
	ldflags := fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s", r.version, r.commit)
	if err := goBuild(ctx, r.root, p, ldflags, bin); err != nil {
		return "", err
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if p.goos == "windows" {
		err = r.zip(&buf, p.exe(), data)
	} else {
		err = r.tarGz(&buf, p.exe(), data)
	}
	if err != nil {
		return "", fmt.Errorf("pack %s: %w", p.name, err)
	}
	name := p.archive(r.version)
	return name, os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644)
}

// tarGz writes a .tar.gz holding one executable at its root.
func (r release) tarGz(w io.Writer, name string, data []byte) error {
	gz := gzip.NewWriter(w) // no name, no time in its header
	tw := tar.NewWriter(gz)
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(data)), ModTime: r.time, Format: tar.FormatUSTAR}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// zip writes a .zip holding one executable at its root.
func (r release) zip(w io.Writer, name string, data []byte) error {
	zw := zip.NewWriter(w)
	hdr := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: r.time.UTC()}
	hdr.SetMode(0o755)
	f, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return zw.Close()
}

// sums writes SHA256SUMS for the files named, in the form sha256sum -c
// reads.
func sums(dir string, names []string) error {
	var b strings.Builder
	for _, n := range slices.Sorted(slices.Values(names)) {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		h := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h[:]), n)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}

// entry is the registry's agent.json (its agent.schema.json).
type entry struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Description  string   `json:"description"`
	Repository   string   `json:"repository"`
	Authors      []string `json:"authors"`
	Distribution struct {
		Binary map[string]target `json:"binary"`
	} `json:"distribution"`
}

type target struct {
	Archive string   `json:"archive"`
	Cmd     string   `json:"cmd"`
	Args    []string `json:"args"`
}

// entry writes the registry's folder for r — registry/mm/agent.json and
// icon.svg — under dir: every platform, its archive at the GitHub
// release of r's tag, mm acp as the command. The registry's entry has
// no field for checksums; SHA256SUMS beside the archives has them.
func (r release) entry(dir string) error {
	e := entry{
		ID:          "mm",
		Name:        "mm",
		Version:     strings.TrimPrefix(r.version, "v"),
		Description: "Coding agent for small local models (llama.cpp, Ollama, LM Studio, vLLM): safe edits, LSP diagnostics, one Go binary",
		Repository:  repository,
		Authors:     []string{"mm maintainers"},
	}
	e.Distribution.Binary = map[string]target{}
	for _, p := range platforms() {
		e.Distribution.Binary[p.name] = target{
			Archive: repository + "/releases/download/" + r.version + "/" + p.archive(r.version),
			Cmd:     "./" + p.exe(),
			Args:    []string{"acp"},
		}
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	folder := filepath.Join(dir, "registry", e.ID)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(folder, "agent.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(folder, "icon.svg"), icon, 0o644)
}

// build makes the whole release in dir.
func (r release) build(ctx context.Context, dir string, log io.Writer) error {
	var names []string
	for _, p := range platforms() {
		name, err := r.archive(ctx, p, dir)
		if err != nil {
			return err
		}
		fmt.Fprintln(log, "release:", name)
		names = append(names, name)
	}
	if err := sums(dir, names); err != nil {
		return err
	}
	return r.entry(dir)
}

// semver is the form of a release version: the registry's entries take
// the digits (1.2.3), the tag and the binary say v1.2.3.
var semver = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// fromGit is the release of version at the checkout's HEAD, which must
// be clean: a release from uncommitted changes could not be built again.
func fromGit(ctx context.Context, root, version string) (release, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	if !semver.MatchString(version) {
		return release{}, fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH, as the tag (the registry takes only digits)", version)
	}
	status, err := git("status", "--porcelain")
	if err != nil {
		return release{}, fmt.Errorf("git status: %w", err)
	}
	if status != "" {
		return release{}, errors.New("the checkout has uncommitted changes: commit or stash them, a release is built from a commit")
	}
	commit, err := git("rev-parse", "--short=12", "HEAD")
	if err != nil {
		return release{}, fmt.Errorf("git rev-parse: %w", err)
	}
	secs, err := git("log", "-1", "--format=%ct")
	if err != nil {
		return release{}, fmt.Errorf("git log: %w", err)
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return release{}, fmt.Errorf("the commit's time %q: %w", secs, err)
	}
	return release{root: root, version: version, commit: commit, time: time.Unix(n, 0).UTC()}, nil
}

func main() {
	checkOnly := flag.Bool("check", false, "cross-compile every platform as a release does, and write nothing")
	out := flag.String("out", "dist", "where the release's folder (VERSION/) goes")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: go run ./internal/release [-out DIR] VERSION | -check\n  builds the six archives, SHA256SUMS and the registry entry into DIR/VERSION")
		flag.PrintDefaults()
	}
	flag.Parse()
	ctx := context.Background()
	if *checkOnly {
		if flag.NArg() != 0 {
			flag.Usage()
			os.Exit(2)
		}
		if err := check(ctx, "."); err != nil {
			fmt.Fprintln(os.Stderr, "release -check:", err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	r, err := fromGit(ctx, ".", flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(2)
	}
	dir := filepath.Join(*out, r.version)
	if _, err := os.Stat(dir); err == nil {
		fmt.Fprintf(os.Stderr, "release: %s exists already: remove it to build %s again\n", dir, r.version)
		os.Exit(2)
	}
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = r.build(ctx, dir, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	fmt.Printf("release: %s in %s (commit %s); registry entry in %s\n", r.version, dir, r.commit, filepath.Join(dir, "registry", "mm"))
}
