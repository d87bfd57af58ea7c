// Package llm is the streaming chat-completions client: requests built with
// openai-go, and a thin SSE layer that reads what openai-go drops or
// misreads, server by server (reasoning fields, timings, prompt_progress,
// errors inside the stream). It knows nothing of tools, sessions or
// front ends.
//
// # Why openai-go sends and mm reads
//
// openai-go builds the request (messages, sampling; non-standard fields
// through option.WithJSONSet) and sends it, with its own retries turned
// off. The response body is read here, not by openai-go's ssestream,
// because ssestream loses exactly the cases small local servers produce:
// the "error:" line of older llama.cpp and Ollama's bare JSON error line
// are skipped, a last event without its blank line is dropped, the fields
// reasoning_content/reasoning/timings/prompt_progress are not in its types,
// and an error answer of Ollama ({"error":"text"}) or a plain-text one does
// not decode into its error type. Tools are sent as raw JSON so that the
// order of a schema's properties survives (openai-go holds them in a map).
//
// # Invariants
//
//   - Deltas reach the callback in the order the server sent them, on the
//     caller's goroutine, one field set per Delta. A callback error aborts
//     the generation at once: the connection is closed, nothing more is
//     read, and the error comes back wrapped (errors.Is works).
//   - A chunk without choices (usage, prompt_progress) is never indexed;
//     only choice 0 is read.
//   - An answer is finished only by a finish_reason. A stream that ends
//     without one is ErrNoFinish, a transport error, never an empty answer.
//   - Retries happen only while nothing of the answer was delivered
//     (content, reasoning or tool-call deltas; prompt progress does not
//     count), only for network errors and 429/502/503/504, and never for
//     500, an error inside the stream, a stall, a cancel or a callback
//     error.
//   - The watchdog waits on timers, never polls: FirstTokenTimeout until the
//     first token, IdleTimeout after it. Every chunk restarts it (reasoning
//     and prompt progress included); ": ping" comments do not, since they
//     prove the connection, not the generation.
//   - Cancelling ctx closes the HTTP body promptly; the error wraps
//     ctx's error.
//   - Server texts are compared only in the one table of explain.go, each
//     with the server that produces it.
//   - The environment is never read: an empty APIKey sends no key, even
//     when OPENAI_API_KEY is set.
package llm
