package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Spec describes a tool whose arguments decode into the struct P. The JSON
// schema and the "expected {…}" shape quoted in argument errors are derived
// from P: field order is schema order (put `path` first: the model writes
// fields in schema order), `json:"name,omitempty"` marks an optional field,
// `desc:"…"` documents a field, `enum:"a,b"` restricts a string.
type Spec[P any] struct {
	Name        string
	Description string
	Kind        Kind
	// Caps is everything a call may do; New refuses a tool that declares
	// nothing.
	Caps Caps
	// Describe gives the title and locations shown before the call runs.
	Describe func(env Env, p P) Call
	// Preflight, when set, refuses a call from its path alone, while the
	// rest of the arguments still streams (see Preflighter).
	Preflight func(ctx context.Context, env Env, path string) string
	Run       func(ctx context.Context, env Env, p P) (Result, error)
}

// New turns a Spec into a Tool.
func New[P any](s Spec[P]) Tool {
	var zero P
	t := reflect.TypeOf(zero)
	if s.Caps == 0 {
		panic(fmt.Sprintf("tools: %s declares no capabilities (Spec.Caps)", s.Name))
	}
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("tools: params of %s must be a struct, not %s", s.Name, t))
	}
	schema, err := json.Marshal(schemaOf(t))
	if err != nil {
		panic(fmt.Sprintf("tools: schema of %s: %v", s.Name, err))
	}
	return &typed[P]{spec: s, schema: schema, shape: shapeOf(t), required: requiredOf(t)}
}

type typed[P any] struct {
	spec     Spec[P]
	schema   json.RawMessage
	shape    string
	required []string
}

func (t *typed[P]) Name() string            { return t.spec.Name }
func (t *typed[P]) Description() string     { return t.spec.Description }
func (t *typed[P]) Schema() json.RawMessage { return t.schema }
func (t *typed[P]) Kind() Kind              { return t.spec.Kind }
func (t *typed[P]) Caps() Caps              { return t.spec.Caps }

// Shape is the compact argument shape quoted in errors, e.g.
// {path, edits:[{old,new}], dry_run?}.
func (t *typed[P]) Shape() string { return t.shape }

func (t *typed[P]) Describe(env Env, args json.RawMessage) Call {
	p, err := t.decode(args)
	if err != nil || t.spec.Describe == nil {
		return Call{Title: t.spec.Name}
	}
	return t.spec.Describe(env, p)
}

// Preflight implements Preflighter; tools without a preflight accept.
func (t *typed[P]) Preflight(ctx context.Context, env Env, path string) string {
	if t.spec.Preflight == nil {
		return ""
	}
	return t.spec.Preflight(ctx, env, path)
}

func (t *typed[P]) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	p, err := t.decode(args)
	if err != nil {
		return Errorf("[error: invalid arguments for %s: %v — expected %s]", t.spec.Name, err, t.shape), nil
	}
	return t.spec.Run(ctx, env, p)
}

// decode is strict: unknown fields and missing required fields are errors,
// worded for the model.
func (t *typed[P]) decode(args json.RawMessage) (P, error) {
	var p P
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(args, &present); err != nil {
		return p, errors.New("the arguments must be one JSON object")
	}
	for _, name := range t.required {
		if _, ok := present[name]; !ok {
			return p, fmt.Errorf("missing %q", name)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, argError(err)
	}
	return p, nil
}

// argError rewords encoding/json errors for a small model.
func argError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%q must be %s, not %s", te.Field, jsonKind(te.Type), te.Value)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Errorf("unknown field %s", f)
	}
	return errors.New(strings.TrimPrefix(msg, "json: "))
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

type field struct {
	name     string
	optional bool
	desc     string
	enum     []string
	typ      reflect.Type
}

func fieldsOf(t reflect.Type) []field {
	var fs []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		fd := field{name: name, optional: strings.Contains(opts, "omitempty"), desc: f.Tag.Get("desc"), typ: f.Type}
		if e := f.Tag.Get("enum"); e != "" {
			fd.enum = strings.Split(e, ",")
		}
		fs = append(fs, fd)
	}
	return fs
}

func requiredOf(t reflect.Type) []string {
	var req []string
	for _, f := range fieldsOf(t) {
		if !f.optional {
			req = append(req, f.name)
		}
	}
	return req
}

// orderedObject marshals its keys in the given order so schemas keep the
// struct's field order (path first) and stay byte-stable.
type orderedObject []kv

type kv struct {
	k string
	v any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func schemaOf(t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		props := orderedObject{}
		for _, f := range fieldsOf(t) {
			s := schemaOf(f.typ).(orderedObject)
			if len(f.enum) > 0 {
				s = append(s, kv{"enum", f.enum})
			}
			if f.desc != "" {
				s = append(s, kv{"description", f.desc})
			}
			props = append(props, kv{f.name, s})
		}
		obj := orderedObject{{"type", "object"}, {"properties", props}}
		if req := requiredOf(t); len(req) > 0 {
			obj = append(obj, kv{"required", req})
		}
		return obj
	case reflect.Slice, reflect.Array:
		return orderedObject{{"type", "array"}, {"items", schemaOf(t.Elem())}}
	case reflect.String:
		return orderedObject{{"type", "string"}}
	case reflect.Bool:
		return orderedObject{{"type", "boolean"}}
	case reflect.Float32, reflect.Float64:
		return orderedObject{{"type", "number"}}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return orderedObject{{"type", "integer"}}
	default:
		return orderedObject{}
	}
}

// shapeOf renders a compact shape like {path, edits:[{old,new}], dry_run?}.
func shapeOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var parts []string
		for _, f := range fieldsOf(t) {
			p := f.name
			if f.optional {
				p += "?"
			}
			if inner := shapeOf(f.typ); inner != "" {
				p += ":" + inner
			}
			parts = append(parts, p)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case reflect.Slice, reflect.Array:
		if inner := shapeOf(t.Elem()); inner != "" {
			return "[" + inner + "]"
		}
		return ""
	default:
		return ""
	}
}
