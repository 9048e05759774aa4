package promtext

import (
	"strings"
	"testing"
)

func TestWriteFormat(t *testing.T) {
	var r Registry
	c := r.Counter("calls_total", "Calls.", "tool", "outcome")
	c.Inc("get_note", "ok")
	c.Inc("get_note", "ok")
	c.Inc("odd\"name\n", "NOT_FOUND")
	h := r.Histogram("latency_seconds", "Latency.", []float64{0.01, 0.1}, "tool")
	h.Observe(0.005, "get_note")
	h.Observe(0.05, "get_note")
	h.Observe(5, "get_note")
	r.Gauge("lag_seconds", "Lag.", func() []Sample { return []Sample{{Value: 1.5}} })
	r.Gauge("absent", "Nothing.", func() []Sample { return nil })
	var b strings.Builder
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	want := `# HELP calls_total Calls.
# TYPE calls_total counter
calls_total{tool="get_note",outcome="ok"} 2
calls_total{tool="odd\"name\n",outcome="NOT_FOUND"} 1
# HELP latency_seconds Latency.
# TYPE latency_seconds histogram
latency_seconds_bucket{tool="get_note",le="0.01"} 1
latency_seconds_bucket{tool="get_note",le="0.1"} 2
latency_seconds_bucket{tool="get_note",le="+Inf"} 3
latency_seconds_sum{tool="get_note"} 5.055
latency_seconds_count{tool="get_note"} 3
# HELP lag_seconds Lag.
# TYPE lag_seconds gauge
lag_seconds 1.5
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
