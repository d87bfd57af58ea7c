// Command fakellm serves a scenario file as an OpenAI-compatible model
// server, streaming like llama-server, for manual runs of mm and for
// benchmarks. The first line on stdout is the base URL to give mm
// (MM_BASE_URL); it serves until interrupted.
//
//	fakellm -addr 127.0.0.1:8080 -scenario hello.yaml [-loop] [-n-ctx 32768]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/mm-agent/mm/engine/llm/llmtest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakellm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (port 0: any free port)")
	path := fs.String("scenario", "", "scenario file (YAML), required")
	loop := fs.Bool("loop", false, "start the scenario again after its last step")
	nCtx := fs.Int("n-ctx", 0, "context window reported by /props (default: the scenario's, else 8192)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: fakellm -scenario FILE [-addr HOST:PORT] [-loop] [-n-ctx N]")
		return 2
	}
	sc, err := llmtest.Load(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	sc.Loop = sc.Loop || *loop
	if *nCtx > 0 {
		sc.NCtx = *nCtx
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "fakellm: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, ln, sc, stdout, stderr)
}

// serve runs the server on ln until ctx ends.
func serve(ctx context.Context, ln net.Listener, sc llmtest.Scenario, stdout, stderr io.Writer) int {
	srv := llmtest.Start(ln, sc)
	defer srv.Close()
	if _, err := fmt.Fprintln(stdout, srv.URL()); err != nil && !errors.Is(err, os.ErrClosed) {
		fmt.Fprintf(stderr, "fakellm: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "fakellm: serving %d steps at %s (loop: %v)\n", len(sc.Steps), srv.URL(), sc.Loop)
	<-ctx.Done()
	return 0
}
