// Package llm is the streaming chat-completions client: requests built with
// openai-go, and a thin SSE layer that reads what openai-go drops or
// misreads, server by server (reasoning fields, timings, prompt_progress,
// errors inside the stream). It knows nothing of tools, sessions or
// front ends.
package llm
