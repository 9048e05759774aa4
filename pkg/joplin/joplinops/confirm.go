package joplinops

import (
	"context"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// confirmCreate settles a create that sent object id and failed with err.
//
// After a 5xx answer Joplin has finished with the request, so what it holds
// under id is conclusive: the object as written (asWritten) means the create
// was applied, and its loaded form is returned as the result; no object
// means nothing was written, reported as Joplin's refusal (JOPLIN_ERROR).
// Anything else (a different object, or a check that fails) stays
// WRITE_OUTCOME_UNKNOWN naming id, which the executor journals. A write
// whose answer never arrived is not checked: Joplin may still be applying
// it, so an absent object would prove nothing.
func confirmCreate[T any](ctx context.Context, err error, id string, load func(context.Context) (T, error), asWritten func(T) bool) (T, error) {
	var zero T
	ae, answered := joplin.AnsweredServerError(err)
	if !answered {
		return zero, withObjectID(err, id)
	}
	got, lerr := load(ctx)
	switch {
	case lerr == nil && asWritten(got):
		return got, nil
	case domainerr.HasCode(lerr, domainerr.NotFound):
		return zero, ae.NotApplied()
	case lerr == nil:
		return zero, domainerr.New(domainerr.WriteOutcomeUnknown,
			"Joplin answered the create with HTTP %d, and object %s exists but differs from what was written; check it before retrying", ae.Status, id).
			WithDetails(map[string]any{"id": id, "status": ae.Status})
	default:
		return zero, withObjectID(err, id)
	}
}
