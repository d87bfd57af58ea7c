package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/sourcegraph/conc/panics"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/store"
)

// providers/list, providers/set and providers/disable (unstable ACP) let
// the editor choose the model server without editing a file: the
// configured one, or a local server found on its usual port (llama.cpp,
// Ollama, Docker Model Runner, LM Studio, vLLM), or any the user types.
// Providers belong to the agent, not to a session: the choice is
// remembered for the agent's workspace in the state directory and used
// from the next model request on, by the open sessions and those opened
// after (new, load, resume, fork).
//
// The SDK (v0.13.5) names the provider `id` where the schema says
// `providerId`, and refuses a request without `id`, so these three are
// answered here, from the stdin reader, in the schema's shape.

// Providers configures providers/*; nil leaves them unadvertised.
type Providers struct {
	// Workspace is the folder whose choice is remembered: the agent's
	// working directory, whose config mm reads.
	Workspace string
	// Configured reads the config as the next session would, without the
	// editor's choice; its error is the one line answered.
	Configured func() (Configured, error)
	// Local are the usual local servers surveyed at each providers/list;
	// nil is llm.KnownEndpoints.
	Local []llm.Endpoint
	// HTTPClient makes the survey's requests; nil is a default.
	HTTPClient *http.Client
	// Changed is called after a providers/set or disable was remembered,
	// to point the open sessions at the server now chosen; nil: only the
	// sessions opened after follow.
	Changed func()
}

// Configured is what mm's config says of the model server.
type Configured struct {
	// Kind is the configured provider ("" when detected), BaseURL the
	// configured API base ("" when found among the local servers).
	Kind, BaseURL string
	// Untrusted is the base URL the workspace's own config names while
	// it is not trusted ("" none): listed so the user knows of it, never
	// selectable from the list (workspace trust decides).
	Untrusted string
}

// Provider ids mm gives: the configured server, and the untrusted
// workspace config's. A local server's id is its kind (llm.Provider*).
const (
	providerMain      = "main"
	providerWorkspace = "workspace"
)

// providerCall reports whether msg is a providers/* request mm answers
// itself, and if so answers it in a goroutine of the agent's (joined by
// closeAll) so that the reader goes on reading.
func (a *Agent) providerCall(id json.RawMessage, msg []byte) bool {
	if a.opts.Providers == nil || !bytes.Contains(msg, []byte(`"providers/`)) {
		return false
	}
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return false
	}
	var handle func(context.Context, providerParams) (any, error)
	switch m.Method {
	case sdk.AgentMethodProvidersList:
		handle = a.listProviders
	case sdk.AgentMethodProvidersSet:
		handle = a.setProvider
	case sdk.AgentMethodProvidersDisable:
		handle = a.disableProvider
	default:
		return false
	}
	if id == nil {
		return true // a notification: nothing to answer, nothing to change
	}
	var p providerParams
	if len(m.Params) > 0 && string(m.Params) != "null" {
		if err := json.Unmarshal(m.Params, &p); err != nil {
			a.answer(id, nil, invalid("params: "+err.Error()))
			return true
		}
	}
	if p.ProviderID == "" {
		p.ProviderID = p.ID // the SDK's own clients send "id"
	}
	if !a.spawn("providers call "+m.Method, func() {
		var res any
		var err error
		if r := panics.Try(func() { res, err = handle(context.Background(), p) }); r != nil {
			a.log.Error("providers call panicked", "method", m.Method, "panic", r.Value, "stack", string(r.Stack))
			err = sdk.NewInternalError(map[string]any{"error": fmt.Sprintf("internal error: %v", r.Value)})
		}
		a.answer(id, res, err)
	}) {
		a.answer(id, nil, sdk.NewInternalError(map[string]any{"error": "mm is stopping"}))
	}
	return true
}

type providerParams struct {
	ProviderID string            `json:"providerId"`
	ID         string            `json:"id"`
	APIType    string            `json:"apiType"`
	BaseURL    string            `json:"baseUrl"`
	Headers    map[string]string `json:"headers"`
}

// answer writes the answer to a request mm handled itself.
func (a *Agent) answer(id json.RawMessage, result any, err error) {
	msg := map[string]any{"id": id}
	if err != nil {
		re, ok := err.(*sdk.RequestError)
		if !ok {
			re = sdk.NewInternalError(map[string]any{"error": err.Error()})
		}
		e := map[string]any{"code": re.Code, "message": re.Message}
		if re.Data != nil {
			e["data"] = re.Data
		}
		msg["error"] = e
	} else {
		msg["result"] = result
	}
	if err := a.send(msg); err != nil {
		a.log.Debug("answer not delivered", "err", err)
	}
}

// providerInfo is the schema's ProviderInfo; what the schema has no field
// for (kind, whether it answers, its models, which one is in use) is in
// _meta.mm.
type providerInfo struct {
	ProviderID string         `json:"providerId"`
	Supported  []string       `json:"supported"`
	Required   bool           `json:"required"`
	Current    *providerRoute `json:"current"`
	Meta       map[string]any `json:"_meta,omitempty"`
	reach      *llm.Reach     // nil: not surveyed
	source     string
	// base is the server's API base, kept when it is not current (a
	// local server the user disabled, the untrusted config's): the list
	// still says which server the entry is.
	base string
}

type providerRoute struct {
	APIType string `json:"apiType"`
	BaseURL string `json:"baseUrl"`
}

// apiOpenAI is the one protocol mm speaks: every server it knows serves
// the OpenAI chat completions API.
const apiOpenAI = "openai"

// choice is the workspace's remembered choice (none without a store).
func (a *Agent) choice() store.Providers {
	if a.opts.Store == nil {
		return store.Providers{}
	}
	return a.opts.Store.Providers(a.opts.Providers.Workspace)
}

// listProviders answers providers/list: the configured server (main,
// required), the ones the user set, the local servers that answer on
// their usual ports, and the untrusted workspace config's server (not
// selectable). Every base URL is asked for its model list at once,
// within llm.SurveyTimeout: this call, not initialize or session/new,
// pays for the survey.
func (a *Agent) listProviders(ctx context.Context, _ providerParams) (any, error) {
	ps := a.opts.Providers
	conf, err := ps.Configured()
	if err != nil {
		return nil, &sdk.RequestError{Code: -32603, Message: err.Error(), Data: map[string]any{"error": err.Error()}}
	}
	ch := a.choice()
	local := ps.Local
	if local == nil {
		local = llm.KnownEndpoints()
	}
	eps := slices.Clone(local)
	seen := map[string]bool{}
	for _, ep := range local {
		seen[ep.BaseURL] = true
	}
	survey := func(kind, base string) {
		if base != "" && !seen[base] {
			seen[base] = true
			eps = append(eps, llm.Endpoint{Provider: kind, BaseURL: base})
		}
	}
	survey(conf.Kind, conf.BaseURL)
	for _, e := range ch.Set {
		survey("", e.BaseURL)
	}
	found := map[string]*llm.Reach{}
	for _, r := range llm.Survey(ctx, ps.HTTPClient, eps) {
		found[r.BaseURL] = &r
	}

	var list []providerInfo
	add := func(id, source, base string, on bool) {
		p := providerInfo{ProviderID: id, Supported: []string{apiOpenAI}, Required: id == providerMain, source: source, reach: found[base], base: base}
		if on {
			p.Current = &providerRoute{APIType: apiOpenAI, BaseURL: base}
		}
		list = append(list, p)
	}
	active := ch.Active
	if _, ok := ch.Set[active]; !ok {
		active = providerMain
	}
	if e, ok := ch.Set[providerMain]; ok {
		add(providerMain, "editor", e.BaseURL, true)
	} else {
		base, source := conf.BaseURL, "config"
		if base == "" { // mm connects to the first local server that answers
			base, source = llm.DefaultBaseURL, "found"
			for _, ep := range llm.LocalEndpoints() {
				if r := found[ep.BaseURL]; r != nil && r.Answers {
					base = ep.BaseURL
					break
				}
			}
		}
		add(providerMain, source, base, true)
	}
	ids := make([]string, 0, len(ch.Set))
	for id := range ch.Set {
		if id != providerMain {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		add(id, "editor", ch.Set[id].BaseURL, true)
	}
	for _, ep := range local {
		if _, set := ch.Set[ep.Provider]; set || found[ep.BaseURL] == nil || !found[ep.BaseURL].Answers {
			continue
		}
		// A local server that is already listed — the configured one is
		// often a local server on its usual port, or the user set it —
		// is the same server: listed twice, choosing one of the two
		// entries would look like a change and be none.
		if slices.ContainsFunc(list, func(p providerInfo) bool { return sameServer(p.base, ep.BaseURL) }) {
			continue
		}
		add(ep.Provider, "local", ep.BaseURL, !slices.Contains(ch.Disabled, ep.Provider))
	}
	if conf.Untrusted != "" {
		add(providerWorkspace, "untrusted", conf.Untrusted, false)
	}
	for i := range list {
		p := &list[i]
		mm := map[string]any{"source": p.source, "active": p.ProviderID == active}
		if p.Current == nil {
			// The schema's current is null for a provider not in use; the
			// user still needs to see which server it is.
			mm["baseUrl"] = p.base
		}
		if p.ProviderID == providerWorkspace {
			mm["note"] = "the workspace's .mm/agent.yaml names this server but is not trusted — run `mm trust` there (or /trust) if you wrote it"
		}
		if p.ProviderID == providerMain && conf.Kind != "" && p.source == "config" {
			mm["kind"] = conf.Kind
		} else if k := kindOf(local, p.base); k != "" {
			mm["kind"] = k
		}
		if r := p.reach; r != nil {
			mm["answers"] = r.Answers
			if len(r.Models) > 0 {
				mm["models"] = r.Models
			}
		}
		p.Meta = map[string]any{"mm": mm}
	}
	return map[string]any{"providers": list}, nil
}

// kindOf names the server at base by the local endpoint it is, "" when
// it is none of them.
func kindOf(local []llm.Endpoint, base string) string {
	for _, ep := range local {
		if sameServer(ep.BaseURL, base) {
			return ep.Provider
		}
	}
	return ""
}

// sameServer reports whether two API bases name the same server: a
// config says localhost where the survey says 127.0.0.1, and a trailing
// slash changes nothing.
func sameServer(a, b string) bool {
	ua, err := url.Parse(strings.TrimRight(a, "/"))
	if err != nil || a == "" {
		return false
	}
	ub, err := url.Parse(strings.TrimRight(b, "/"))
	if err != nil || b == "" {
		return false
	}
	host := func(u *url.URL) string {
		switch h := u.Hostname(); h {
		case "localhost", "127.0.0.1", "::1":
			return "loopback"
		default:
			return strings.ToLower(h)
		}
	}
	return ua.Scheme == ub.Scheme && host(ua) == host(ub) && ua.Port() == ub.Port() && ua.Path == ub.Path
}

// setProvider answers providers/set: the server is remembered for the
// workspace under its id and used from the next model request on, by
// the open sessions too, whose model pickers then list its models. It
// is the user's own act in the editor, so it needs no trust; but the
// untrusted workspace config's server is not taken by its id.
func (a *Agent) setProvider(ctx context.Context, p providerParams) (any, error) {
	if err := providerID(p.ProviderID); err != nil {
		return nil, err
	}
	if p.ProviderID == providerWorkspace {
		return nil, invalid("the server named by the workspace's .mm/agent.yaml is not trusted — run `mm trust` there (or /trust) if you wrote it")
	}
	if p.APIType != apiOpenAI {
		return nil, invalid(fmt.Sprintf("apiType %q is not one mm speaks: mm talks to OpenAI-compatible servers (apiType \"openai\": llama.cpp, Ollama, LM Studio, vLLM, Docker Model Runner)", p.APIType))
	}
	if len(p.Headers) > 0 {
		return nil, invalid("mm sends no custom headers to a model server: a key goes in the config (apiKeyEnv), never through the editor")
	}
	u, err := url.Parse(p.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, invalid(fmt.Sprintf("baseUrl %q is not an http(s) URL: give the API base, e.g. http://127.0.0.1:11434/v1", p.BaseURL))
	}
	base := strings.TrimRight(p.BaseURL, "/")
	if err := a.updateChoice(ctx, func(c *store.Providers) {
		if c.Set == nil {
			c.Set = map[string]store.Endpoint{}
		}
		c.Set[p.ProviderID] = store.Endpoint{APIType: apiOpenAI, BaseURL: base}
		c.Active = p.ProviderID
		c.Disabled = slices.DeleteFunc(c.Disabled, func(d string) bool { return d == p.ProviderID })
	}); err != nil {
		return nil, err
	}
	a.log.Info("model server set from the editor", "provider", p.ProviderID, "baseURL", base)
	return map[string]any{}, nil
}

// disableProvider answers providers/disable: a server the user set is
// forgotten, a local one no longer offered; when it was the one in use,
// the next sessions use the configured server again.
func (a *Agent) disableProvider(ctx context.Context, p providerParams) (any, error) {
	if err := providerID(p.ProviderID); err != nil {
		return nil, err
	}
	if p.ProviderID == providerMain {
		return nil, invalid("main is the configured server and cannot be disabled: set another provider to use it instead")
	}
	local := a.opts.Providers.Local
	if local == nil {
		local = llm.KnownEndpoints()
	}
	_, set := a.choice().Set[p.ProviderID]
	known := set || slices.ContainsFunc(local, func(ep llm.Endpoint) bool { return ep.Provider == p.ProviderID })
	if !known {
		return nil, invalid("unknown provider " + p.ProviderID + " — providers/list shows them")
	}
	if err := a.updateChoice(ctx, func(c *store.Providers) {
		delete(c.Set, p.ProviderID)
		if !slices.Contains(c.Disabled, p.ProviderID) {
			c.Disabled = append(c.Disabled, p.ProviderID)
		}
		if c.Active == p.ProviderID {
			c.Active = ""
		}
	}); err != nil {
		return nil, err
	}
	a.log.Info("model server disabled from the editor", "provider", p.ProviderID)
	return map[string]any{}, nil
}

func providerID(id string) error {
	if id == "" {
		return invalid("providerId is required")
	}
	if len(id) > 64 {
		return invalid("providerId is longer than 64 characters")
	}
	return nil
}

// updateChoice writes the workspace's choice; without a state directory
// there is nowhere to remember it, and the call says so. When the server
// in use changed, the open sessions follow it — their connection, then
// their model pickers and chosen models (followServer) — before the
// answer, so that the editor's next prompt finds them ready.
func (a *Agent) updateChoice(ctx context.Context, change func(*store.Providers)) error {
	if a.opts.Store == nil {
		return invalid("mm has no state directory here (no home directory: set XDG_STATE_HOME), so it cannot remember a model server")
	}
	was := a.inUse()
	if err := a.opts.Store.UpdateProviders(a.opts.Providers.Workspace, change); err != nil {
		a.log.Warn("model server choice not written", "err", err)
		return sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	if a.opts.Providers.Changed != nil {
		a.opts.Providers.Changed()
		if a.inUse() != was {
			a.followServer(ctx)
		}
	}
	return nil
}

// inUse is the base URL of the server the editor chose, "" for the
// configured one.
func (a *Agent) inUse() string {
	ch := a.choice()
	if e, ok := ch.Set[ch.Active]; ok && ch.Active != "" {
		return e.BaseURL
	}
	return ""
}
