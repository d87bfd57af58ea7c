package compact

import (
	"fmt"
	"strings"

	"github.com/mm-agent/mm/engine/llm"
)

// The summary block a compaction leaves at the head of the first kept
// user message (after the workspace header). Its markers let a later
// compaction find the previous summary and merge it, and a loaded session
// find it again.
const (
	summaryOpen  = "[Summary of the earlier conversation, written when mm compacted it:\n"
	summaryClose = "\n— end of summary]\n\n"
)

// SummarySystem is the system prompt of a summary call: no tools, no
// thinking, one answer.
const SummarySystem = "You write the working notes of a coding session so that it can go on without the full transcript. " +
	"Keep: the user's goals and requests, decisions taken, files read or changed (with paths), commands run and their outcome, " +
	"errors still open, and what remains to do. Drop: file contents and command outputs (they can be read again), chit-chat. " +
	"Write plain short bullet points, at most 300 words. Do not call tools. Do not add anything that did not happen."

// Block wraps a summary in its markers.
func Block(summary string) string {
	return summaryOpen + strings.TrimSpace(summary) + summaryClose
}

// SplitBlock finds a summary block at the start of text (after header):
// it returns the summary and what follows it. ok is false when text holds
// no block.
func SplitBlock(text string) (summary, rest string, ok bool) {
	i := strings.Index(text, summaryOpen)
	if i < 0 {
		return "", text, false
	}
	j := strings.Index(text[i:], summaryClose)
	if j < 0 {
		return "", text, false
	}
	return text[i+len(summaryOpen) : i+j], text[:i] + text[i+j+len(summaryClose):], true
}

// Transcript renders messages as plain text for a summary call, each tool
// output cut to perOutput characters, the whole within max characters:
// when it does not fit, the oldest part is dropped and said so.
func Transcript(msgs []llm.Message, perOutput, max int) string {
	calls := map[string]llm.ToolCall{}
	var parts []string
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			_, rest, _ := SplitBlock(m.Content)
			parts = append(parts, "USER: "+strings.TrimSpace(rest))
		case llm.RoleAssistant:
			var b strings.Builder
			if c := strings.TrimSpace(m.Content); c != "" {
				b.WriteString("ASSISTANT: " + c)
			}
			for _, c := range m.ToolCalls {
				calls[c.ID] = c
				if b.Len() > 0 {
					b.WriteString("\n")
				}
				fmt.Fprintf(&b, "ASSISTANT called %s %s", c.Name, clip(c.Arguments, 300))
			}
			if b.Len() > 0 {
				parts = append(parts, b.String())
			}
		case llm.RoleTool:
			out := m.Content
			if len(out) > perOutput {
				out = Cap(out, perOutput)
			}
			name := calls[m.ToolCallID].Name
			if name == "" {
				name = "tool"
			}
			parts = append(parts, "RESULT of "+name+":\n"+strings.TrimSpace(out))
		}
	}
	total := 0
	from := len(parts)
	for from > 0 && total+len(parts[from-1])+2 <= max {
		total += len(parts[from-1]) + 2
		from--
	}
	text := strings.Join(parts[from:], "\n\n")
	if from > 0 {
		text = fmt.Sprintf("[%d earlier messages left out: they did not fit]\n\n", from) + text
	}
	return text
}

// SummaryRequest is the user message of a summary call: the previous
// summary (merged, not re-summarised) and the transcript since.
func SummaryRequest(previous, transcript string) string {
	var b strings.Builder
	if p := strings.TrimSpace(previous); p != "" {
		b.WriteString("Notes so far (keep what still matters, merge the new facts in):\n" + p + "\n\n")
	}
	b.WriteString("Conversation since:\n" + transcript + "\n\nWrite the updated notes now.")
	return b.String()
}
