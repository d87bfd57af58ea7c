package tools

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// Policy is the one permission flow of mm (Approve): it decides what
// needs no question — yolo, the config's permission rules, the
// "always"/"never" answers given in this session — and otherwise puts the
// question to an Asker, which front ends implement by rendering it (an
// ACP session/request_permission, a line on the terminal). What an answer
// means and what is remembered is decided here only, so ACP and line mode
// behave the same. Safe for concurrent use.
//
// Precedence: a deny rule wins; then plan mode refuses what changes files;
// then a "never" answer; then yolo mode; then a preToolUse hook's allow
// (or its ask, which asks); then accept-edits for edits; then an allow rule
// or an "always" answer; otherwise the user is asked. So a hook's allow only
// skips the question: a deny rule, plan mode and the user's "never" still win.
type Policy struct {
	allow, deny []rule

	mu       sync.Mutex
	mode     Mode
	always   map[string]bool // tool + "\x00" + key → allowed
	remember func(Approval, bool)
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
// workspace's remembered answers, A4).
func (p *Policy) Persist(save func(a Approval, allowed bool)) {
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
	AllowAlways  // and remember it for the session
	RejectAlways // and remember it for the session
)

// Asker renders the question of an approval and returns the answer. It
// returns an error wrapping ErrNoOneToAsk when there is no one to ask
// (no editor connected, no terminal), any other error when the question
// was cut short (ctx cancelled, the prompt cancelled).
type Asker func(ctx context.Context, req Approval) (Answer, error)

// ErrNoOneToAsk says a question cannot be put to anyone; the action is
// then refused with a reason the model reads.
var ErrNoOneToAsk = errors.New("this action needs the user's permission and no one can be asked")

// Approve decides req: the policy when it can, else ask (nil: no one to
// ask). The answer's "always"/"never" is remembered for the session.
func (p *Policy) Approve(ctx context.Context, req Approval, ask Asker) (Decision, error) {
	if d, ok := p.Decide(req); ok {
		return d, nil
	}
	if ask == nil {
		return Decision{Reason: ErrNoOneToAsk.Error() + " (run with --yes or set yolo: true)"}, nil
	}
	a, err := ask(ctx, req)
	if errors.Is(err, ErrNoOneToAsk) {
		return Decision{Reason: err.Error()}, nil
	}
	if err != nil {
		return Decision{}, err
	}
	switch a {
	case AllowAlways:
		p.Remember(req, true)
		return Decision{Allowed: true, Reason: "the user allowed it for this session"}, nil
	case AllowOnce:
		return Decision{Allowed: true, Reason: "the user allowed it"}, nil
	case RejectAlways:
		p.Remember(req, false)
		return Decision{Reason: "the user declined, for the rest of this session"}, nil
	}
	return Decision{Reason: "the user declined"}, nil
}

// Decide returns the decision and true when no question is needed.
func (p *Policy) Decide(a Approval) (Decision, bool) {
	if p == nil {
		return Decision{}, false
	}
	if r, ok := match(p.deny, a); ok {
		return Decision{Reason: "denied by the permissions.deny rule " + r}, true
	}
	p.mu.Lock()
	allowed, remembered := p.always[a.Tool+"\x00"+a.Key]
	mode := p.mode
	p.mu.Unlock()
	if mode == ModePlan && changesFiles(a.Kind) {
		return Decision{Reason: "plan mode is read-only — nothing is written or run; put this step in your plan instead"}, true
	}
	if remembered && !allowed {
		return Decision{Reason: "the user chose to always refuse " + a.Tool + " here"}, true
	}
	if mode == ModeYolo {
		return Decision{Allowed: true, Reason: "yolo"}, true
	}
	switch a.Hook {
	case HookAllow:
		return Decision{Allowed: true, Reason: "allowed by a preToolUse hook"}, true
	case HookAsk:
		return Decision{}, false
	}
	if mode == ModeAcceptEdits && isEdit(a.Kind) {
		return Decision{Allowed: true, Reason: "accept-edits mode"}, true
	}
	if r, ok := match(p.allow, a); ok {
		return Decision{Allowed: true, Reason: "allowed by the permissions.allow rule " + r}, true
	}
	if remembered {
		return Decision{Allowed: true, Reason: "always allowed in this session"}, true
	}
	return Decision{}, false
}

// Remember records an "always" (allowed) or "never" (refused) answer for
// the approval's tool and key, for the rest of the session.
func (p *Policy) Remember(a Approval, allowed bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.always[a.Tool+"\x00"+a.Key] = allowed
	save := p.remember
	p.mu.Unlock()
	if save != nil {
		save(a, allowed)
	}
}

func match(rs []rule, a Approval) (string, bool) {
	for _, r := range rs {
		if r.tool != a.Tool && r.tool != "*" {
			continue
		}
		if glob(r.pattern, a.Subject) {
			return r.tool + ":" + r.pattern, true
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
