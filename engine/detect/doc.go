// Package detect holds the pure detectors that make a small model usable:
// they watch what the model streams and the tool calls it makes, and say
// when it is going wrong, with the repair text for the model and the
// struggle line for the user. The turn loop (package engine) feeds them
// and decides what to do; nothing here knows a front end, a clock, a
// network or a file. (They are detectors, not guards: in mm a guard is a
// guard model, a classifier asked about a text — engine/risk.)
//
// One file per concern, each answering a failure small models show:
//
//	think.go         <think>…</think> in content → reasoning (ThinkFilter, ThinkOptions.Strip)
//	textcall.go      tool calls written as text (TextCallDetector), streaming
//	families.go      the table of syntaxes models leak (one entry per family)
//	parsers.go       the readers of those syntaxes (JSON, XML-ish, Python calls)
//	gemma4.go        Gemma 4's own value syntax (<|"|> strings, bare keys)
//	invoke.go        <invoke name=…><parameter name=…> (MiniMax, DSML, Anthropic)
//	readers.go       the probes of the newer families (Command-R, ReAct,
//	                 GLM's message JSON, DeepSeek-V4's attributes…)
//	markup.go        what looks like a call in a syntax no reader knows:
//	                 held, then noted, never run
//	runaway.go       arguments that repeat or never end (RunawayDetector)
//	args.go          truncated / malformed arguments (CheckArgs, BrokenCall, Retries)
//	toolset.go       invented tools and aliases (Toolset.Resolve)
//	loop.go          loops, cycles, refused edits, failures in a row (LoopDetector)
//	budget.go        soft tool budget (ToolBudget)
//	struggle.go      the struggle values every detector reports
//
// How the turn loop uses them, for one model call:
//
//   - Build a Toolset from the tools offered to this call (none for the
//     last-chance and summary calls: then nothing is a call).
//   - Content deltas go through a ThinkFilter: reasoning segments become
//     thought events (never history), text segments go through a
//     TextCallDetector, and what it returns to show becomes text events.
//     When it returns calls, cut the generation. If call.Convertible(),
//     resolve each (Toolset.Resolve) and run them all, in order, as if the
//     model had called them (or none, when one does not resolve);
//     otherwise give call.Note() back and retry, at most MaxTextCallRetries
//     times in a row (a Retries, reset by a real call). Report
//     call.Struggle either way. At the end of the stream, Flush both (the
//     filter first, its text into the detector).
//   - Each streamed tool call's argument deltas go to its own
//     RunawayDetector. On a trip, cut the generation, do not run the call,
//     answer it with Runaway.Note, report Runaway.Struggle, retry.
//   - When a call is complete, CheckArgs its arguments. Truncated or
//     malformed: do not run it; give BrokenCall.Note back at most
//     MaxBrokenCallRetries times per generation, then end with
//     BrokenCall.Explain. Valid: Toolset.Resolve it; an unknown tool gets
//     Resolution.Note as its result (and UnknownToolStruggle).
//   - After every call answered (run, failed, or refused by a tool or a
//     detector), LoopDetector.Record it with its output as produced; append
//     LoopVerdict.Note to the output the model reads, and end the turn with
//     LoopVerdict.Err when it is Stuck. Struggles arrive through
//     LoopOptions.Report.
//   - Before each request, append ToolBudget.Reminder(calls so far) at the
//     end of what is sent (not to history); report ToolBudget.Struggle when
//     the step changes.
//   - Strip (ThinkOptions) the final message before storing it when the filter saw
//     tags (ThinkFilter.SawTag).
//
// Invariants:
//   - Stdlib only; no I/O, goroutines, clocks or package-level mutable
//     state. Every detector is a value owned by one stream or one session,
//     not safe for concurrent use, and fed in order.
//   - No panic on any input: detectors take arbitrary bytes (invalid UTF-8,
//     tags cut anywhere, broken JSON) and fuzz tests hold them to it.
//   - Streaming detectors give the same result however the stream is cut
//     into deltas, and never lose a byte: the ThinkFilter's segments are the
//     input minus its tags; the TextCallDetector's shown text plus the call
//     it returns is the input up to the cut.
//   - Bytes are held back only while undecided and only as long as needed
//     to decide (a partial tag, a call being written); plain text passes
//     through at once.
//   - Strict before clever: when unsure whether text is a tool call, it is
//     text. A false positive hijacks a user's answer; a miss costs a retry.
//     But markup is never the answer: call-ish special tokens, tags named
//     after a tool, a whole-answer JSON call no family runs are held and
//     noted (markup.go) unless prose follows them on their line — and
//     what no reader claims is never run on a guess, nor a call that lacks
//     an argument its tool requires.
//   - Texts for the model are short repair instructions a 4B model can
//     follow; struggle texts are one short human line. Both are pinned in
//     testdata/notes.golden.
//   - A struggle is shown, never stored in history and never sent to the
//     model; a user cancel is never a struggle (the engine does not report
//     one then).
package detect
