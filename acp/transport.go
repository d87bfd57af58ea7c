package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
)

// MaxMessage is the largest JSON-RPC message accepted. The SDK's own line
// reader stops the connection past 10 MiB; mm answers an error instead and
// goes on.
const MaxMessage = 8 << 20

// Serve runs the agent on the given stream until in reaches EOF or ctx is
// done, then stops every session (cancelling running turns) and returns.
func Serve(ctx context.Context, a *Agent, in io.Reader, out io.Writer) error {
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	conn := sdk.NewAgentSideConnection(a, w, pr)
	conn.SetLogger(a.log)
	a.setConn(conn)

	filterDone := make(chan error, 1)
	go func() {
		err := filter(in, pw, w, a.log)
		pw.CloseWithError(io.EOF)
		filterDone <- err
	}()
	var err error
	select {
	case <-conn.Done():
	case <-ctx.Done():
		err = ctx.Err()
		pr.Close() // the SDK sees the stream end and cancels every request
		<-conn.Done()
	}
	a.closeAll()
	select {
	case ferr := <-filterDone:
		if err == nil {
			err = ferr
		}
	default: // still blocked reading stdin; the process is exiting anyway
	}
	return err
}

// lockedWriter serialises whole-line writes of the SDK and of the filter,
// so an error answer never interleaves with an SDK message.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// filter copies well-formed JSON-RPC lines from in to sdkIn and answers the
// others itself (A10): a line that is not JSON gets -32700, a line that is
// JSON but not a request/response/notification object gets -32600, a line
// over MaxMessage gets -32600 and is skipped without being buffered whole.
func filter(in io.Reader, sdkIn io.Writer, out io.Writer, log *slog.Logger) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxMessage {
			n := len(line) + len(chunk)
			line = line[:0]
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = r.ReadSlice('\n')
				n += len(chunk)
			}
			log.Warn("dropped an oversized message", "bytes", n)
			reply(out, nil, -32600, fmt.Sprintf("message too large (%d bytes, the limit is %d)", n, MaxMessage))
		} else {
			line = append(line, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if msg := bytes.TrimSpace(line); len(msg) > 0 {
				if code, text := check(msg); code != 0 {
					log.Warn("rejected a malformed message", "error", text, "bytes", len(msg))
					reply(out, idOf(msg), code, text)
				} else if _, werr := sdkIn.Write(append(msg, '\n')); werr != nil {
					return nil // the connection is closing
				}
			}
			line = line[:0]
		}
		if err == io.EOF {
			return nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("read stdin: %w", err)
		}
	}
}

// check says whether msg is a JSON-RPC object the SDK can route.
func check(msg []byte) (int, string) {
	if !json.Valid(msg) {
		return -32700, "parse error: the line is not valid JSON"
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if msg[0] != '{' || json.Unmarshal(msg, &m) != nil {
		return -32600, "invalid request: expected one JSON-RPC object per line"
	}
	if m.Method == nil && m.ID == nil {
		return -32600, "invalid request: no method and no id"
	}
	if m.Method == nil && m.Result == nil && m.Error == nil {
		return -32600, "invalid request: no method"
	}
	return 0, ""
}

// idOf recovers the id of a malformed message when it can, so the client
// can match the error to its request.
func idOf(msg []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &m) == nil && len(m.ID) > 0 {
		return m.ID
	}
	return nil
}

func reply(out io.Writer, id json.RawMessage, code int, text string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, map[string]any{"code": code, "message": text}})
	out.Write(append(b, '\n'))
}
