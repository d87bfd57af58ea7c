package app

import (
	"context"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sourcegraph/conc/panics"

	"github.com/mm-agent/mm/acp"
	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/decide"
	"github.com/mm-agent/mm/fileedit/disk"
	"github.com/mm-agent/mm/skills"
)

// skillLibs are the skill libraries by workspace, shared by its sessions,
// and their watchers (ACP only: the / menu follows the skill files).
type skillLibs struct {
	mu      sync.Mutex
	libs    map[string]*skills.Library
	watched map[string]bool
	watches sync.WaitGroup
}

// SkillsFor returns the live skills of a workspace, nearest first:
// the workspace's .mm/skills, the user's skills already written for other
// agents (.claude/skills, .agents/skills), skillsDir (relative to the
// config file), ~/.config/mm/skills, then the shipped ones.
func (a *App) SkillsFor(cwd string) *skills.Library {
	a.skills.mu.Lock()
	defer a.skills.mu.Unlock()
	if l, ok := a.skills.libs[cwd]; ok {
		return l
	}
	var srcs []skills.Source
	for _, d := range skillDirs(a.env, cwd, a.cfg.SkillsDir) {
		root := "" // the user's own folders
		if rel, err := filepath.Rel(cwd, d); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			root = cwd // a repository's skills stay in it
		}
		srcs = append(srcs, skills.Source{FS: disk.DirFS(d, root, disk.MaxControl), Dir: d})
	}
	l := skills.NewLibrary(append(srcs, skills.Shipped())...)
	if a.skills.libs == nil {
		a.skills.libs = map[string]*skills.Library{}
	}
	a.skills.libs[cwd] = l
	return l
}

func skillDirs(env config.Env, cwd, skillsDir string) []string {
	dirs := []string{
		filepath.Join(cwd, ".mm", "skills"),
		filepath.Join(cwd, ".claude", "skills"),
		filepath.Join(cwd, ".agents", "skills"),
	}
	if skillsDir != "" {
		dirs = append(dirs, skillsDir) // made absolute by config.Load
	}
	if home, err := env.Home(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".config", "mm", "skills"))
	}
	return dirs
}

// reservedCommands are slash commands other parts of mm answer; the skill
// rewriter leaves them alone.
func reservedCommand(name string) bool {
	switch name {
	case "compact", "new", "help", "mode", "model", "exit", "skill", "title":
		return true
	}
	return strings.HasPrefix(name, "ask-")
}

// skillRewriter is the engine's prompt rewriter for one session: skills'
// $name and /name, skill routing when a router is given, and a
// ⚠ note per skill file skipped, once each time the skill set is
// reloaded.
func (a *App) skillRewriter(lib *skills.Library, router *decide.Router) func(context.Context, string) engine.Rewrite {
	var mu sync.Mutex
	warned := 0
	return func(ctx context.Context, prompt string) engine.Rewrite {
		set, warns, gen := lib.Current()
		r := set.Rewrite(prompt, reservedCommand)
		out := engine.Rewrite{Prompt: r.Prompt, Answer: r.Answer}
		// A prompt that names a skill itself is not routed: the user's
		// choice wins.
		if router != nil && r.Answer == "" && r.Prompt == prompt && !strings.Contains(prompt, "[skill: ") {
			chosen, info := router.Skill(ctx, prompt, skillOptions(set))
			if chosen != "" {
				out.Prompt = strings.TrimRight(prompt, "\n") + "\n\n" + skills.Line(chosen, "")
			}
			if info != "" {
				out.Info = append(out.Info, info)
			}
		}
		mu.Lock()
		if gen != warned {
			warned = gen
			for _, w := range warns {
				a.log.Warn("skill skipped", "file", w.Path, "err", w.Err)
				out.Notes = append(out.Notes, w.String())
			}
		}
		mu.Unlock()
		out.Notes = append(out.Notes, r.Notes...)
		return out
	}
}

// skillOptions are the skills of set as a skill router's options: their
// descriptions, the same the chat model reads, are the criteria.
func skillOptions(set *skills.Set) decide.Options {
	var opts decide.Options
	for _, sk := range set.All() {
		opts = append(opts, decide.Option{Name: sk.Name, Description: sk.Description})
	}
	return opts
}

// skillCommands is the editor's / menu of skills: one slash command per
// skill of the workspace, with its input hint. The first call for a workspace starts watching its
// skills folders until ctx ends: a skill added or edited during the
// session calls announce(cwd), which sends the / menu again.
func (a *App) skillCommands(ctx context.Context, announce func(cwd string)) func(cwd string) []acp.Command {
	return func(cwd string) []acp.Command {
		lib := a.SkillsFor(cwd)
		set, _, gen := lib.Current()
		a.watchSkills(ctx, cwd, lib, gen, announce)
		var cmds []acp.Command
		for _, sk := range set.All() {
			cmds = append(cmds, acp.Command{Name: sk.Name, Description: sk.Description, Hint: sk.Hint})
		}
		return cmds
	}
}

func (a *App) watchSkills(ctx context.Context, cwd string, lib *skills.Library, since int, announce func(string)) {
	a.skills.mu.Lock()
	defer a.skills.mu.Unlock()
	if a.skills.watched[cwd] || ctx.Err() != nil {
		return
	}
	if a.skills.watched == nil {
		a.skills.watched = map[string]bool{}
	}
	a.skills.watched[cwd] = true
	a.skills.watches.Go(func() {
		r := panics.Try(func() {
			if err := lib.Watch(ctx, since, func() {
				a.log.Info("skills changed", "workspace", cwd)
				announce(cwd)
			}); err != nil {
				a.log.Warn("skills are not watched: the / menu changes at the next session", "err", err)
			}
		})
		if r != nil {
			a.log.Error("internal error in the skills watcher (recovered)", "panic", r.Value)
		}
	})
}

// waitSkillWatches joins the watchers (their ctx ended).
func (a *App) waitSkillWatches() { a.skills.watches.Wait() }
