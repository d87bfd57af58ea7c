package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/mm-agent/mm/acp"
	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
)

// TrustFile is where workspace trust is recorded (config.Trust): the
// state directory, never the repository, which a clone could ship.
func TrustFile(env config.Env) string {
	dir, err := StateDir(env)
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "trust.json")
}

// runLater names the files of the config in use that make mm run code
// later — the config file, the agent files and the programs it names —
// so a write to one asks like a write to .git/hooks (runlater.RunsLater).
// The full config's files count even while it is untrusted: trusting it
// later must not trust what the model wrote meanwhile.
func (a *App) runLater(root string) map[string]string {
	out := map[string]string{}
	cfgs := []*config.Config{a.cfg}
	if a.trust != nil && a.trust.Full != nil {
		cfgs = append(cfgs, a.trust.Full)
	}
	for _, c := range cfgs {
		for _, p := range c.Parts(root) {
			out[p] = "mm's configuration names it (" + filepath.Base(c.Source) + "): mm runs or obeys it"
		}
	}
	return out
}

// control are mm's own directories and files, whatever they hold now: the
// user's config directory, the config file MM_CONFIG names, the state
// directory (trust records, remembered answers, sessions, logs) and mm's
// executable. A write below them is asked in every mode
// (runlater.RunLater.Control): the model must not trust a workspace, add
// a hook or change a remembered answer for the user.
func (a *App) control() []string {
	out := []string{config.UserDir(a.env)}
	if p := a.env.Get("MM_CONFIG"); p != "" {
		out = append(out, absPath(p))
	}
	if d, err := StateDir(a.env); err == nil {
		out = append(out, d)
	}
	if exe, err := os.Executable(); err == nil {
		out = append(out, exe)
	}
	return out
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// trustCommand is /trust in the editor's / menu, offered while the
// workspace's own config is not trusted.
func (a *App) trustCommand() []acp.Command {
	if t := a.trust; t == nil || !t.Workspace || t.Trusted {
		return nil
	}
	return []acp.Command{{Name: "trust", Description: "Trust this workspace's .mm/agent.yaml as it is now (shows what takes effect first)"}}
}

// withTrust answers /trust: it shows what trusting the workspace's
// config would let take effect and the files it covers — as a form when
// the editor shows forms (ACP elicitation), else as a permission question
// asked in every mode (yolo does not answer it) — and records the trust
// when the user says yes. It applies from the next session.
func (a *App) withTrust(env tools.Env, next func(context.Context, string) engine.Rewrite) func(context.Context, string) engine.Rewrite {
	return func(ctx context.Context, prompt string) engine.Rewrite {
		if strings.TrimSpace(prompt) != "/trust" {
			if next == nil {
				return engine.Rewrite{Prompt: prompt}
			}
			return next(ctx, prompt)
		}
		t := a.trust
		switch {
		case t == nil || !t.Workspace:
			return engine.Rewrite{Answer: "mm: there is no workspace .mm/agent.yaml in use — your own config is always trusted"}
		case t.Full == nil:
			return engine.Rewrite{Answer: "mm: .mm/agent.yaml does not load as a whole — run `mm trust` in a shell to see why"}
		case t.Trusted:
			return engine.Rewrite{Answer: "mm: " + permit.Visible(t.Path) + " is trusted already, as it is now"}
		}
		if c, ok := env.(acp.Confirmer); ok {
			yes, err := c.Confirm(ctx, acp.Confirmation{Message: t.Summary(), Field: "Trust these files as they are now"})
			if !errors.Is(err, acp.ErrNoForm) {
				return a.trustAnswer(t, yes, err)
			}
		}
		d, err := env.Approve(ctx, tools.Approval{
			CallID: "trust", Tool: "trust", Kind: tools.KindOther, Caps: tools.WritesRunLater,
			Title:     "Trust " + permit.Visible(t.Path) + " as it is now",
			Detail:    t.Summary(),
			RunsLater: "once trusted, it runs programs and may send data elsewhere",
		})
		if err == nil && !d.Allowed {
			return engine.Rewrite{Answer: "mm: not trusted (" + d.Reason + ") — nothing changed"}
		}
		return a.trustAnswer(t, d.Allowed, err)
	}
}

// trustAnswer records the trust when the user said yes, and answers /trust.
func (a *App) trustAnswer(t *config.Trust, yes bool, err error) engine.Rewrite {
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		return engine.Rewrite{}
	case err != nil:
		return engine.Rewrite{Answer: "mm: not trusted (" + err.Error() + ") — nothing changed"}
	case !yes:
		return engine.Rewrite{Answer: "mm: not trusted — nothing changed"}
	}
	if err := t.Record(); err != nil {
		return engine.Rewrite{Answer: "mm: not trusted: " + err.Error()}
	}
	return engine.Rewrite{Answer: "mm: trusted — it applies from the next session; any change to its files makes it untrusted again"}
}
