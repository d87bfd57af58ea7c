package detect

import "encoding/json"

// testTools is the tool set most tests offer, with schemas shaped like the
// real ones (path first, edit_file's list of edits).
func testTools() *Toolset {
	return NewToolset(
		ToolInfo{"bash", json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer"}},"required":["command"]}`)},
		ToolInfo{"read_file", json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"start":{"type":"integer"},"end":{"type":"integer"},"start_line":{"type":"integer"}},"required":["path"]}`)},
		ToolInfo{"write_file", json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
		ToolInfo{"edit_file", json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"edits":{"type":"array","items":{"type":"object","properties":{"old":{"type":"string"},"new":{"type":"string"}}}},"dry_run":{"type":"boolean"}},"required":["path","edits"]}`)},
	)
}
