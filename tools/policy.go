package tools

import (
	"strings"
	"sync"
)

// Policy decides approvals that need no question: yolo, the config's
// permission rules, and the "always"/"never" answers given in this session.
// Front ends consult it before asking the user and record the answers in
// it, so ACP and line mode behave the same. Safe for concurrent use.
//
// Precedence: a deny rule wins; then a "never" answer; then yolo; then an
// allow rule or an "always" answer; otherwise the user is asked.
type Policy struct {
	yolo        bool
	allow, deny []rule

	mu     sync.Mutex
	always map[string]bool // tool + "\x00" + key → allowed
}

type rule struct{ tool, pattern string }

// NewPolicy builds a policy. Rules read "tool:pattern" ("bash:git status*",
// "edit_file:*") or just "tool"; the pattern is matched against the
// approval's Subject with * matching any run of characters.
func NewPolicy(yolo bool, allow, deny []string) *Policy {
	return &Policy{yolo: yolo, allow: parseRules(allow), deny: parseRules(deny), always: map[string]bool{}}
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
	p.mu.Unlock()
	if remembered && !allowed {
		return Decision{Reason: "the user refused " + a.Tool + " for this session"}, true
	}
	if p.yolo {
		return Decision{Allowed: true, Reason: "yolo"}, true
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
	defer p.mu.Unlock()
	p.always[a.Tool+"\x00"+a.Key] = allowed
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
