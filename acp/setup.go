package acp

import (
	"context"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"
)

// Setup is how an editor gets mm set up. A local model needs no login,
// but it needs a server and a model: when none is configured and none
// answers, session/new answers ACP's auth_required, and the client offers
// the auth methods initialize listed — mm's set-up in a terminal, and a
// new look for a server started since.
type Setup struct {
	// Args run the set-up when given to the agent's own command (mm acp
	// setup, or mm setup where a client replaces the arguments).
	Args []string
	// Command is the agent's own executable, for the clients that start
	// a terminal login from the method's _meta["terminal-auth"] (a
	// command and its arguments); "" leaves that form out.
	Command string
	// Ready reports nil when a new session can reach a model server — one
	// is configured, chosen in the editor, or answers on a usual local
	// port — else the one line that says how to get one.
	Ready func(ctx context.Context) error
}

// The auth methods' ids.
const (
	setupMethod = "mm-setup"        // type terminal: mm setup in a terminal
	lookMethod  = "mm-local-server" // type agent: look for a server again
)

// authMethods are the methods initialize lists for a client with caps. The
// terminal one only for a client that said it can run it
// (clientCapabilities.auth.terminal, or the _meta "terminal-auth" flag
// of the clients that came before it); the agent one always, so that
// every client has a way on.
func (a *Agent) authMethods(caps sdk.ClientCapabilities) []sdk.AuthMethod {
	s := a.opts.Setup
	methods := []sdk.AuthMethod{}
	if s == nil || s.Ready == nil {
		return methods
	}
	legacy, _ := caps.Meta["terminal-auth"].(bool)
	if caps.Auth.Terminal || legacy {
		t := &sdk.AuthMethodTerminalInline{
			Id:          setupMethod,
			Name:        "Set up a local model",
			Description: sdk.Ptr("Runs mm setup in a terminal: it finds the model servers on this machine, lets you pick a model and saves it in your mm config"),
			Args:        s.Args,
		}
		if legacy && s.Command != "" {
			t.Meta = map[string]any{"terminal-auth": map[string]any{"command": s.Command, "args": s.Args, "label": "mm setup"}}
		}
		methods = append(methods, sdk.AuthMethod{Terminal: t})
	}
	return append(methods, sdk.AuthMethod{Agent: &sdk.AuthMethodAgent{
		Id:          lookMethod,
		Name:        "Use a model server started since",
		Description: sdk.Ptr("Start llama-server, Ollama, LM Studio, vLLM or Docker Model Runner on this machine, then choose this: mm looks for it again"),
	}})
}

// Authenticate answers for both methods the same way: is there a server
// now? A client calls it for the agent method, and some call it after
// the terminal set-up too; the set-up wrote the user's config, which
// Ready reads again.
func (a *Agent) Authenticate(ctx context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	s := a.opts.Setup
	if s == nil || s.Ready == nil || (p.MethodId != setupMethod && p.MethodId != lookMethod) {
		return sdk.AuthenticateResponse{}, invalid(fmt.Sprintf("no auth method %q: mm offers %s and %s", p.MethodId, setupMethod, lookMethod))
	}
	if err := s.Ready(ctx); err != nil {
		return sdk.AuthenticateResponse{}, authRequired(err)
	}
	return sdk.AuthenticateResponse{}, nil
}

// ready is nil when a new session can reach a model server (or nothing
// can tell), else auth_required with the line that says what to do.
func (a *Agent) ready(ctx context.Context) error {
	s := a.opts.Setup
	if s == nil || s.Ready == nil {
		return nil
	}
	if err := s.Ready(ctx); err != nil {
		return authRequired(err)
	}
	return nil
}

// authRequired is ACP's auth_required error, its message the one line.
func authRequired(err error) error {
	line := err.Error()
	return &sdk.RequestError{Code: -32000, Message: line, Data: map[string]any{"error": line}}
}
