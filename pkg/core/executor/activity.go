package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// WithActivity has the executor hand one activity.Entry per call to sink,
// whatever the call's outcome, refusals included. The call's context
// carries an activity.Collector the Joplin view fills with the ids it
// served or changed. sink runs in the caller's goroutine, after the call.
func WithActivity(sink func(activity.Entry)) Option {
	return func(e *Executor) { e.activity = sink }
}

// tracked is call with its activity entry: the only path from Call and
// CallScanned to call (TestEveryCallIsTracked).
func (e *Executor) tracked(ctx context.Context, p principal.Principal, t registry.Transport, name string, args json.RawMessage, depth int) (json.RawMessage, *domainerr.Error) {
	if e.activity == nil {
		return e.call(ctx, p, t, name, args, depth)
	}
	start := time.Now()
	col := &activity.Collector{}
	out, derr := e.call(activity.WithCollector(ctx, col), p, t, name, args, depth)
	en := activity.Entry{
		Time:       start.UTC(),
		Surface:    surfaceOf(ctx, t),
		Credential: p.Credential(),
		Tool:       e.loggedName(name),
		Outcome:    activity.OutcomeOK,
		DurationMS: float64(time.Since(start).Microseconds()) / 1000,
		Bytes:      len(out),
	}
	if derr != nil {
		en.Outcome = string(derr.Code)
	}
	col.Fill(&en)
	summarise(&en, e.isWrite(name), args, out)
	e.activity(en)
	return out, derr
}

// UnknownTool is the activity log's name for a call of an operation the
// registry lacks: the name the caller sent is its text, not the bridge's.
const UnknownTool = "(unknown)"

// loggedName is name when it names an operation, else UnknownTool.
func (e *Executor) loggedName(name string) string {
	if _, ok := e.reg.Lookup(name); ok {
		return name
	}
	return UnknownTool
}

// isWrite reports whether operation name changes data (and may return a
// receipt).
func (e *Executor) isWrite(name string) bool {
	op, ok := e.reg.Lookup(name)
	return ok && op.Effect != registry.EffectRead
}

// surfaceOf is the surface an adapter marked ctx with, else t's.
func surfaceOf(ctx context.Context, t registry.Transport) string {
	if s := activity.SurfaceFrom(ctx); s != "" {
		return s
	}
	if t == registry.MCPStdio {
		return activity.SurfaceStdio
	}
	return string(t)
}

// summarise adds to en the receipt of a change and, for a call with a
// query, its length and mode, never its text. Only the top-level members
// are decoded, and only for calls that can have them.
func summarise(en *activity.Entry, write bool, args, out json.RawMessage) {
	hasQuery := bytes.Contains(args, []byte(`"query"`))
	if !write && !hasQuery {
		return
	}
	if hasQuery {
		var in struct {
			Query *string `json:"query"`
			Mode  string  `json:"mode"`
		}
		if json.Unmarshal(args, &in) == nil && in.Query != nil {
			en.Query = &activity.Query{Length: utf8.RuneCountInString(*in.Query), Mode: in.Mode}
		}
	}
	if en.Query != nil && en.Query.Mode == "" {
		en.Query.Mode = "keyword" // unless the answer names another
	}
	if len(out) == 0 {
		return
	}
	var res struct {
		ReceiptID string `json:"receipt_id"`
		Mode      string `json:"mode"`
	}
	if json.Unmarshal(out, &res) != nil {
		return
	}
	if write && res.ReceiptID != "" {
		en.Receipt = &res.ReceiptID
	}
	if en.Query != nil && res.Mode != "" {
		en.Query.Mode = res.Mode // the mode the search ran in
	}
}
