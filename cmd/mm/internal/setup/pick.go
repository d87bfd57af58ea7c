package setup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/chzyer/readline"
)

// pickKeys lets the user choose one of labels on a terminal: ↑/↓ (or k/j)
// move, a digit jumps to that line, Enter chooses, q, Esc or Ctrl-C
// leaves. The terminal is in raw mode while it waits (each key arrives at
// once; Ctrl-C is a key, not a signal) and is put back before it returns,
// whatever happens. The list is drawn once and redrawn in place.
func pickKeys(in *os.File, out io.Writer, labels []string, colour bool) (int, error) {
	fd := int(in.Fd())
	state, err := readline.MakeRaw(fd)
	if err != nil {
		return 0, fmt.Errorf("cannot read keys from the terminal: %w", err)
	}
	defer readline.Restore(fd, state)
	// A line wider than the terminal would wrap, and the redraw, which
	// counts lines, would land one line off.
	if cols, _, err := readline.GetSize(fd); err == nil && cols > 8 {
		for i, l := range labels {
			if r := []rune(l); len(r) > cols-3 {
				labels[i] = string(r[:cols-4]) + "…"
			}
		}
	}
	fmt.Fprint(out, "\x1b[?25l") // no cursor over the list
	defer fmt.Fprint(out, "\x1b[?25h")

	sel := 0
	draw := func(again bool) {
		var b strings.Builder
		if again {
			fmt.Fprintf(&b, "\x1b[%dA", len(labels))
		}
		for i, l := range labels {
			b.WriteString("\r\x1b[2K")
			switch {
			case i == sel && colour:
				b.WriteString("\x1b[1m› " + l + "\x1b[0m")
			case i == sel:
				b.WriteString("› " + l)
			default:
				b.WriteString("  " + l)
			}
			b.WriteString("\r\n")
		}
		io.WriteString(out, b.String())
	}
	draw(false)
	keys := bufio.NewReader(in)
	for {
		k, err := readKey(keys)
		if err != nil {
			return 0, errors.New("no model chosen (the terminal closed)")
		}
		switch {
		case k == "up" || k == "k":
			sel = (sel + len(labels) - 1) % len(labels)
		case k == "down" || k == "j":
			sel = (sel + 1) % len(labels)
		case k == "enter":
			return sel, nil
		case k == "quit":
			return 0, errors.New("no model chosen")
		case len(k) == 1 && k[0] >= '1' && k[0] <= '9' && int(k[0]-'1') < len(labels):
			sel = int(k[0] - '1')
		default:
			continue
		}
		draw(true)
	}
}

// readKey reads one key press: "up", "down", "enter", "quit", or the
// character typed.
func readKey(r *bufio.Reader) (string, error) {
	b, err := r.ReadByte()
	if err != nil {
		return "", err
	}
	switch b {
	case '\r', '\n':
		return "enter", nil
	case 3, 4, 'q': // Ctrl-C, Ctrl-D
		return "quit", nil
	case 0x1b:
		// An arrow is ESC [ A or, in the terminal's application mode,
		// ESC O A; Esc alone is followed by nothing at once.
		if r.Buffered() == 0 {
			return "quit", nil
		}
		if b, _ = r.ReadByte(); b != '[' && b != 'O' {
			return "", nil
		}
		switch b, _ = r.ReadByte(); b {
		case 'A':
			return "up", nil
		case 'B':
			return "down", nil
		}
		return "", nil
	}
	return string(rune(b)), nil
}
