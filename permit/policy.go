package permit

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/mm-agent/mm/permit/runlater"
	"github.com/mm-agent/mm/tools"
)

// Policy is the one permission flow of mm (Approve): it decides what
// needs no question — yolo, the config's permission rules, the
// "always"/"never" answers given in this session — and otherwise puts the
// question to an Asker, which front ends implement by rendering it (an
// ACP session/request_permission, a line on the terminal). What an answer
// means and what is remembered is decided here only, so ACP and line mode
// behave the same. Safe for concurrent use.
//
// Precedence: an approval that declares no capabilities is refused; a
// deny rule wins; then plan mode refuses what is not read-only; then a
// "never" answer; then a write that a link leads to a file that runs
// later is refused, and one to such a file asked (RunsLater); then yolo mode; then a preToolUse hook's allow (or its
// ask, which asks); then accept-edits for what only writes workspace
// files; then allow rules and "always" answers covering every part;
// otherwise the user is asked. So a hook's allow only
// skips the question: a deny rule, plan mode and the user's "never" still win.
type Policy struct {
	allow, deny []rule

	mu       sync.Mutex
	mode     Mode
	always   map[string]bool // tool + "\x00" + key → allowed
	remember func(tools.Approval, bool)
	runLater []*runlater.RunLater // one per root of the session
}

type rule struct{ tool, pattern string }

// NewPolicy builds a policy. Rules read "tool:pattern" ("bash:git status*",
// "edit_file:*") or just "tool"; the pattern is matched against the
// approval's Subject with * matching any run of characters.
// yolo starts the policy in ModeYolo, else in ModeAsk.
func NewPolicy(yolo bool, allow, deny []string) *Policy {
	mode := ModeAsk
	if yolo {
		mode = ModeYolo
	}
	return &Policy{mode: mode, allow: parseRules(allow), deny: parseRules(deny), always: map[string]bool{}}
}

// SetMode switches the permission mode; it applies to the next approval.
func (p *Policy) SetMode(m Mode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = m
}

// Mode is the current permission mode.
func (p *Policy) Mode() Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// Persist makes every later "always"/"never" answer also go to save (the
// workspace's remembered answers).
func (p *Policy) Persist(save func(a tools.Approval, allowed bool)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.remember = save
}

// Recall restores an answer given in an earlier session of the workspace.
func (p *Policy) Recall(tool, key string, allowed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.always[tool+"\x00"+key] = allowed
}

func parseRules(ss []string) []rule {
	var rs []rule
	for _, s := range ss {
		tool, pat, ok := strings.Cut(s, ":")
		if !ok {
			pat = "*"
		}
		rs = append(rs, rule{tool: strings.TrimSpace(tool), pattern: strings.TrimSpace(pat)})
	}
	return rs
}

// Answer is the user's answer to a permission question.
type Answer int

// The answers a front end can render; the zero value refuses.
const (
	RejectOnce Answer = iota
	AllowOnce
	AllowAlways  // and remember it for the workspace
	RejectAlways // and remember it for the workspace
	// AllowUnseen allows without anyone having seen the question (line
	// mode's --yes): like yolo, it does not count as the user's answer.
	AllowUnseen
)

// Asker renders the question of an approval and returns the answer. It
// returns an error wrapping ErrNoOneToAsk when there is no one to ask
// (no editor connected, no terminal), any other error when the question
// was cut short (ctx cancelled, the prompt cancelled).
type Asker func(ctx context.Context, req tools.Approval) (Answer, error)

// ErrNoOneToAsk says a question cannot be put to anyone; the action is
// then refused with a reason the model reads.
var ErrNoOneToAsk = errors.New("this action needs the user's permission and no one can be asked")

// Approve decides req: the policy when it can, else ask (nil: no one to
// ask). The answer's "always"/"never" is remembered for the workspace:
// for this session and, through Persist, for later ones.
func (p *Policy) Approve(ctx context.Context, req tools.Approval, ask Asker) (tools.Decision, error) {
	if d, ok := p.Decide(req); ok {
		return d, nil
	}
	later, _ := p.runsLater(req)
	if ask == nil && later != "" {
		return tools.Decision{Reason: ErrNoOneToAsk.Error() + ": " + later + " — --yes and yolo do not answer for it"}, nil
	}
	if ask == nil {
		return tools.Decision{Reason: ErrNoOneToAsk.Error() + " (run with --yes or set yolo: true)"}, nil
	}
	if later != "" {
		req.Title += " ⚠ " + later
		req.RunsLater = later
	}
	a, err := ask(ctx, req)
	if later != "" && a == AllowAlways {
		a = AllowOnce
	}
	if errors.Is(err, ErrNoOneToAsk) {
		return tools.Decision{Reason: err.Error()}, nil
	}
	if err != nil {
		return tools.Decision{}, err
	}
	switch a {
	case AllowAlways:
		p.Remember(req, true)
		return tools.Decision{Allowed: true, Asked: true, Reason: "the user allowed it, and always in this workspace"}, nil
	case AllowOnce:
		return tools.Decision{Allowed: true, Asked: true, Reason: "the user allowed it"}, nil
	case AllowUnseen:
		return tools.Decision{Allowed: true, Reason: "allowed by --yes"}, nil
	case RejectAlways:
		p.Remember(req, false)
		return tools.Decision{Reason: "the user declined, for good in this workspace"}, nil
	}
	return tools.Decision{Reason: "the user declined"}, nil
}

// Decide returns the decision and true when no question is needed.
//
// It reads only what the approval declares: its capabilities (for the
// modes) and its parts (for answers and rules). Every part must be
// covered by an allow rule or an "always" answer for the action to go
// ahead unasked; a deny rule matching any part refuses the whole action.
func (p *Policy) Decide(a tools.Approval) (tools.Decision, bool) {
	if p == nil {
		return tools.Decision{}, false
	}
	if a.Caps == 0 {
		return tools.Decision{Reason: a.Tool + " does not declare what it does, so mm does not run it"}, true
	}
	parts := partsOf(a)
	if r, ok := denied(p.deny, a.Tool, parts); ok {
		return tools.Decision{Reason: "denied by the permissions.deny rule " + r}, true
	}
	p.mu.Lock()
	mode := p.mode
	refused, covered := p.lookup(a.Tool, parts)
	p.mu.Unlock()
	if mode == ModePlan && !ReadOnly(a.Caps) {
		return tools.Decision{Reason: "plan mode is read-only — nothing is written, and only commands that only read run (this " + a.Caps.String() + "); put this step in your plan instead"}, true
	}
	if refused != "" {
		return tools.Decision{Reason: "the user chose to always refuse " + refused + " here"}, true
	}
	if why, refuse := p.runsLater(a); refuse {
		return tools.Decision{Reason: why}, true
	} else if why != "" {
		return tools.Decision{}, false
	}
	if mode == ModeYolo {
		return tools.Decision{Allowed: true, Reason: "yolo"}, true
	}
	switch a.Hook {
	case tools.HookAllow:
		return tools.Decision{Allowed: true, Reason: "allowed by a preToolUse hook"}, true
	case tools.HookAsk:
		return tools.Decision{}, false
	}
	if mode == ModeAcceptEdits && editOnly(a.Caps) {
		return tools.Decision{Allowed: true, Reason: "accept-edits mode"}, true
	}
	if why, ok := p.covered(a.Tool, parts, covered); ok {
		return tools.Decision{Allowed: true, Reason: why}, true
	}
	return tools.Decision{}, false
}

// lookup finds the remembered answers of the parts: the first part the
// user always refuses (as text, "" when none) and which parts an "always"
// answer allows. The caller holds p.mu.
func (p *Policy) lookup(tool string, parts []tools.Part) (refused string, allowed []bool) {
	allowed = make([]bool, len(parts))
	for i, pt := range parts {
		if pt.Key == "" {
			continue
		}
		ok, remembered := p.always[tool+"\x00"+pt.Key]
		if remembered && !ok && refused == "" {
			refused = tool
			if pt.Key != tool {
				refused += " " + pt.Key
			}
		}
		allowed[i] = remembered && ok
	}
	return refused, allowed
}

// covered reports whether every part is allowed by a rule or an "always"
// answer, and says by what.
func (p *Policy) covered(tool string, parts []tools.Part, always []bool) (string, bool) {
	var rules []string
	byAnswer := false
	for i, pt := range parts {
		if r, ok := allowed(p.allow, tool, pt); ok {
			if !slices.Contains(rules, r) {
				rules = append(rules, r)
			}
			continue
		}
		if !always[i] {
			return "", false
		}
		byAnswer = true
	}
	switch {
	case len(rules) > 0 && byAnswer:
		return "allowed by the permissions.allow rule " + strings.Join(rules, ", ") + " and an earlier \"always\" answer", true
	case len(rules) > 0:
		return "allowed by the permissions.allow rule " + strings.Join(rules, ", "), true
	}
	return "always allowed in this workspace", true
}

// Remember records an "always" (allowed) or "never" (refused) answer for
// each part of the approval that an answer may cover.
func (p *Policy) Remember(a tools.Approval, allowed bool) {
	if p == nil {
		return
	}
	var keys []tools.Approval
	p.mu.Lock()
	for _, pt := range partsOf(a) {
		if pt.Key == "" {
			continue
		}
		p.always[a.Tool+"\x00"+pt.Key] = allowed
		one := a
		one.Key, one.Parts = pt.Key, nil
		keys = append(keys, one)
	}
	save := p.remember
	p.mu.Unlock()
	if save != nil {
		for _, k := range keys {
			save(k, allowed)
		}
	}
}

// allowed finds the allow rule that covers the part, if any.
func allowed(rs []rule, tool string, pt tools.Part) (string, bool) {
	if pt.Rule == "" {
		return "", false
	}
	for _, r := range rs {
		if (r.tool == tool || r.tool == "*") && glob(r.pattern, pt.Rule) {
			return r.tool + ":" + r.pattern, true
		}
	}
	return "", false
}

// denied finds a deny rule matching any form of any part.
func denied(rs []rule, tool string, parts []tools.Part) (string, bool) {
	for _, r := range rs {
		if r.tool != tool && r.tool != "*" {
			continue
		}
		for _, pt := range parts {
			if pt.Unknown {
				return r.tool + ":" + r.pattern + " (the program is computed when it runs, so no deny rule can be checked against it)", true
			}
			for _, s := range pt.Deny {
				if glob(r.pattern, s) {
					return r.tool + ":" + r.pattern, true
				}
			}
		}
	}
	return "", false
}

// glob matches s against a pattern where * matches any run of characters.
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i := 1; i < len(parts)-1; i++ {
		j := strings.Index(s, parts[i])
		if j < 0 {
			return false
		}
		s = s[j+len(parts[i]):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// partsOf is what an answer or rule must cover for a: its Parts, or the one
// part its Key and Subject make.
func partsOf(a tools.Approval) []tools.Part {
	if a.Parts != nil {
		return a.Parts
	}
	return []tools.Part{{Key: a.Key, Rule: a.Subject, Deny: []string{a.Subject}}}
}

// ReadOnly reports whether c declares something and changes nothing: no
// write anywhere, no program run. Plan mode allows only these.
func ReadOnly(c tools.Caps) bool {
	return c != 0 && c&^(tools.Reads|tools.Network) == 0
}

// editOnly reports whether c only reads and writes ordinary files of the
// workspace: what accept-edits lets through.
func editOnly(c tools.Caps) bool {
	return c != 0 && c&^(tools.Reads|tools.WritesWorkspace) == 0
}
