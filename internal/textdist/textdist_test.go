package textdist_test

import (
	"testing"

	"github.com/mm-agent/mm/internal/textdist"
)

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"baseURL", "baseURL", 0},
		{"baseUrl", "baseURL", 2},
		{"gaurd", "guard", 2},
		{"definition", "defintion", 1},
		{"kitten", "sitting", 3},
	}
	for _, tt := range tests {
		if got := textdist.Levenshtein(tt.a, tt.b); got != tt.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := textdist.Levenshtein(tt.b, tt.a); got != tt.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}
