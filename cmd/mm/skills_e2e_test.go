package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/skills"
)

const releaseNotesSkill = "---\nname: release-notes\ndescription: Release notes from git log.\nargument-hint: version\n---\nWORKSPACE STEPS: run git log with bash, then group the commits.\n"

// skillWorld is a world on srv whose workspace is a git repository with
// one commit and the workspace skill release-notes (which wins over the
// shipped one of that name).
func skillWorld(t *testing.T, srv *llmtest.Server) *world {
	t.Helper()
	w := newWorldOn(t, srv)
	w.write(".mm/skills/release-notes/SKILL.md", releaseNotesSkill)
	w.write("hello.txt", "hello\n")
	git(t, w.dir, "init", "-q")
	git(t, w.dir, "add", "hello.txt")
	git(t, w.dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "greeting")
	return w
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// checkSkillTurn asserts what the model received: the rewrite line with
// the parameter, then the workspace skill's body as read_skill's result.
func checkSkillTurn(t *testing.T, srv *llmtest.Server) {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	user := reqs[0].Last().Content
	if want := skills.Line("release-notes", "v1.2"); !strings.HasSuffix(user, want) || strings.Contains(user, "/release-notes v1.2") || strings.Contains(user, "$release-notes") {
		t.Errorf("the model got %q, want it to end with the skill line %q", user, want)
	}
	if res := reqs[1].Last(); res.Role != "tool" || !strings.Contains(res.Content, "WORKSPACE STEPS") {
		t.Errorf("read_skill result = %+v, want the workspace skill's body", res)
	}
	if res := reqs[2].Last(); !strings.Contains(res.Content, "greeting") {
		t.Errorf("git log result = %q", res.Content)
	}
}

func TestSkillLineMode(t *testing.T) {
	t.Parallel()
	w := skillWorld(t, scenario(t, "skill_release_notes"))
	stdout, _ := w.lineOK("", "--yes", "-p", "$release-notes v1.2")
	checkSkillTurn(t, w.srv)
	if !strings.Contains(stdout, "## v1.2") {
		t.Errorf("stdout = %q", stdout)
	}
}

func TestSkillACP(t *testing.T) {
	t.Parallel()
	w := skillWorld(t, scenario(t, "skill_release_notes"))
	w.write(".mm/agent.yaml", "yolo: true\n")
	w.trust()
	p := w.session()
	// /release-notes (with its hint) in the / menu after session/new.
	menu := func(has string) map[string]string {
		t.Helper()
		var last map[string]string
		p.WaitUpdates("a / menu with "+has, func(us []sdk.SessionUpdate) bool {
			for _, u := range us {
				if u.AvailableCommandsUpdate != nil {
					last = map[string]string{}
					for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
						last[c.Name] = ""
						if c.Input != nil && c.Input.Unstructured != nil {
							last[c.Name] = c.Input.Unstructured.Hint
						}
					}
				}
			}
			_, ok := last[has]
			return ok
		})
		return last
	}
	commandsAfterAnswer(t, p, string(p.id))
	m := menu("release-notes")
	if m["release-notes"] != "version" || m["run-tests"] == "" {
		t.Errorf("/ menu = %v", m)
	}
	if _, ok := m["compact"]; !ok {
		t.Errorf("the built-in commands are gone from the / menu: %v", m)
	}
	// A skill added during the session: the menu is sent again.
	w.write(".mm/skills/greet.md", "---\ndescription: Greet someone.\nargument-hint: name\n---\nSay hello.\n")
	if m := menu("greet"); m["greet"] != "name" || m["release-notes"] != "version" {
		t.Errorf("/ menu after adding greet = %v", m)
	}
	p.endTurn("/release-notes v1.2")
	checkSkillTurn(t, w.srv)
}

// TestSkillUnknownAndList: an unknown skill is answered in one line with
// the nearest names, without a model call; /skills lists them; a
// malformed skill is one ⚠ line naming the file, and the others still
// load.
func TestSkillUnknownAndList(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.Scenario{})
	w := skillWorld(t, srv)
	w.write(".mm/skills/broken.md", "no front matter\n")
	stdout, stderr, code := w.line("", "-p", "/relase-notes v1")
	if code != 0 || !strings.Contains(stdout, `no skill named "relase-notes" — nearest: /release-notes`) {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	if !strings.Contains(stderr, "⚠ skill "+filepath.Join(w.dir, ".mm", "skills", "broken.md")+" skipped: no front matter") {
		t.Errorf("no ⚠ line for the malformed skill:\n%s", stderr)
	}
	stdout, _, _ = w.line("", "-p", "/skills")
	testenv.WantIn(t, "/skills", stdout, "/release-notes <version> — Release notes from git log.", "/run-tests", "/background-jobs")
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests for local answers", n)
	}
}

// TestFixedPromptCost: the fixed prompt cost. The first request of a
// default session, with the seven shipped skills, costs at most 7,000
// characters of system prompt and tool schemas.
func TestFixedPromptCost(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "short_answer")
	w.write("main.go", "package main\n") // the lsp tool too, when gopls is installed
	if _, _, code := w.line("", "-p", "hi"); code != 0 {
		t.Fatal("mm failed")
	}
	req := w.srv.Requests()[0]
	size := len(req.Messages[0].Content)
	var names []string
	for _, tl := range req.Tools {
		size += len(tl.Name) + len(tl.Description) + len(tl.Parameters)
		names = append(names, tl.Name)
	}
	t.Logf("fixed prompt: %d characters (system + %d tools: %s)", size, len(req.Tools), strings.Join(names, ", "))
	if !strings.Contains(strings.Join(names, ","), "read_skill") {
		t.Fatalf("read_skill not offered: %v", names)
	}
	if size > 7000 {
		t.Errorf("fixed prompt is %d characters, budget 7,000", size)
	}
	// Without the skills' catalog (read_skill), the default session stays
	// within 6,000 characters: the budget the catalog is added to.
	for _, tl := range req.Tools {
		if tl.Name == "read_skill" {
			if bare := size - len(tl.Name) - len(tl.Description) - len(tl.Parameters); bare > 6000 {
				t.Errorf("fixed prompt without the skill catalog is %d characters, budget 6,000", bare)
			}
		}
	}
}

// TestSkillSources: every place skills are found, nearest first on a
// clash: the workspace's .mm/skills, .claude/skills and .agents/skills,
// skillsDir (relative to the config file), ~/.config/mm/skills, the
// shipped ones.
func TestSkillSources(t *testing.T) {
	t.Parallel()
	w := newWorldOn(t, llmtest.NewServer(llmtest.Scenario{}))
	home := homeOf(w.env)
	sk := func(desc string) string { return "---\ndescription: " + desc + "\n---\nsteps\n" }
	w.writeAll(map[string]string{
		".mm/agent.yaml":               "skillsDir: ../team-skills\n",
		".mm/skills/deploy.md":         sk("From .mm."),
		".claude/skills/lint/SKILL.md": sk("From .claude."),
		".agents/skills/fmt.md":        sk("From .agents."),
		"team-skills/triage.md":        sk("From skillsDir."),
	})
	testenv.WriteFile(t, filepath.Join(home, ".config", "mm", "skills", "fmt.md"), sk("From home, loses to .agents."))
	testenv.WriteFile(t, filepath.Join(home, ".config", "mm", "skills", "run-tests.md"), sk("From home, wins over the shipped one."))
	stdout, stderr, code := w.line("", "-p", "/skills")
	if code != 0 {
		t.Fatal(stderr)
	}
	testenv.WantIn(t, "/skills", stdout, "/deploy — From .mm.", "/lint — From .claude.", "/fmt — From .agents.", "/triage — From skillsDir.", "/run-tests — From home, wins over the shipped one.", "/review-diff")
	if strings.Contains(stderr, "skipped") {
		t.Errorf("a skill was skipped:\n%s", stderr)
	}
	if strings.Contains(stdout, "loses to") {
		t.Errorf("the farther fmt won:\n%s", stdout)
	}
}
