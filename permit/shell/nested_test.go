package shell

import (
	"context"
	"strings"
	"testing"
)

// TestNestedSubstitutionsStayBounded: a line of a thousand nested $(…)
// (30 KB) is judged at once, with a question of bounded size, as one
// part past the bound that no answer covers and any deny rule refuses.
func TestNestedSubstitutionsStayBounded(t *testing.T) {
	line := "echo " + strings.Repeat("$(echo abcdefghijklmnopqrstu ", 1000) + strings.Repeat(")", 1000)
	if why := Refusal(line, ""); why != "" {
		t.Fatalf("refused: %s", why)
	}
	a := Approval(context.Background(), newEnv(t), line, line, nil)
	if n := len(a.Title) + len(a.Detail); n > 4*len(line) {
		t.Errorf("the question is %d bytes for a %d-byte line", n, len(line))
	}
	last := a.Parts[len(a.Parts)-1]
	if len(a.Parts) > maxParts+1 || !last.Unknown || last.Key != "" {
		t.Errorf("%d parts, the last %+v", len(a.Parts), last)
	}
}
