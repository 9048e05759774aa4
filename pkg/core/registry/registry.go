// Package registry holds the one ordered, immutable list of agent
// operations. Every adapter derives its tools, routes and documents from it,
// and building it enforces the naming, effect, exposure and schema rules.
package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/schema"
)

// Effect says what an operation does to the user's data.
type Effect string

// The effects, from harmless to irreversible.
const (
	EffectRead            Effect = "read"
	EffectCreate          Effect = "create"
	EffectUpdate          Effect = "update"
	EffectTrash           Effect = "trash"
	EffectDeletePermanent Effect = "delete-permanent"
)

func (e Effect) valid() bool {
	switch e {
	case EffectRead, EffectCreate, EffectUpdate, EffectTrash, EffectDeletePermanent:
		return true
	}
	return false
}

// Transport names a calling surface an operation can be exposed on.
type Transport string

// The transports.
const (
	MCPStdio Transport = "mcp-stdio"
	MCPHTTP  Transport = "mcp-http"
	Actions  Transport = "actions"
)

// AllTransports lists the transports in a fixed order.
var AllTransports = []Transport{MCPStdio, MCPHTTP, Actions}

// Handler runs one operation. args has already passed the input schema.
// It returns a value that encodes to an object matching the output schema,
// or an error (ideally a *domainerr.Error).
type Handler func(ctx context.Context, args json.RawMessage) (any, error)

// Operation is one agent operation. Its schemas are raw JSON in the
// supported subset; Operation values handed out by a Registry share their
// schema bytes and must be treated as read-only.
type Operation struct {
	Name         string
	Title        string
	Description  string
	Toolset      string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Effect       Effect
	Exposure     []Transport
	// Media: the result is one file, {…, "mime", "data_base64"} with
	// data_base64 last; an adapter that can send files sends an image or
	// audio file as such (MCP image and audio content) instead of base64
	// inside JSON text.
	Media   bool
	Handler Handler
	// defErr records why Define could not derive the schemas; New
	// reports it.
	defErr error
}

// ExposedOn reports whether the operation may be called over t.
func (o Operation) ExposedOn(t Transport) bool {
	for _, e := range o.Exposure {
		if e == t {
			return true
		}
	}
	return false
}

// Registry is an ordered, immutable set of operations. A read-only view
// (ReadOnly) keeps every operation for lookup but exposes only reads; the
// executor refuses the rest.
type Registry struct {
	ops      []Operation
	byName   map[string]int
	readOnly bool
}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// MaxNameLength bounds operation names (MCP clients and GPT Actions both
// truncate or refuse longer ones).
const MaxNameLength = 64

// New validates ops and freezes them, in the given order. It reports every
// problem found, not just the first.
func New(ops ...Operation) (*Registry, error) {
	r := &Registry{byName: make(map[string]int, len(ops))}
	var problems []error
	for _, op := range ops {
		if errs := validate(op); len(errs) > 0 {
			problems = append(problems, errs...)
			continue
		}
		if _, dup := r.byName[op.Name]; dup {
			problems = append(problems, fmt.Errorf("operation %q: duplicate name", op.Name))
			continue
		}
		op.InputSchema = compact(op.InputSchema)
		op.OutputSchema = compact(op.OutputSchema)
		op.Exposure = append([]Transport(nil), op.Exposure...)
		r.byName[op.Name] = len(r.ops)
		r.ops = append(r.ops, op)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("registry: %w", errors.Join(problems...))
	}
	return r, nil
}

func compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return buf.Bytes()
}

func validate(op Operation) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("operation %q: %s", op.Name, fmt.Sprintf(format, args...)))
	}
	if len(op.Name) > MaxNameLength || !namePattern.MatchString(op.Name) {
		bad("name must be snake_case of at most %d characters", MaxNameLength)
	}
	if strings.TrimSpace(op.Title) == "" || strings.TrimSpace(op.Description) == "" {
		bad("title and description are required")
	}
	if !op.Effect.valid() {
		bad("missing or unknown effect %q", op.Effect)
	}
	if len(op.Exposure) == 0 {
		bad("missing exposure")
	}
	for _, t := range op.Exposure {
		switch t {
		case MCPStdio, MCPHTTP, Actions:
		default:
			bad("unknown exposure %q", t)
		}
	}
	if op.Handler == nil {
		bad("missing handler")
	}
	if op.defErr != nil {
		bad("%v", op.defErr)
		return errs
	}
	for _, s := range []struct {
		kind  string
		raw   json.RawMessage
		check func(json.RawMessage) []string
	}{{"input", op.InputSchema, schema.CheckSubset}, {"output", op.OutputSchema, schema.CheckResultSubset}} {
		if len(s.raw) == 0 {
			bad("missing %s schema", s.kind)
			continue
		}
		for _, p := range s.check(s.raw) {
			bad("%s schema %s", s.kind, p)
		}
	}
	return errs
}

// Len returns the number of operations.
func (r *Registry) Len() int { return len(r.ops) }

// Operations returns the operations in registry order. The slice is a copy.
func (r *Registry) Operations() []Operation {
	return append([]Operation(nil), r.ops...)
}

// ReadOnly returns a view of r in the read-only profile: Exposed lists only
// operations whose effect is read, and Permits refuses the others.
func (r *Registry) ReadOnly() *Registry {
	return &Registry{ops: r.ops, byName: r.byName, readOnly: true}
}

// IsReadOnly reports whether r is a read-only view.
func (r *Registry) IsReadOnly() bool { return r.readOnly }

// Permits reports whether the registry's profile allows op to run: every
// operation in the full profile, reads only in the read-only profile.
func (r *Registry) Permits(op Operation) bool {
	return !r.readOnly || op.Effect == EffectRead
}

// Exposed returns, in order, the operations callable over t in the
// registry's profile.
func (r *Registry) Exposed(t Transport) []Operation {
	var out []Operation
	for _, op := range r.ops {
		if op.ExposedOn(t) && r.Permits(op) {
			out = append(out, op)
		}
	}
	return out
}

// Lookup finds an operation by name.
func (r *Registry) Lookup(name string) (Operation, bool) {
	i, ok := r.byName[name]
	if !ok {
		return Operation{}, false
	}
	return r.ops[i], true
}

// Typed adapts a handler taking a decoded argument struct. Decoding rejects
// unknown fields as a second line of defence behind the schema.
func Typed[In any](fn func(ctx context.Context, in In) (any, error)) Handler {
	return func(ctx context.Context, args json.RawMessage) (any, error) {
		var in In
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return nil, domainerr.New(domainerr.InvalidArgument, "arguments do not match the operation's fields")
		}
		return fn(ctx, in)
	}
}

// Func adapts a handler with typed input and output. On error the
// (zero) output is dropped, so a failed call never encodes a result.
func Func[In, Out any](fn func(ctx context.Context, in In) (Out, error)) Handler {
	return Typed(func(ctx context.Context, in In) (any, error) {
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	})
}
