package main

import (
	"net"
	"net/http"
	"time"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/syncstate"
	"github.com/notebridge/notebridge/pkg/transport/httpfront"
	"github.com/notebridge/notebridge/pkg/transport/promtext"
)

// MetricsPath is where the internal metrics listener serves.
const MetricsPath = "/metrics"

// latencyBuckets are the call-latency histogram's bounds, in seconds.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// callMetrics are the metrics the bridge counts itself: calls, their
// latency, Joplin exchanges and refused OAuth sign-ins. Labels carry only
// names from fixed sets (operations, surfaces, error codes, methods), never
// an id or a text.
type callMetrics struct {
	reg      promtext.Registry
	calls    *promtext.Counter
	latency  *promtext.Histogram
	joplin   *promtext.Counter
	joplinEr *promtext.Counter
	refused  *promtext.Counter
}

func newCallMetrics() *callMetrics {
	m := &callMetrics{}
	m.calls = m.reg.Counter("notebridge_calls_total", "Operation calls, by operation, surface and outcome (ok or the error code).", "tool", "surface", "outcome")
	m.latency = m.reg.Histogram("notebridge_call_duration_seconds", "Time from a call's arrival at the executor to its answer.", latencyBuckets, "tool", "surface")
	m.joplin = m.reg.Counter("notebridge_joplin_requests_total", "HTTP exchanges with the Joplin Data API, retries included.", "method")
	m.joplinEr = m.reg.Counter("notebridge_joplin_request_errors_total", "Exchanges with Joplin that failed: unreachable, or the error code of Joplin's answer.", "method", "outcome")
	m.refused = m.reg.Counter("notebridge_oauth_signins_refused_total", "OAuth consent sign-ins refused: wrong passphrase, or an address locked out.", "reason")
	return m
}

// observe counts one call (its tool is an operation's name or
// executor.UnknownTool: a bounded label).
func (m *callMetrics) observe(e activity.Entry) {
	m.calls.Inc(e.Tool, e.Surface, e.Outcome)
	m.latency.Observe(e.DurationMS/1000, e.Tool, e.Surface)
}

// exchanged counts one exchange with Joplin.
func (m *callMetrics) exchanged(x joplin.Exchange) {
	m.joplin.Inc(x.Method)
	if x.Outcome != "ok" {
		m.joplinEr.Inc(x.Method, x.Outcome)
	}
}

// signInRefused counts a refused consent sign-in.
func (m *callMetrics) signInRefused(reason string) { m.refused.Inc(reason) }

// watch adds the gauges read at scrape time: the search index and search by
// meaning, the sync, and the activity log.
func (m *callMetrics) watch(index *joplinindex.Indexer, sync *syncstate.Reader, log *activity.Log) {
	one := func(v float64) []promtext.Sample { return []promtext.Sample{{Value: v}} }
	m.reg.Gauge("notebridge_index_state", "The search index's state (1 for the current one).", func() []promtext.Sample {
		return []promtext.Sample{{Labels: []string{string(index.Status().State)}, Value: 1}}
	}, "state")
	m.reg.Gauge("notebridge_index_notes", "Notes the search index holds.", func() []promtext.Sample {
		return one(float64(index.Status().Notes))
	})
	m.reg.Gauge("notebridge_index_lag_seconds", "Time since the search index last caught up with Joplin (absent before its first pass).", func() []promtext.Sample {
		t := index.LastPoll()
		if t.IsZero() {
			return nil
		}
		return one(time.Since(t).Seconds())
	})
	m.reg.Gauge("notebridge_embedding_chunks", "Chunks of note text for search by meaning, by state (absent when it is off).", func() []promtext.Sample {
		ms := index.MeaningStatus()
		if ms.State == joplinindex.MeaningOff {
			return nil
		}
		return []promtext.Sample{
			{Labels: []string{"total"}, Value: float64(ms.Chunks)}, {Labels: []string{"done"}, Value: float64(ms.Done)},
			{Labels: []string{"pending"}, Value: float64(ms.Pending)}, {Labels: []string{"refused"}, Value: float64(ms.Refused)},
			{Labels: []string{"notes_pending"}, Value: float64(ms.NotesPending)},
		}
	}, "state")
	m.reg.Gauge("notebridge_sync_state", "The Joplin sync's state as the Joplin container reports it (1 for the current one; absent without --sync-state-dir).", func() []promtext.Sample {
		st, err := sync.Read()
		if err != nil {
			return nil
		}
		return []promtext.Sample{{Labels: []string{st.State}, Value: 1}}
	}, "state")
	m.reg.Gauge("notebridge_sync_consecutive_failures", "Syncs that failed in a row.", func() []promtext.Sample {
		st, err := sync.Read()
		if err != nil {
			return nil
		}
		return one(float64(st.ConsecutiveFailures))
	})
	m.reg.Gauge("notebridge_sync_last_success_timestamp_seconds", "When the last sync succeeded (Unix time).", func() []promtext.Sample {
		st, err := sync.Read()
		if err != nil || st.LastSuccessAt == nil {
			return nil
		}
		return one(float64(st.LastSuccessAt.Unix()))
	})
	m.reg.CounterFunc("notebridge_activity_log_write_failures_total", "Activity log entries that could not be written.", func() []promtext.Sample {
		return one(float64(log.Failures()))
	})
}

// metricsListener binds the internal metrics listener, when
// --metrics-listen is set. It serves /metrics only: no note, no tool call.
func metricsListener(c *config, a *app) (listener, bool, error) {
	if c.MetricsListen == "" {
		return listener{}, false, nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+MetricsPath, &a.metrics.reg)
	ln, err := net.Listen("tcp", c.MetricsListen)
	if err != nil {
		return listener{}, false, err
	}
	a.log.Info("serving metrics", "addr", ln.Addr().String(), "path", MetricsPath)
	return listener{name: "metrics", ln: ln, srv: httpfront.NewServer(c.MetricsListen, mux, c.timeouts())}, true, nil
}
