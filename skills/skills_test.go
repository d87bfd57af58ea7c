package skills_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/skills"
)

func skill(name, desc, body string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body + "\n"
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       string // skill name, or the error's substring after "!"
	}{
		{"ok", "---\nname: greet\ndescription: Say hello.\nkeywords: [hi, hello]\nargument-hint: who\n---\nSay hello to the person.\n", "greet"},
		{"name from folder", "---\ndescription: d\n---\nsteps\n", "fallback"},
		{"crlf and bom", "\xef\xbb\xbf---\r\nname: x\r\ndescription: d\r\n---\r\nsteps\r\n", "x"},
		{"unknown keys of the format are fine", "---\nname: x\ndescription: d\nlicense: MIT\nallowed-tools: [bash]\n---\nsteps\n", "x"},
		{"no front matter", "# Title\nsteps\n", "!no front matter"},
		{"unclosed", "---\nname: x\ndescription: d\nsteps\n", "!not closed"},
		{"no description", "---\nname: x\n---\nsteps\n", "!description is missing"},
		{"bad name", "---\nname: Big Name\ndescription: d\n---\nsteps\n", "!lowercase"},
		{"too many keywords", "---\nname: x\ndescription: d\nkeywords: [a,b,c,d,e,f,g,h,i]\n---\nsteps\n", "!9 keywords, at most 8"},
		{"bad yaml", "---\nname: [x\ndescription: d\n---\nsteps\n", "!front matter:"},
		{"no body", "---\nname: x\ndescription: d\n---\n\n", "!no steps"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := skills.Parse([]byte(c.text), "fallback")
			if strings.HasPrefix(c.want, "!") {
				if err == nil || !strings.Contains(err.Error(), c.want[1:]) {
					t.Fatalf("err = %v, want %q", err, c.want[1:])
				}
				return
			}
			if err != nil || s.Name != c.want {
				t.Fatalf("Parse = %+v, %v; want name %q", s, err, c.want)
			}
		})
	}
	s, _ := skills.Parse([]byte("---\nname: greet\ndescription: Say\n  hello.\nkeywords: [hi, hello]\nargument-hint: who\n---\nSay hello.\n"), "")
	if s.Description != "Say hello." || s.Hint != "who" || strings.Join(s.Keywords, ",") != "hi,hello" || s.Body != "Say hello." {
		t.Errorf("parsed %+v", s)
	}
}

func TestLoadNearestWinsAndMalformedSkipped(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	testenv.WriteFile(t, filepath.Join(ws, "release-notes", "SKILL.md"), skill("release-notes", "Workspace notes.", "ws steps"))
	testenv.WriteFile(t, filepath.Join(ws, "release-notes", "template.md"), "## vX")
	testenv.WriteFile(t, filepath.Join(ws, "broken.md"), "no front matter here")
	testenv.WriteFile(t, filepath.Join(ws, "README.md"), "not a skill")
	testenv.WriteFile(t, filepath.Join(ws, "empty-folder", "notes.txt"), "not a skill")
	testenv.WriteFile(t, filepath.Join(user, "release-notes.md"), skill("release-notes", "User notes.", "user steps"))
	testenv.WriteFile(t, filepath.Join(user, "greet.md"), skill("greet", "Say hello.", "hello"))

	set, warns := skills.Load(dirSource(ws), dirSource(user), skills.Shipped())
	if len(warns) != 1 || warns[0].Path != filepath.Join(ws, "broken.md") || !strings.Contains(warns[0].String(), "no front matter") {
		t.Fatalf("warnings = %v, want one for broken.md", warns)
	}
	rn, ok := set.Lookup("release-notes")
	if !ok || rn.Description != "Workspace notes." {
		t.Fatalf("release-notes = %+v: the workspace's must win over the user's and the shipped one", rn)
	}
	if rn.Path != filepath.Join(ws, "release-notes", "SKILL.md") || len(rn.Files) != 1 || rn.Files[0] != filepath.Join(ws, "release-notes", "template.md") {
		t.Errorf("path %s files %v", rn.Path, rn.Files)
	}
	if _, ok := set.Lookup("greet"); !ok {
		t.Error("greet (user) not found")
	}
	if _, ok := set.Lookup("run-tests"); !ok {
		t.Error("shipped run-tests not found")
	}
	names := set.Names()
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("names not sorted: %v", names)
		}
	}
}

// TestShipped: the shipped skills all parse, are the seven mm ships, and
// tell a small model plainly that the commands are its own to run.
func TestShipped(t *testing.T) {
	set, warns := skills.Load(skills.Shipped())
	if len(warns) > 0 {
		t.Fatalf("shipped skills malformed: %v", warns)
	}
	want := "background-jobs commit-message explain-error release-notes rename-symbol review-diff run-tests"
	if got := strings.Join(set.Names(), " "); got != want {
		t.Fatalf("shipped = %s, want %s", got, want)
	}
	for _, s := range set.All() {
		if !strings.Contains(s.Body, "in this same turn") {
			t.Errorf("%s: a shipped skill must say the steps are for the model to do in this same turn", s.Name)
		}
		if s.Hint == "" {
			t.Errorf("%s: no argument-hint for its slash command", s.Name)
		}
		if len(s.Body) > 1600 {
			t.Errorf("%s: body is %d bytes; a 4B model follows short skills", s.Name, len(s.Body))
		}
	}
	if c := set.Catalog(); len(c) > 1000 {
		t.Errorf("catalog of the shipped skills is %d chars (it sits in read_skill's description)", len(c))
	}
}

func TestRewrite(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "release-notes", "SKILL.md"), skill("release-notes", "Notes.", "steps"))
	testenv.WriteFile(t, filepath.Join(dir, "greetings.md"), skill("greetings", "Greet.", "steps"))
	set, _ := skills.Load(dirSource(dir))
	reserved := func(n string) bool { return n == "compact" || strings.HasPrefix(n, "ask-") }
	line := skills.Line
	for _, c := range []struct {
		in, prompt, answer, note string
	}{
		{in: "/release-notes v1.2", prompt: line("release-notes", "v1.2")},
		{in: "  /greetings Bob", prompt: line("greetings", "Bob")},
		{in: "/greetings", prompt: line("greetings", "")},
		{in: "$greetings Bob", prompt: line("greetings", "Bob")},
		{in: "please $greetings Bob\nand then stop", prompt: "please " + line("greetings", "Bob") + "\nand then stop"},
		{in: "echo $HOME and $PATH", prompt: "echo $HOME and $PATH"},
		{in: "cost is 5$greetings", prompt: "cost is 5$greetings"},
		{in: "run $greting Bob", prompt: "run $greting Bob", note: `no skill named "greting" — nearest: $greetings`},
		{in: "/usr/bin/env is missing", prompt: "/usr/bin/env is missing"},
		{in: "/compact", prompt: "/compact"},
		{in: "/ask-reviewer hi", prompt: "/ask-reviewer hi"},
		{in: "/relase-notes v1", answer: `no skill named "relase-notes" — nearest: /release-notes`},
		{in: "/zzz", answer: `no skill named "zzz" — type /skills for the list`},
		{in: "/skills", answer: "Skills (type /name or $name with its parameters):\n- /greetings — Greet.\n- /release-notes — Notes."},
		{in: "no skill here", prompt: "no skill here"},
	} {
		got := set.Rewrite(c.in, reserved)
		note := strings.Join(got.Notes, "|")
		if got.Prompt != c.prompt || got.Answer != c.answer || note != c.note {
			t.Errorf("Rewrite(%q) = %q / answer %q / notes %q\nwant %q / %q / %q", c.in, got.Prompt, got.Answer, note, c.prompt, c.answer, c.note)
		}
	}
	// With no skill at all (a nil set: no folder, nothing shipped), the
	// user is told where skills come from rather than "see /skills".
	var none *skills.Set
	if got := none.Rewrite("/zzz", reserved); got.Answer != `no skill named "zzz" — no skills are installed (see docs/skills.md)` {
		t.Errorf("Rewrite(/zzz) without skills = %+v", got)
	}
	if got := none.Rewrite("/skills", reserved); !strings.HasPrefix(got.Answer, "No skills found. Put one in .mm/skills/NAME/SKILL.md") {
		t.Errorf("/skills without skills = %+v", got)
	}
	if _, ok := none.Lookup("greetings"); ok || none.All() != nil {
		t.Error("a nil set has skills")
	}
	if l := line("release-notes", "v1.2"); l != "[skill: release-notes — load it with read_skill and carry out its steps now; parameters: v1.2]" {
		t.Errorf("Line = %s", l)
	}
}

// A skill added or edited during the session is seen at the next look,
// so the editor's / menu can follow.
func TestLibraryReloadsOnChange(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "a.md"), skill("a", "A.", "steps"))
	lib := skills.NewLibrary(dirSource(dir), skills.Shipped())
	set, _, gen := lib.Current()
	if _, ok := set.Lookup("a"); !ok {
		t.Fatal("a not found")
	}
	if _, _, g := lib.Current(); g != gen {
		t.Fatalf("nothing changed but the generation moved %d → %d", gen, g)
	}
	testenv.WriteFile(t, filepath.Join(dir, "b", "SKILL.md"), skill("b", "B.", "steps"))
	set, _, gen2 := lib.Current()
	if _, ok := set.Lookup("b"); !ok || gen2 == gen {
		t.Fatalf("added skill b not seen (gen %d → %d)", gen, gen2)
	}
	// An edit that keeps the size: the modification time tells.
	later := time.Now().Add(2 * time.Second)
	testenv.WriteFile(t, filepath.Join(dir, "a.md"), skill("a", "Z.", "steps"))
	os.Chtimes(filepath.Join(dir, "a.md"), later, later)
	set, _, gen3 := lib.Current()
	if a, _ := set.Lookup("a"); a.Description != "Z." || gen3 == gen2 {
		t.Fatalf("edited skill a not reloaded: %+v", a)
	}
}

func TestNearest(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"release-notes", "run-tests", "review-diff"} {
		testenv.WriteFile(t, filepath.Join(dir, n+".md"), skill(n, "d", "s"))
	}
	set, _ := skills.Load(dirSource(dir))
	if got := strings.Join(set.Nearest("review", 3), ","); got != "review-diff" {
		t.Errorf("Nearest(review) = %s", got)
	}
	if got := set.Nearest("kubernetes", 3); len(got) != 0 {
		t.Errorf("Nearest(kubernetes) = %v, want none", got)
	}
}

// A skill folder created during the session is seen by the watcher,
// even when the skills folder itself did not exist at the start.
func TestWatch(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".mm", "skills")
	lib := skills.NewLibrary(dirSource(dir), skills.Shipped())
	ctx, cancel := context.WithCancel(context.Background())
	changed := make(chan struct{}, 8)
	done := make(chan error, 1)
	_, _, gen := lib.Current()
	go func() { done <- lib.Watch(ctx, gen, func() { changed <- struct{}{} }) }()
	defer func() { cancel(); <-done }()
	// until writes the file again each second until a change is reported
	// and ok holds (the watcher goroutine may not have set its watches yet,
	// and a reload may land between the folder's creation and the file's).
	until := func(what, path, text string, ok func(*skills.Set) bool) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			testenv.WriteFile(t, path, text)
			select {
			case <-changed:
				if set, _, _ := lib.Current(); ok(set) {
					return
				}
			case <-time.After(time.Second):
			case <-deadline:
				set, _, _ := lib.Current()
				t.Fatalf("no change reported after %s (names now %v)", what, set.Names())
			}
		}
	}
	until("creating .mm/skills/greet/SKILL.md", filepath.Join(dir, "greet", "SKILL.md"), skill("greet", "Greet.", "steps"),
		func(set *skills.Set) bool { return len(set.Names()) == 8 })
	until("editing greet", filepath.Join(dir, "greet", "SKILL.md"), skill("greet", "Greet someone by name.", "steps"),
		func(set *skills.Set) bool {
			s, _ := set.Lookup("greet")
			return s.Description == "Greet someone by name."
		})
}

// dirSource is a skills folder on disk.
func dirSource(dir string) skills.Source { return skills.Source{FS: os.DirFS(dir), Dir: dir} }
