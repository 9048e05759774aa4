// Package executor is the single validating path from every adapter to an
// operation handler: the caller's principal, lookup, exposure check, the
// scope decision, size and nesting limits, schema validation, a concurrency
// slot, the handler, and failure classification. It is the only code that
// runs handlers, and the only code that decides what a caller may run.
package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/scope"
	"github.com/notebridge/notebridge/pkg/internal/jsonscan"
)

// Limits bounds what one call may ask of the process.
type Limits struct {
	// MaxArgBytes bounds the encoded arguments of one call.
	MaxArgBytes int
	// MaxDepth bounds JSON nesting of the arguments.
	MaxDepth int
	// MaxActive bounds handlers running at once; beyond it calls get BUSY.
	MaxActive int
}

// DefaultLimits suits a single-user bridge; MaxArgBytes leaves room for a
// base64-encoded 10 MiB resource.
var DefaultLimits = Limits{MaxArgBytes: 16 << 20, MaxDepth: 64, MaxActive: 32}

// Executor runs operations from one registry. It is safe for concurrent use.
type Executor struct {
	reg            *registry.Registry
	schemas        sync.Map // operation name → *opSchemas, filled on first call
	limits         Limits
	slots          chan struct{}
	log            *slog.Logger
	validateOutput bool
	uncertain      func(UncertainWrite)
	activity       func(activity.Entry) // activity.go
}

// Option configures an Executor.
type Option func(*Executor)

// WithOutputValidation makes the executor check every successful result
// against the operation's output schema (used by tests and debugging).
func WithOutputValidation() Option { return func(e *Executor) { e.validateOutput = true } }

// UncertainWrite describes a call that ended in WRITE_OUTCOME_UNKNOWN: the
// write reached Joplin but no answer came back. It carries a digest of the
// arguments, never the arguments.
type UncertainWrite struct {
	Operation  string
	Transport  registry.Transport
	ArgsSHA256 string
	Err        *domainerr.Error
}

// WithUncertainWriteSink registers fn to record every uncertain write for
// operator inspection.
func WithUncertainWriteSink(fn func(UncertainWrite)) Option {
	return func(e *Executor) { e.uncertain = fn }
}

// WithLogger sets where failures are logged; the default discards.
func WithLogger(l *slog.Logger) Option { return func(e *Executor) { e.log = l } }

var loadDraft sync.Once

// New builds an executor for reg. It compiles no schema: each operation's
// schemas are compiled on its first call (see schemasFor), so start-up does
// not grow with the catalog. CheckSchemas compiles them all, for tests.
func New(reg *registry.Registry, limits Limits, opts ...Option) (*Executor, error) {
	if limits.MaxActive <= 0 || limits.MaxArgBytes <= 0 || limits.MaxDepth <= 0 {
		return nil, errors.New("executor: limits must be positive")
	}
	e := &Executor{
		reg:    reg,
		limits: limits,
		slots:  make(chan struct{}, limits.MaxActive),
		log:    slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(e)
	}
	return e, nil
}

// Registry returns the registry this executor runs.
func (e *Executor) Registry() *registry.Registry { return e.reg }

// Call runs operation name for caller p on transport t. It returns the
// encoded result object (always valid JSON), or a domain error; never both.
// A call without an agent principal (the zero Principal, or notebridge's
// own System) is refused before anything else is looked at.
func (e *Executor) Call(ctx context.Context, p principal.Principal, t registry.Transport, name string, args json.RawMessage) (json.RawMessage, *domainerr.Error) {
	return e.tracked(ctx, p, t, name, args, -1)
}

// CallScanned is Call for arguments a jsonscan.Scanner has already read
// (the stdio fast path): they are valid JSON and their depth is known, so
// nothing scans them again before the schema validator decodes them.
func (e *Executor) CallScanned(ctx context.Context, p principal.Principal, t registry.Transport, name string, args jsonscan.Value) (json.RawMessage, *domainerr.Error) {
	return e.tracked(ctx, p, t, name, args.Bytes(), args.Depth())
}

// call is Call; depth is the arguments' nesting when already known, or
// negative to have checkDepth measure it.
func (e *Executor) call(ctx context.Context, p principal.Principal, t registry.Transport, name string, args json.RawMessage, depth int) (json.RawMessage, *domainerr.Error) {
	if !p.Agent() {
		return nil, unauthenticated()
	}
	op, ok := e.reg.Lookup(name)
	if !ok {
		return nil, domainerr.New(domainerr.UnknownOperation, "unknown operation")
	}
	if !op.ExposedOn(t) {
		return nil, domainerr.New(domainerr.NotExposed, "operation %s is not available on %s", name, t)
	}
	if !e.reg.Permits(op) {
		return nil, domainerr.New(domainerr.ReadOnly, "operation %s changes data and this server runs read-only", name)
	}
	if derr := authorize(p, op); derr != nil {
		return nil, derr
	}
	if len(args) == 0 || string(args) == "null" {
		args, depth = json.RawMessage(`{}`), 1
	}
	if len(args) > e.limits.MaxArgBytes {
		return nil, domainerr.New(domainerr.RequestTooLarge, "arguments exceed %d bytes", e.limits.MaxArgBytes)
	}
	if depth < 0 {
		if err := checkDepth(args, e.limits.MaxDepth); err != nil {
			return nil, err
		}
	} else if depth > e.limits.MaxDepth {
		return nil, tooDeep(e.limits.MaxDepth)
	}
	in, cerr := e.schemasFor(op).input()
	if cerr != nil {
		e.log.Error("input schema does not compile", "operation", name, "err", cerr)
		return nil, domainerr.New(domainerr.Internal, "internal error")
	}
	if err := validateInput(ctx, in, args); err != nil {
		return nil, err
	}
	if err := checkText(args); err != nil {
		return nil, err
	}
	select {
	case e.slots <- struct{}{}:
	default:
		return nil, domainerr.Retryable(domainerr.Busy, "too many operations in progress; retry shortly")
	}
	defer func() { <-e.slots }()

	// The handler's requests carry the caller: the Joplin client's view
	// narrows them to its notebooks (pkg/joplin/scopeview).
	out, err := e.run(principal.With(ctx, p), op, args)
	if err != nil {
		de := e.classify(name, err)
		if de.Code == domainerr.WriteOutcomeUnknown && e.uncertain != nil {
			sum := sha256.Sum256(args)
			e.uncertain(UncertainWrite{Operation: name, Transport: t, ArgsSHA256: hex.EncodeToString(sum[:]), Err: de})
		}
		return nil, de
	}
	encoded, encErr := encodeResult(out)
	if encErr != nil {
		e.log.Error("result encoding failed", "operation", name, "err", encErr)
		return nil, domainerr.New(domainerr.Internal, "internal error")
	}
	if e.validateOutput {
		out, cerr := e.schemasFor(op).output()
		if cerr != nil {
			e.log.Error("output schema does not compile", "operation", name, "err", cerr)
			return nil, domainerr.New(domainerr.Internal, "internal error")
		}
		if errs, verr := out.ValidateBytes(ctx, encoded); verr != nil || len(errs) > 0 {
			e.log.Error("result does not match output schema", "operation", name, "problems", len(errs))
			return nil, domainerr.New(domainerr.Internal, "result does not match the output schema").
				WithDetails(map[string]any{"problems": sanitize(errs)})
		}
	}
	return encoded, nil
}

// Authorize is the scope decision Call makes for caller p and operation
// name, for adapters that must answer a refusal in their own way before the
// call (MCP over HTTP: 403 with an insufficient_scope challenge). It
// returns nil when p may call name, INSUFFICIENT_SCOPE with details.scope
// when its grant lacks the scope, UNAUTHENTICATED for the zero Principal
// and System, and UNKNOWN_OPERATION for a name the registry lacks.
func (e *Executor) Authorize(p principal.Principal, name string) *domainerr.Error {
	if !p.Agent() {
		return unauthenticated()
	}
	op, ok := e.reg.Lookup(name)
	if !ok {
		return domainerr.New(domainerr.UnknownOperation, "unknown operation")
	}
	return authorize(p, op)
}

// authorize is the one scope decision: the owner and the static-token
// holders may run every operation; an OAuth grant only those whose scope
// (scope.Required) it was granted, and none that no scope covers.
func authorize(p principal.Principal, op registry.Operation) *domainerr.Error {
	if !p.Limited() {
		return nil
	}
	need, known := scope.Required(op)
	if known && p.Scopes().Has(need) {
		return nil
	}
	return insufficientScope(op.Name, need)
}

func unauthenticated() *domainerr.Error {
	return domainerr.New(domainerr.Unauthenticated, "the call carries no authenticated caller")
}

// insufficientScope is the error for a caller whose OAuth token lacks the
// scope need that operation name requires; details.scope names it ("" when
// no token can call the operation).
func insufficientScope(name string, need scope.Scope) *domainerr.Error {
	if need == "" {
		return domainerr.New(domainerr.InsufficientScope, "operation %s cannot be called with an OAuth token", name).
			WithDetails(map[string]any{"scope": ""})
	}
	return domainerr.New(domainerr.InsufficientScope, "operation %s needs the OAuth scope %s, which this token was not granted", name, need).
		WithDetails(map[string]any{"scope": string(need)})
}

func (e *Executor) run(ctx context.Context, op registry.Operation, args json.RawMessage) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			e.log.Error("operation panicked", "operation", op.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			out, err = nil, domainerr.New(domainerr.Internal, "internal error")
		}
	}()
	return op.Handler(ctx, args)
}

func (e *Executor) classify(name string, err error) *domainerr.Error {
	if de, ok := domainerr.As(err); ok {
		return de
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return domainerr.Retryable(domainerr.Cancelled, "the operation was cancelled or timed out")
	}
	if de, ok := storageFull(err); ok {
		e.log.Error("operation failed: no space for the state directory", "operation", name, "err", err)
		return de
	}
	e.log.Error("operation failed", "operation", name, "err", err)
	return domainerr.New(domainerr.Internal, "internal error")
}

func encodeResult(out any) (json.RawMessage, error) {
	var b []byte
	switch v := out.(type) {
	case json.RawMessage:
		// json.Marshal checks what it writes; bytes a handler hands over
		// are checked here, once, so adapters can rely on the result.
		if !json.Valid(v) {
			return nil, errors.New("result is not valid JSON")
		}
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, errors.New("result is not a JSON object")
	}
	return b, nil
}
