package line

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine"
)

// TestJSONEventsDocumented: every event type and field of the golden file
// is in the --json table of docs/line-mode.md.
func TestJSONEventsDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "line-mode.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## `mm -p --json` events")
	if !ok {
		t.Fatal("docs/line-mode.md has no \"## `mm -p --json` events\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	// Every type jsonEvent produces, and every field of the shape.
	var types []string
	for _, e := range []engine.Event{engine.Text{}, engine.Thought{}, engine.Progress{}, engine.ToolStarted{}, engine.ToolUpdated{},
		engine.ToolFinished{}, engine.Plan{}, engine.Usage{}, engine.Struggle{}, engine.TurnEnd{}} {
		types = append(types, jsonEvent(e).Type)
	}
	var fields []string
	for _, v := range []any{jsonEventFields{}, jsonLocation{}, jsonDiff{}, jsonPlan{}} {
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			fields = append(fields, name)
		}
	}
	for _, w := range append(types, fields...) {
		if !strings.Contains(section, "`"+w+"`") {
			t.Errorf("the --json section of docs/line-mode.md does not document `%s`", w)
		}
	}
}
