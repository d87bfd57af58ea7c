package acptest

import (
	"context"
	"os"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
)

// client is what the SDK calls on the editor's side. Its fields are
// guarded by mu; Editor's methods read and script them.
type client struct {
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	changed chan struct{} // closed and replaced at each update
	perms   []sdk.RequestPermissionRequest
	asked   chan struct{} // gets a value per permission request

	choose sdk.PermissionOptionKind // "" answers cancelled
	hold   chan struct{}            // when set, permission answers wait on it
	onAsk  func(sdk.RequestPermissionRequest)
	elicit func(sdk.UnstableCreateElicitationRequest) sdk.UnstableCreateElicitationResponse

	fsCalls []string          // "read PATH", "write PATH"
	buffers map[string]string // unsaved text by path

	env       []string // the terminals' environment; nil: this process's
	terms     map[string]*terminal
	nTerms    int
	termCalls []string
}

var _ sdk.Client = (*client)(nil)

func newClient(env []string) *client {
	return &client{
		choose:  sdk.PermissionOptionKindAllowOnce,
		asked:   make(chan struct{}, 64),
		changed: make(chan struct{}),
		buffers: map[string]string{},
		terms:   map[string]*terminal{},
		env:     env,
	}
}

func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n.Update)
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

func (c *client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.perms = append(c.perms, p)
	choose, hold, onAsk := c.choose, c.hold, c.onAsk
	c.mu.Unlock()
	select {
	case c.asked <- struct{}{}:
	default: // nobody counts this many
	}
	if onAsk != nil {
		onAsk(p)
	}
	cancelled := sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return cancelled, nil
		}
	}
	for _, o := range p.Options {
		if o.Kind == choose {
			return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: o.OptionId}}}, nil
		}
	}
	return cancelled, nil
}

// UnstableCreateElicitation is the editor's form (elicitation/create).
func (c *client) UnstableCreateElicitation(_ context.Context, r sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
	c.mu.Lock()
	f := c.elicit
	c.mu.Unlock()
	if f == nil {
		return sdk.NewUnstableCreateElicitationResponseCancel(), nil
	}
	return f(r), nil
}

// ReadTextFile answers the buffer when there is one, else the disk's
// text, as an editor does.
func (c *client) ReadTextFile(_ context.Context, r sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fsCalls = append(c.fsCalls, "read "+r.Path)
	if b, ok := c.buffers[r.Path]; ok {
		return sdk.ReadTextFileResponse{Content: b}, nil
	}
	data, err := os.ReadFile(r.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return sdk.ReadTextFileResponse{Content: string(data)}, nil
}

// WriteTextFile keeps the text in the buffer, unsaved, as an editor does.
func (c *client) WriteTextFile(_ context.Context, r sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fsCalls = append(c.fsCalls, "write "+r.Path)
	c.buffers[r.Path] = r.Content
	return sdk.WriteTextFileResponse{}, nil
}
