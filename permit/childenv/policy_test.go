package childenv

import (
	"slices"
	"testing"
)

func TestPolicy(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "EDITOR=vi",
		"MM_API_KEY=k1", "OPENAI_API_KEY=k2", "api_key=k3", "GITHUB_TOKEN=t1",
		"AWS_SECRET_ACCESS_KEY=s1", "PGPASSWORD=p1", "GOOGLE_APPLICATION_CREDENTIALS=/c.json",
		"KEYBOARD=us", // holds KEY: dropped, as codex does; keep: re-admits it
		"LLM_AUTH=the-api-key-value", "COPY_OF_KEY_VALUE=the-api-key-value",
		"NPM_CONFIG_REGISTRY=r", "EMPTY=",
	}
	for _, tc := range []struct {
		name string
		p    Policy
		want []string
	}{
		{"default", Policy{}, []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "EDITOR=vi", "LLM_AUTH=the-api-key-value", "NPM_CONFIG_REGISTRY=r", "EMPTY="}},
		{"keep and drop", Policy{Keep: []string{"github_token", "KEYBOARD"}, Drop: []string{"NPM_*", "LLM_AUTH"}},
			[]string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "EDITOR=vi", "GITHUB_TOKEN=t1", "KEYBOARD=us", "EMPTY="}},
		{"drop wins over keep", Policy{Keep: []string{"*"}, Drop: []string{"MM_API_KEY"}},
			[]string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "EDITOR=vi", "OPENAI_API_KEY=k2", "api_key=k3", "GITHUB_TOKEN=t1", "AWS_SECRET_ACCESS_KEY=s1", "PGPASSWORD=p1", "GOOGLE_APPLICATION_CREDENTIALS=/c.json", "KEYBOARD=us", "LLM_AUTH=the-api-key-value", "COPY_OF_KEY_VALUE=the-api-key-value", "NPM_CONFIG_REGISTRY=r", "EMPTY="}},
		{"secret by value", Policy{Secrets: []string{"the-api-key-value", ""}}, []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "EDITOR=vi", "NPM_CONFIG_REGISTRY=r", "EMPTY="}},
	} {
		if got := tc.p.Environ(environ); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	p := Policy{Secrets: []string{"the-api-key-value", "short"}}
	if got := p.Mask("a the-api-key-value b short"); got != "a [redacted] b short" {
		t.Errorf("mask = %q", got)
	}
}

// A secret learned after the policy was made is dropped and masked from
// then on.
func TestPolicyLearnsSecrets(t *testing.T) {
	known := &Secrets{}
	p := Policy{Learned: known}
	env := []string{"LLM_AUTH=learned-secret-value", "PLAIN=x", "COPY=learned-secret-value"}
	if got := p.Environ(env); len(got) != 3 {
		t.Fatalf("before: %q", got)
	}
	known.Add([]string{"LLM_AUTH"}, []string{"learned-secret-value"})
	if got := p.Environ(env); len(got) != 1 || got[0] != "PLAIN=x" {
		t.Errorf("after: %q", got)
	}
	if got := p.Dropped(env); len(got) != 2 {
		t.Errorf("dropped: %q", got)
	}
	if got := p.Mask("key learned-secret-value here"); got != "key [redacted] here" {
		t.Errorf("mask: %q", got)
	}
}

// A variable whose value carries a secret — the key inside a header,
// under an innocent name — is dropped like the secret itself.
func TestPolicyDropsValuesCarryingASecret(t *testing.T) {
	p := Policy{Secrets: []string{"sk-the-key-0123456789", "short"}}
	got := p.Environ([]string{"AUTH_HEADER=Bearer sk-the-key-0123456789", "PLAIN=not-short-at-all", "SHORTY=short", "WORD=shorter"})
	if want := []string{"PLAIN=not-short-at-all", "WORD=shorter"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	var learned Secrets
	learned.Add(nil, []string{"learned-secret-value"})
	if got := learned.Filter([]string{"X=prefix learned-secret-value", "Y=other"}); !slices.Equal(got, []string{"Y=other"}) {
		t.Errorf("learned: %q", got)
	}
}
