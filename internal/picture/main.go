package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("picture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", filepath.Join("docs", "mm-at-work.svg"), "the picture to write (or, with -check, to compare)")
	check := fs.Bool("check", false, "draw the picture again and exit 1 when its text differs from -o's, digits aside")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	svg, err := draw(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "picture: %v\n", err)
		return 1
	}
	if *check {
		old, err := os.ReadFile(*out)
		if err != nil {
			fmt.Fprintf(stderr, "picture: %v\n", err)
			return 1
		}
		if diff := compare(old, svg); diff != "" {
			fmt.Fprintf(stderr, "picture: %s is not what mm shows now (rerun ./scripts/picture):\n%s\n", *out, diff)
			return 1
		}
		fmt.Fprintf(stdout, "%s is what mm shows now\n", *out)
		return 0
	}
	if err := os.WriteFile(*out, svg, 0o644); err != nil {
		fmt.Fprintf(stderr, "picture: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return 0
}

// draw builds mm and fakellm from this checkout (run from the module's
// root), serves the session's scenario with fakellm and records the run.
func draw(ctx context.Context) ([]byte, error) {
	s, err := loadSession()
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "mm-picture-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "bin")
	for _, pkg := range []string{"./cmd/mm", "./cmd/fakellm"} {
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin+"/", pkg).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	scenario := filepath.Join(work, "scenario.yaml")
	if err := os.WriteFile(scenario, s.scenario, 0o644); err != nil {
		return nil, err
	}
	url, stopServer, err := fakellm(ctx, filepath.Join(bin, "fakellm"), scenario)
	if err != nil {
		return nil, err
	}
	defer stopServer()
	return picture(ctx, s, filepath.Join(bin, "mm"), url, work)
}

// picture records the session and draws it.
func picture(ctx context.Context, s session, mm, baseURL, work string) ([]byte, error) {
	out, err := record(ctx, s, mm, baseURL, work)
	if err != nil {
		return nil, err
	}
	var sc screen
	sc.write([]byte(s.header()))
	sc.write(out)
	return sc.svg("mm -p fixing a failing Go test: it runs the tests, reads the file, edits it and runs the tests again, asking before the command and the edit"), nil
}

// fakellm starts the scripted model server and returns its base URL and
// how to stop it.
func fakellm(ctx context.Context, bin, scenario string) (string, func(), error) {
	cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0", "-scenario", scenario)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start fakellm: %w", err)
	}
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("fakellm printed no URL: %v\n%s", err, errBuf.String())
	}
	return strings.TrimSpace(url), stop, nil
}

// digits are what changes from one run to the next: durations, token
// counts, the session's id (hexadecimal).
var digits = regexp.MustCompile(`[0-9a-f]*[0-9][0-9a-f]*`)

// compare says how the text of picture b differs from a's, digits aside,
// or "" when it does not.
func compare(a, b []byte) string {
	la, err := textLines(a)
	if err != nil {
		return err.Error()
	}
	lb, err := textLines(b)
	if err != nil {
		return err.Error()
	}
	var diff []string
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if digits.ReplaceAllString(x, "#") != digits.ReplaceAllString(y, "#") {
			diff = append(diff, fmt.Sprintf("line %d:\n  was: %s\n  now: %s", i+1, x, y))
		}
	}
	return strings.Join(diff, "\n")
}
