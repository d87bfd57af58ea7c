package engine

import _ "embed"

// systemPrompt is byte-stable: no dates, no paths, no random order, so the
// server's KV cache reuses it across turns and sessions.
//
//go:embed prompts/system.md
var systemPrompt string
