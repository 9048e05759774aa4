package joplinops

import (
	"context"

	"github.com/notebridge/notebridge/pkg/core/activity"
)

// ActivityHealth reports the activity log's health: whether its last write
// succeeded and how many entries it failed to write since start.
type ActivityHealth func() (ok bool, failed uint64)

// WithActivityHealth makes joplin_status report the activity log's health
// (pkg/core/activity): a log that cannot be written fails no call, so
// this is where it shows.
func WithActivityHealth(h ActivityHealth) Option {
	return func(o *Ops) { o.activity = h }
}

// activityLogOut is the activity-log part of joplin_status. It names no
// path and no error text (the service log has them).
type activityLogOut struct {
	OK           bool   `json:"ok"`
	FailedWrites int64  `json:"failed_writes" schema:"min=0,max=9007199254740992"`
	Message      string `json:"message" schema:"max=200"`
}

// activityStatus is what joplin_status says of the activity log; nil
// without one.
func (o *Ops) activityStatus() *activityLogOut {
	if o.activity == nil {
		return nil
	}
	ok, failed := o.activity()
	out := &activityLogOut{OK: ok, FailedWrites: int64(min(failed, 1<<53)), Message: "the activity log is written"}
	if !ok {
		out.Message = "the activity log cannot be written: calls go on unrecorded; see the service log"
	}
	return out
}

// servedFromIndex names to the call's activity log the notes a search
// answered from the index: they reach the caller without passing the
// Joplin view, which names the rest (pkg/joplin/scopeview).
func servedFromIndex(ctx context.Context, items []SearchHit) {
	col := activity.CollectorFrom(ctx)
	for _, it := range items {
		col.Add(activity.Note, it.ID)
	}
}
