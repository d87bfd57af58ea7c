package lsptool

import (
	"encoding/json"
	"testing"
)

// TestSchemaStable: the schema is byte-stable and lists the operations.
func TestSchemaStable(t *testing.T) {
	a, b := New(Options{}), New(Options{})
	if string(a.Schema()) != string(b.Schema()) || a.Description() != b.Description() {
		t.Fatal("schema or description not stable")
	}
	var s struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(a.Schema(), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Properties["operation"].Enum) != 6 || len(s.Required) != 1 || s.Required[0] != "operation" {
		t.Errorf("schema = %s", a.Schema())
	}
	if testing.Verbose() {
		t.Logf("%s\n%s", a.Description(), a.Schema())
	}
}
