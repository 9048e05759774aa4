package writejournal

import (
	"log/slog"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/core/executor"
)

// Sink returns the executor's sink of uncertain writes: each is appended to
// j, and the log says where (or that it could not be recorded).
func Sink(j *Journal, log *slog.Logger) func(executor.UncertainWrite) {
	return func(u executor.UncertainWrite) {
		if err := j.Append(UncertainEntry(u)); err != nil {
			log.Error("cannot record an uncertain write in the operator journal", "operation", u.Operation, "err", err)
			return
		}
		log.Warn("uncertain write recorded in the operator journal", "operation", u.Operation, "journal", j.Path())
	}
}

// UncertainEntry keeps only object ids from the error details: no titles,
// bodies or content reach the journal. Known says what the operator can
// rely on for the store that failed.
func UncertainEntry(u executor.UncertainWrite) Entry {
	objects := map[string]string{}
	for k, v := range u.Err.Details {
		if s, ok := v.(string); ok && (k == "id" || strings.HasSuffix(k, "_id") || k == "idempotency_key") {
			objects[k] = s
		}
	}
	known := "the write reached Joplin but its outcome could not be confirmed (no answer, or an error answer and no conclusive check); check whether the named object exists before retrying"
	if _, okf := objects["idempotency_key"]; okf {
		known = "the OKF commit passed its point of no return but did not finish; the next write to the bundle completes it, and retrying the identical request returns its receipt"
	}
	return Entry{
		Time: time.Now().UTC(), Operation: u.Operation, ArgsSHA256: u.ArgsSHA256, Transport: string(u.Transport),
		Code: string(u.Err.Code), Objects: objects, Known: known,
	}
}
