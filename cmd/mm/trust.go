package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/permit"
)

// runTrust is `mm trust [--yes]`: it shows what the workspace's
// .mm/agent.yaml would make mm do once trusted and the files that take
// part, asks, and records their hash. --yes answers yes (scripts).
func runTrust(_ context.Context, inv *invocation, _ []string) int {
	if _, ok := inv.cwd(); !ok {
		return exitcode.Usage
	}
	_, t, cfgErr := inv.loadConfig()
	stdout, stderr := inv.stdout, inv.stderr
	switch {
	case !t.Workspace && t.Path != "":
		fmt.Fprintf(stdout, "mm: the config in use is your own (%s): it is always trusted\n", permit.Visible(t.Path))
		return exitcode.OK
	case !t.Workspace:
		fmt.Fprintln(stdout, "mm: there is no .mm/agent.yaml here — nothing to trust")
		return exitcode.OK
	case t.Full == nil:
		line := "the config does not load"
		if cfgErr != nil {
			line = strings.TrimPrefix(cfgErr.Error(), config.ErrInvalid.Error()+": ")
		}
		fmt.Fprintf(stderr, "mm: %s — fix it before trusting it\n", permit.Visible(line))
		return exitcode.Usage
	case t.Trusted:
		fmt.Fprintf(stdout, "mm: %s is trusted already, as it is now\n", permit.Visible(t.Path))
		return exitcode.OK
	case t.Unbound != nil:
		fmt.Fprintln(stderr, "mm: cannot trust it:", permit.Visible(t.Unbound.Error()))
		return exitcode.Failed
	}
	fmt.Fprint(stdout, t.Summary())
	if !inv.f.yes {
		fmt.Fprint(stdout, "Trust these files as they are now? [y/N] ")
		line, _ := bufio.NewReader(inv.stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "mm: not trusted — nothing changed")
			return exitcode.Failed
		}
	}
	if err := t.Record(); err != nil {
		fmt.Fprintln(stderr, "mm: not trusted:", err)
		return exitcode.Failed
	}
	fmt.Fprintln(stdout, "mm: trusted — any change to these files makes them untrusted again")
	return exitcode.OK
}
