package plan

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mm-agent/mm/tools"
)

func TestPlan(t *testing.T) {
	tool := New()
	if n := len(tool.Description()); n >= 300 {
		t.Errorf("description is %d characters; it costs every request and stays under 300", n)
	}
	for _, tc := range []struct {
		name, args string
		want       []tools.PlanEntry
		err        string
	}{
		{"in order", `{"entries":[{"content":"read","status":"completed"},{"content":"fix","status":"in_progress"},{"content":"test","status":"pending"}]}`,
			[]tools.PlanEntry{{Content: "read", Status: "completed"}, {Content: "fix", Status: "in_progress"}, {Content: "test", Status: "pending"}}, ""},
		{"empty list", `{"entries":[]}`, nil, `"entries" is empty`},
		{"bad status", `{"entries":[{"content":"x","status":"done"}]}`, nil, `use "pending", "in_progress" or "completed"`},
		{"no content", `{"entries":[{"content":" ","status":"pending"}]}`, nil, `entry 1 has no "content"`},
		{"unknown field", `{"entries":[{"content":"x","status":"pending","priority":"high"}]}`, nil, `unknown field "priority"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tool.Run(context.Background(), nil, json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if tc.err != "" {
				if !res.IsError || !strings.Contains(res.Text, tc.err) || res.Plan != nil {
					t.Errorf("got %+v, want an error containing %q", res, tc.err)
				}
				return
			}
			if res.IsError || len(res.Plan) != len(tc.want) {
				t.Fatalf("got %+v", res)
			}
			for i := range tc.want {
				if res.Plan[i] != tc.want[i] {
					t.Errorf("entry %d = %+v, want %+v", i, res.Plan[i], tc.want[i])
				}
			}
		})
	}
}
