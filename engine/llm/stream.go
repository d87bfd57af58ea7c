package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"sync"
	"time"
)

// streamOnce is one streaming attempt: send, read the SSE body, assemble.
func (c *Client) streamOnce(ctx context.Context, req Request, emit func(Delta) error) (Response, error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	first, idle := c.first, c.idle
	if f := req.WatchdogScale; f > 1 {
		first, idle = time.Duration(float64(first)*f), time.Duration(float64(idle)*f)
	}
	wd := startWatchdog(c.clock, first, idle, cancel)
	defer wd.stop()

	a := newAssembler()
	resp, err := c.post(actx, req, true)
	if err != nil {
		return a.response(), c.failure(ctx, actx, err)
	}
	defer resp.Body.Close()

	// The callback's error aborts at once: cancelling actx closes the
	// connection, which is how a server learns to stop generating.
	onDelta := func(d Delta) error {
		if err := emit(d); err != nil {
			cancel(err)
			return err
		}
		return nil
	}
	feed := func(ch *wireChunk, data []byte) error {
		if ch.isError() {
			return streamErrorFrom(c.masked(data))
		}
		if err := a.apply(ch, onDelta); err != nil {
			return &abortError{err}
		}
		wd.feed(a.tokens)
		return nil
	}

	ct := resp.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(ct); mt == "text/html" {
		// A web page, not a model server: retrying will not help.
		return a.response(), fmt.Errorf("llm: %s answered a web page (%s), not an event stream: check baseURL", c.base, mt)
	}
	if isJSON(ct) {
		// A server that ignored "stream": one JSON answer (or error).
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxLine))
		if err != nil {
			return a.response(), c.failure(ctx, actx, err)
		}
		ch, err := decodeChunk(body)
		if err != nil {
			return a.response(), fmt.Errorf("llm: %w", err)
		}
		if err := feed(ch, body); err != nil {
			return a.response(), err
		}
		return c.finish(a)
	}

	rd := newSSEReader(resp.Body)
	for {
		if actx.Err() != nil {
			// The watchdog fired or the caller left: what is already
			// buffered is not processed.
			return a.response(), c.failure(ctx, actx, actx.Err())
		}
		ev, err := rd.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return a.response(), c.failure(ctx, actx, err)
		}
		data := bytes.TrimSpace(ev.data)
		if ev.kind == evError {
			return a.response(), streamErrorFrom(c.masked(data))
		}
		if string(data) == "[DONE]" {
			break
		}
		if len(data) == 0 {
			continue
		}
		ch, err := decodeChunk(data)
		if err != nil {
			if ev.kind == evBare {
				continue // a stray non-JSON line; Ollama only sends JSON here
			}
			return a.response(), fmt.Errorf("llm: %w", err)
		}
		if err := feed(ch, data); err != nil {
			return a.response(), err
		}
	}
	return c.finish(a)
}

// finish checks that the answer ended properly: no finish_reason is a
// transport error (the server died mid-answer), never an empty answer.
func (c *Client) finish(a *assembler) (Response, error) {
	r := a.response()
	if !a.finished {
		return r, &transportError{ErrNoFinish}
	}
	return r, nil
}

// failure classifies a failed request or body read: the caller's
// cancellation, the watchdog, an HTTP error, or the transport.
func (c *Client) failure(ctx, actx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("llm: %w", context.Cause(ctx))
	}
	if cause := context.Cause(actx); cause != nil {
		var se *StallError
		if errors.As(cause, &se) {
			return se
		}
		if !errors.Is(cause, context.Canceled) {
			return &abortError{cause} // the callback's error
		}
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	return &transportError{err}
}

func isJSON(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "application/json"
}

// completeOnce is one non-streaming attempt.
func (c *Client) completeOnce(ctx context.Context, req Request) (Response, error) {
	a := newAssembler()
	resp, err := c.post(ctx, req, false)
	if err != nil {
		return a.response(), c.failure(ctx, ctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxLine))
	if err != nil {
		return a.response(), c.failure(ctx, ctx, err)
	}
	ch, err := decodeChunk(bytes.TrimSpace(body))
	if err != nil {
		return a.response(), fmt.Errorf("llm: %w", err)
	}
	if ch.isError() {
		return a.response(), streamErrorFrom(c.masked(body))
	}
	if err := a.apply(ch, func(Delta) error { return nil }); err != nil {
		return a.response(), err
	}
	if len(ch.Choices) == 0 {
		return a.response(), &transportError{errors.New("the answer has no choices")}
	}
	return a.response(), nil
}

// watchdog cancels a generation that went silent: FirstTokenTimeout
// until the first token, IdleTimeout between tokens. Every chunk restarts
// the current timer (prompt_progress and reasoning included: a model that
// reads or thinks is alive); comment pings do not, because they prove the
// connection, not the generation. It waits on a timer, never polls.
type watchdog struct {
	mu          sync.Mutex
	t           timer
	first, idle time.Duration
	started     bool
	cancel      context.CancelCauseFunc
}

// clock makes timers; tests swap it to move time by hand (clock.go).
type clock interface {
	AfterFunc(d time.Duration, f func()) timer
}

// timer is the part of *time.Timer the watchdog uses.
type timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

type realClock struct{}

func (realClock) AfterFunc(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }

func startWatchdog(clk clock, first, idle time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{first: first, idle: idle, cancel: cancel}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t = clk.AfterFunc(time.Hour, w.fire)
	w.arm()
	return w
}

// arm restarts the timer for the current phase; call with mu held or
// before the watchdog is shared.
func (w *watchdog) arm() {
	d := w.first
	if w.started {
		d = w.idle
	}
	if d > 0 {
		w.t.Reset(d)
	} else {
		w.t.Stop()
	}
}

func (w *watchdog) fire() {
	w.mu.Lock()
	e := &StallError{Phase: StallFirstToken, Timeout: w.first, Delivered: w.started}
	if w.started {
		e.Phase, e.Timeout = StallIdle, w.idle
	}
	w.mu.Unlock()
	w.cancel(e)
}

// feed records a sign of life; token says whether a token was seen so far.
func (w *watchdog) feed(token bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started = w.started || token
	w.arm()
}

func (w *watchdog) stop() { w.t.Stop() }
