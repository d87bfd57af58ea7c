package main

import (
	"io"
	"os"
	"slices"

	"github.com/mm-agent/mm/cmd/mm/internal/app"
	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/permit/childenv"
)

// secretNames are the variables of environ that hold secrets: those the
// child environment policy drops by default (names with KEY, TOKEN,
// SECRET, PASSWORD, CREDENTIAL), MM_API_KEY, and every apiKeyEnv the
// config in use names (whatever the name: LLM_AUTH).
func secretNames(args []string, environ []string) []string {
	names := childenv.Policy{Drop: []string{"MM_API_KEY"}}.Dropped(environ)
	env := config.ProcessEnv(nil)
	f, _, err := parseFlags(env, args, io.Discard, io.Discard)
	cwd, werr := os.Getwd()
	if err == nil && werr == nil {
		if cfg, _, err := config.LoadFor(env, f.config, cwd, app.TrustFile(env), nil); err == nil && cfg != nil {
			for _, n := range cfg.KeyEnvs() {
				if env.Get(n) != "" && !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	return names
}
