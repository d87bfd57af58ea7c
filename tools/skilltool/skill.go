// Package skilltool is read_skill: the model loads a skill's steps by
// name. The catalog (name, description, keywords) sits in the tool's
// description, frozen the first time it is asked for (the session's first
// request) so the request prefix stays byte-stable; the skill itself is
// looked up in the live library, so a skill added during the session can
// be loaded too.
package skilltool

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/mm-agent/mm/skills"
	"github.com/mm-agent/mm/tools"
)

// Params are the arguments of a call.
type Params struct {
	Name string `json:"name" desc:"the skill's name"`
}

const intro = "Load a skill: the steps for a task. Call it when a [skill: …] line names one, or when the request matches a skill below; then carry out its steps."

// New returns read_skill over lib; offer it when lib has skills. Building
// it reads no skill: loading the library (parsing every skill file) is
// left to the first request, so that opening a session does not wait for
// it.
func New(lib *skills.Library) tools.Tool {
	t := tools.New(tools.Spec[Params]{
		Name:        "read_skill",
		Description: intro,
		Kind:        tools.KindRead,
		Caps:        tools.Reads,
		Describe: func(_ tools.Env, p Params) tools.Call {
			c := tools.Call{Title: "read skill " + p.Name}
			if s, ok := lookup(lib, p.Name); ok && !strings.HasPrefix(s.Path, "shipped:") {
				c.Locations = []tools.Location{{Path: s.Path}}
			}
			return c
		},
		Run: func(_ context.Context, _ tools.Env, p Params) (tools.Result, error) {
			return read(lib, p.Name), nil
		},
	})
	return &catalogued{Tool: t, desc: sync.OnceValue(func() string {
		set, _, _ := lib.Current()
		if c := set.Catalog(); c != "" {
			return intro + " Skills:\n" + c
		}
		return intro
	})}
}

// catalogued is read_skill with its description made at first use.
type catalogued struct {
	tools.Tool
	desc func() string
}

func (c *catalogued) Description() string { return c.desc() }

func lookup(lib *skills.Library, name string) (skills.Skill, bool) {
	set, _, _ := lib.Current()
	return set.Lookup(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(name), "$"), "/"))
}

// read is the skill's body, then its other files for read_file; an
// unknown name lists the available ones.
func read(lib *skills.Library, name string) tools.Result {
	s, ok := lookup(lib, name)
	if !ok {
		set, _, _ := lib.Current()
		return tools.Result{IsError: true, Text: fmt.Sprintf("[skill: no skill named %q — available: %s]", name, strings.Join(set.Names(), ", "))}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[skill %s]\n%s\n", s.Name, s.Body)
	if len(s.Files) > 0 {
		fmt.Fprintf(&b, "[files of this skill — open them with read_file: %s]\n", strings.Join(s.Files, ", "))
	}
	res := tools.Result{Text: b.String()}
	if !strings.HasPrefix(s.Path, "shipped:") {
		res.Locations = []tools.Location{{Path: s.Path}}
	}
	return res
}
