package engine

import "encoding/json"

// FixedPrompt measures what every request of the session carries before
// the conversation: the system prompt and the tool definitions, in
// characters as they go on the wire (each tool as its JSON function
// declaration). mm doctor compares it with the context window: a window
// smaller than this cannot hold a single turn.
func (s *Session) FixedPrompt() (chars int, tools []string) {
	req := s.request(s.opts.Tools != nil)
	chars = len(req.Messages[0].Content)
	for _, t := range req.Tools {
		b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]any{
			"name": t.Name, "description": t.Description, "parameters": t.Parameters,
		}})
		chars += len(b)
		tools = append(tools, t.Name)
	}
	return chars, tools
}
