package acp

import (
	"context"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/permit"
)

// The config option ids. Zed ≥ 1.6 shows config options; older
// clients show the session modes, which are kept in sync.
const (
	optMode    = "mode"
	optModel   = "model"
	optThought = "thought_level"
)

// modeState is the session modes answer of session/new, load and resume.
func modeState(current permit.Mode) *sdk.SessionModeState {
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(current)}
	for _, m := range permit.Modes {
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(m), Name: m.Name(), Description: sdk.Ptr(m.Description())})
	}
	return st
}

// choice is one value of a select option.
type choice struct{ value, name, description string }

func selectOption(id, name string, cat sdk.SessionConfigOptionCategory, current string, choices []choice) sdk.SessionConfigOption {
	opts := make(sdk.SessionConfigSelectOptionsUngrouped, len(choices))
	for i, c := range choices {
		opts[i] = sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(c.value), Name: c.name}
		if c.description != "" {
			opts[i].Description = sdk.Ptr(c.description)
		}
	}
	return sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{
		Type: "select", Id: sdk.SessionConfigId(id), Name: name, Category: sdk.Ptr(cat),
		CurrentValue: sdk.SessionConfigValueId(current), Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts},
	}}
}

// configOptions is the session's whole option list: mode always, model
// once the server listed its models, thought level when the model reasons
// (or an effort is configured).
func (s *session) configOptions(ctx context.Context) []sdk.SessionConfigOption {
	modes := make([]choice, len(permit.Modes))
	for i, m := range permit.Modes {
		modes[i] = choice{string(m), m.Name(), m.Description()}
	}
	out := []sdk.SessionConfigOption{selectOption(optMode, "Mode", sdk.SessionConfigOptionCategoryMode, string(s.policy.Mode()), modes)}
	if models := s.models(); len(models) > 0 {
		cur := s.engine.Model()
		if !slices.Contains(models, cur) {
			cur = models[0]
		}
		cs := make([]choice, len(models))
		for i, m := range models {
			cs[i] = choice{value: m, name: m}
		}
		out = append(out, selectOption(optModel, "Model", sdk.SessionConfigOptionCategoryModel, cur, cs))
	}
	if levels := s.thoughtLevels(ctx); len(levels) > 0 {
		cur := s.engine.Thinking()
		if !slices.Contains(levels, cur) {
			cur = levels[len(levels)-1]
		}
		if s.thoughtSwitch(levels) {
			out = append(out, sdk.SessionConfigOption{Boolean: &sdk.SessionConfigOptionBoolean{
				Type: "boolean", Id: optThought, Name: "Thinking", Category: sdk.Ptr(sdk.SessionConfigOptionCategoryThoughtLevel),
				Description: sdk.Ptr("Whether the model reasons before it answers"), CurrentValue: cur != engine.ThinkingOff,
			}})
			return out
		}
		cs := make([]choice, len(levels))
		for i, l := range levels {
			cs[i] = choice{value: l, name: thoughtName(l)}
		}
		out = append(out, selectOption(optThought, "Thinking", sdk.SessionConfigOptionCategoryThoughtLevel, cur, cs))
	}
	return out
}

// thoughtSwitch reports whether the thought levels are a switch (off and
// on: the model's template turns thinking on and off) shown as a toggle:
// only to a client that advertised boolean config options; others get
// the same two values as a select.
func (s *session) thoughtSwitch(levels []string) bool {
	return slices.Equal(levels, []string{engine.ThinkingOff, engine.ThinkingOn}) && s.agent.sessionCaps().booleans
}

func thoughtName(l string) string {
	switch l {
	case engine.ThinkingOff:
		return "Off"
	case engine.ThinkingOn:
		return "On"
	}
	return strings.ToUpper(l[:1]) + l[1:]
}

// models is the served model list last seen (models.go), nil while the
// server has not said.
func (s *session) models() []string {
	if s.b.Models == nil {
		return nil
	}
	return s.agent.models.offer(s)
}

// thoughtLevels are offered once the model reasons, or when an effort is
// configured.
func (s *session) thoughtLevels(ctx context.Context) []string {
	if s.b.ThoughtLevels == nil || (!s.engine.Reasoned() && s.engine.Thinking() == "") {
		return nil
	}
	return s.b.ThoughtLevels(ctx)
}

// invalid is an invalid-params error whose message is the line itself.
func invalid(line string) error {
	return invalidParams(line)
}

// setMode switches the permission mode; the model is told when plan mode
// begins or ends, at the head of its next user message.
func (s *session) setMode(m permit.Mode) {
	if s.engine.SwitchMode(s.policy, m) {
		s.save()
	}
}

// SetSessionMode is session/set_mode; the config option follows.
func (a *Agent) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	s := a.session(p.SessionId)
	if s == nil {
		return sdk.SetSessionModeResponse{}, invalid("unknown session " + string(p.SessionId))
	}
	m, ok := permit.ParseMode(string(p.ModeId))
	if !ok {
		return sdk.SetSessionModeResponse{}, invalid("unknown mode " + string(p.ModeId) + " — the modes are " + permit.ModeIDs())
	}
	s.setMode(m)
	s.update(ctx, sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: s.configOptions(ctx)}})
	return sdk.SetSessionModeResponse{}, nil
}

// SetSessionConfigOption is session/set_config_option: it answers the
// whole updated list. A mode change is also sent as current_mode_update
// for clients that show the modes.
func (a *Agent) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	if p.Boolean != nil {
		return a.setBoolean(ctx, *p.Boolean)
	}
	if p.ValueId == nil {
		return sdk.SetSessionConfigOptionResponse{}, invalid("send a value id, or a boolean value for a boolean option")
	}
	v := p.ValueId
	s := a.session(v.SessionId)
	if s == nil {
		return sdk.SetSessionConfigOptionResponse{}, invalid("unknown session " + string(v.SessionId))
	}
	value := string(v.Value)
	switch string(v.ConfigId) {
	case optMode:
		m, ok := permit.ParseMode(value)
		if !ok {
			return sdk.SetSessionConfigOptionResponse{}, invalid("unknown mode " + value + " — the modes are " + permit.ModeIDs())
		}
		s.setMode(m)
		s.update(ctx, sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeId: sdk.SessionModeId(m)}})
	case optModel:
		models := s.models()
		if !slices.Contains(models, value) {
			models = s.agent.fetchModels(ctx, s) // the list may have changed since
		}
		if !slices.Contains(models, value) {
			if len(models) == 0 {
				return sdk.SetSessionConfigOptionResponse{}, invalid("the model server did not list its models, so the model cannot be chosen now")
			}
			return sdk.SetSessionConfigOptionResponse{}, invalid("unknown model " + value + " — the server serves " + strings.Join(models, ", "))
		}
		s.engine.SetModel(value)
		s.save()
	case optThought:
		levels := s.allThoughtLevels(ctx)
		if !slices.Contains(levels, value) {
			return sdk.SetSessionConfigOptionResponse{}, invalid("unknown thought level " + value + " — the levels are " + strings.Join(levels, ", "))
		}
		s.engine.SetThinking(value)
		s.save()
	default:
		return sdk.SetSessionConfigOptionResponse{}, invalid("unknown option " + string(v.ConfigId) + " — the options are mode, model, thought_level")
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: s.configOptions(ctx)}, nil
}

// setBoolean is session/set_config_option with a boolean value: the
// thinking switch is mm's one boolean option.
func (a *Agent) setBoolean(ctx context.Context, v sdk.SetSessionConfigOptionBoolean) (sdk.SetSessionConfigOptionResponse, error) {
	s := a.session(v.SessionId)
	if s == nil {
		return sdk.SetSessionConfigOptionResponse{}, invalid("unknown session " + string(v.SessionId))
	}
	if string(v.ConfigId) != optThought || !s.thoughtSwitch(s.allThoughtLevels(ctx)) {
		return sdk.SetSessionConfigOptionResponse{}, invalid("option " + string(v.ConfigId) + " is not a boolean — send one of its value ids")
	}
	level := engine.ThinkingOff
	if v.Value {
		level = engine.ThinkingOn
	}
	s.engine.SetThinking(level)
	s.save()
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: s.configOptions(ctx)}, nil
}

// allThoughtLevels are the levels that can be chosen, shown or not.
func (s *session) allThoughtLevels(ctx context.Context) []string {
	if s.b.ThoughtLevels == nil {
		return nil
	}
	return s.b.ThoughtLevels(ctx)
}

// save stores the session after a change of mode or model, with one log
// line when it cannot (the next turn reports it to the user).
func (s *session) save() {
	s.fresh.Store(false)
	if err := s.engine.Save(); err != nil {
		s.agent.log.Warn("session not saved", "session", s.id, "err", err)
	}
}
