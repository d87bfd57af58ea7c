package detect

import "strings"

// ThinkTag is one pair of delimiters a model uses for reasoning written
// inside content.
type ThinkTag struct{ Open, Close string }

// DefaultThinkTags are the delimiters recognised when ThinkOptions.Tags is
// nil: `<think>…</think>`, what Qwen3 (without a server-side reasoning
// parser) and the DeepSeek-R1 distills write;
// and gpt-oss's harmony markup, which a llama-server without a reasoning
// parser streams as content (seen in a real capture): the analysis channel is
// reasoning, and the markers that end it or start the final answer
// (`<|end|>`, `<|start|>assistant`, `<|channel|>final<|message|>`,
// `<|return|>`) are dropped; Gemma 4's thought channel
// (`<|channel>thought` … `<channel|>`, its chat template) and Command-R7B's
// `<|START_THINKING|>` … `<|END_THINKING|>` (its tool_use template), so
// that the call written after them is the whole answer. These are special
// tokens no answer contains as text. Other families (Magistral's
// `[THINK]…[/THINK]`) are a profile's business.
func DefaultThinkTags() []ThinkTag {
	const analysis = "<|channel|>analysis<|message|>"
	return []ThinkTag{
		{"<think>", "</think>"},
		{"<|channel>thought", "<channel|>"},
		{"<|START_THINKING|>", "<|END_THINKING|>"},
		{analysis, "<|end|>"},
		{analysis, "<|start|>assistant"},
		{analysis, "<|channel|>final<|message|>"},
		{analysis, "<|channel|>commentary<|message|>"},
		{analysis, "<|return|>"},
	}
}

// ThinkOptions configures a ThinkFilter. The zero value is ready to use.
type ThinkOptions struct {
	// Tags to recognise; nil means DefaultThinkTags. Tags with an empty
	// Open or Close are ignored.
	Tags []ThinkTag
	// StartInside starts the filter inside a reasoning block, for chat
	// templates that put the opening tag in the prompt (the model then
	// writes only the closing one). A model that never closes it has all
	// its content routed to reasoning, so only a profile that knows its
	// template sets this.
	StartInside bool
}

// Segment is a run of content released by the filter, in stream order.
type Segment struct {
	Text      string
	Reasoning bool
}

// ThinkFilter routes `<think>…</think>` inside streamed content to
// reasoning and the rest to text.
//
// It is a state machine over the bytes of the stream: every occurrence of
// an opening tag switches to reasoning, every occurrence of a closing tag
// switches back to text, and tags themselves are dropped. A stray closing
// tag in text is dropped too. Bytes that could be the start of a tag (`<`,
// `<th`) are held until the next delta decides, never longer: `<t` followed
// by anything else is released at once. The output therefore does not
// depend on how the stream was cut into deltas, and the concatenation of
// every Segment equals the input with the tag occurrences removed.
//
// A ThinkFilter is not safe for concurrent use; one serves one stream.
type ThinkFilter struct {
	tags   []string // opening tags first, then closing ones (see isOpen)
	nOpen  int
	starts string // first bytes of every tag, for strings.IndexAny
	inside bool
	held   string
	sawTag bool
}

// NewThinkFilter returns a filter for one stream.
func NewThinkFilter(opts ThinkOptions) *ThinkFilter {
	tt := opts.Tags
	if tt == nil {
		tt = DefaultThinkTags()
	}
	f := &ThinkFilter{inside: opts.StartInside}
	var closes []string
	for _, t := range tt {
		if t.Open == "" || t.Close == "" {
			continue
		}
		f.tags = append(f.tags, t.Open)
		closes = append(closes, t.Close)
	}
	f.nOpen = len(f.tags)
	f.tags = append(f.tags, closes...)
	var starts strings.Builder
	for _, t := range f.tags {
		if !strings.ContainsRune(starts.String(), rune(t[0])) {
			starts.WriteByte(t[0])
		}
	}
	f.starts = starts.String()
	return f
}

// Write takes the next content delta and returns what can be released
// now, in order; adjacent segments never have the same kind.
func (f *ThinkFilter) Write(delta string) []Segment {
	s := f.held + delta
	f.held = ""
	var out []Segment
	start, i := 0, 0
	for i < len(s) && f.starts != "" {
		k := strings.IndexAny(s[i:], f.starts)
		if k < 0 {
			break
		}
		j := i + k
		n, open, wait := f.match(s[j:])
		if wait {
			f.held = s[j:]
			return f.emit(out, s[start:j])
		}
		if n == 0 {
			i = j + 1
			continue
		}
		out = f.emit(out, s[start:j])
		f.inside, f.sawTag = open, true
		i = j + n
		start = i
	}
	return f.emit(out, s[start:])
}

// Flush releases what is held at the end of the stream: a partial tag is
// plain content after all.
func (f *ThinkFilter) Flush() []Segment {
	s := f.held
	f.held = ""
	return f.emit(nil, s)
}

// Inside reports whether the stream is inside a reasoning block; after
// Flush it says whether the model left one unclosed.
func (f *ThinkFilter) Inside() bool { return f.inside }

// SawTag reports whether any tag was seen, i.e. the model writes its
// reasoning in content and the final message needs ThinkOptions.Strip.
func (f *ThinkFilter) SawTag() bool { return f.sawTag }

// match looks at s, which starts with a byte that may begin a tag. It
// returns the length of the tag found and whether it opens a block; or
// wait when s is a proper prefix of some tag (more bytes will decide); or
// n == 0 when no tag starts here.
func (f *ThinkFilter) match(s string) (n int, open, wait bool) {
	for idx, t := range f.tags {
		if len(s) < len(t) {
			if strings.HasPrefix(t, s) {
				return 0, false, true
			}
			continue
		}
		if len(t) > n && s[:len(t)] == t {
			n, open = len(t), idx < f.nOpen
		}
	}
	return n, open, false
}

func (f *ThinkFilter) emit(out []Segment, s string) []Segment {
	if s == "" {
		return out
	}
	if k := len(out) - 1; k >= 0 && out[k].Reasoning == f.inside {
		out[k].Text += s
		return out
	}
	return append(out, Segment{Text: s, Reasoning: f.inside})
}

// Strip removes the reasoning blocks (and stray tags) from a complete
// message, the way a ThinkFilter with these options routes them, so that
// reasoning never enters history. When a tag was found the result is
// trimmed of the blank lines models leave around a block; otherwise s is
// returned unchanged.
func (o ThinkOptions) Strip(s string) string {
	f := NewThinkFilter(o)
	segs := append(f.Write(s), f.Flush()...)
	if !f.sawTag && !o.StartInside {
		return s
	}
	var b strings.Builder
	for _, sg := range segs {
		if !sg.Reasoning {
			b.WriteString(sg.Text)
		}
	}
	return strings.TrimSpace(b.String())
}
