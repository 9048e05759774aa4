// Package promtext keeps counters, histograms and gauges and writes them in
// the Prometheus text exposition format (version 0.0.4). It is the few
// metric kinds notebridge's /metrics needs, without a client library:
// labels are fixed per metric, values are float64, output is sorted so a
// scrape is stable.
package promtext

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ContentType is the text format's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Registry holds metric families. It is safe for concurrent use.
type Registry struct {
	mu       sync.Mutex
	families []family
}

type family interface {
	write(w *bufio.Writer)
}

// Sample is one value of a gauge family, with its label values in the
// family's label order.
type Sample struct {
	Labels []string
	Value  float64
}

// Counter registers a counter family.
func (r *Registry) Counter(name, help string, labels ...string) *Counter {
	c := &Counter{head: head{name, help, "counter", labels}, values: map[string]*counterValue{}}
	r.add(c)
	return c
}

// Histogram registers a histogram family with the given upper bounds
// (ascending; +Inf is implied).
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) *Histogram {
	h := &Histogram{head: head{name, help, "histogram", labels}, buckets: buckets, values: map[string]*histValue{}}
	r.add(h)
	return h
}

// Gauge registers a gauge family whose samples fn returns at each scrape.
func (r *Registry) Gauge(name, help string, fn func() []Sample, labels ...string) {
	r.add(&gauge{head: head{name, help, "gauge", labels}, fn: fn})
}

// CounterFunc registers a counter family whose samples fn returns at each
// scrape (a count kept elsewhere).
func (r *Registry) CounterFunc(name, help string, fn func() []Sample, labels ...string) {
	r.add(&gauge{head: head{name, help, "counter", labels}, fn: fn})
}

func (r *Registry) add(f family) {
	r.mu.Lock()
	r.families = append(r.families, f)
	r.mu.Unlock()
}

// Write writes every family, in registration order.
func (r *Registry) Write(w io.Writer) error {
	r.mu.Lock()
	fams := slices.Clone(r.families)
	r.mu.Unlock()
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		f.write(bw)
	}
	return bw.Flush()
}

// ServeHTTP serves the registry: a Registry is the /metrics handler.
func (r *Registry) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", ContentType)
	_ = r.Write(w)
}

// head is a family's name, help, type and label names.
type head struct {
	name, help, kind string
	labels           []string
}

func (h head) writeHead(w *bufio.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", h.name, escapeHelp(h.help), h.name, h.kind)
}

// labelSet renders label values (with extra pairs appended) as {a="x",…}.
func (h head) labelSet(values []string, extra ...string) string {
	if len(h.labels) == 0 && len(extra) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range h.labels {
		if i > 0 {
			b.WriteByte(',')
		}
		v := ""
		if i < len(values) {
			v = values[i]
		}
		b.WriteString(n + `="` + escapeValue(v) + `"`)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(extra[i] + `="` + escapeValue(extra[i+1]) + `"`)
	}
	b.WriteByte('}')
	return b.String()
}

// key joins label values into a map key (0 never occurs in a label value
// notebridge sets).
func key(values []string) string { return strings.Join(values, "\x00") }

// Counter is a counter family.
type Counter struct {
	head
	mu     sync.Mutex
	values map[string]*counterValue
}

type counterValue struct {
	labels []string
	v      float64
}

// Add adds v (≥ 0) to the counter with these label values.
func (c *Counter) Add(v float64, labels ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key(labels)
	cv, ok := c.values[k]
	if !ok {
		cv = &counterValue{labels: slices.Clone(labels)}
		c.values[k] = cv
	}
	cv.v += v
}

// Inc adds 1.
func (c *Counter) Inc(labels ...string) { c.Add(1, labels...) }

func (c *Counter) write(w *bufio.Writer) {
	c.writeHead(w)
	c.mu.Lock()
	lines := make([]string, 0, len(c.values))
	for _, cv := range c.values {
		lines = append(lines, c.name+c.labelSet(cv.labels)+" "+num(cv.v)+"\n")
	}
	c.mu.Unlock()
	slices.Sort(lines)
	for _, l := range lines {
		w.WriteString(l)
	}
}

// Histogram is a histogram family.
type Histogram struct {
	head
	buckets []float64
	mu      sync.Mutex
	values  map[string]*histValue
}

type histValue struct {
	labels []string
	counts []uint64 // per bucket, not cumulative
	count  uint64
	sum    float64
}

// Observe records v in the histogram with these label values.
func (h *Histogram) Observe(v float64, labels ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := key(labels)
	hv, ok := h.values[k]
	if !ok {
		hv = &histValue{labels: slices.Clone(labels), counts: make([]uint64, len(h.buckets))}
		h.values[k] = hv
	}
	if i, _ := slices.BinarySearch(h.buckets, v); i < len(h.buckets) {
		hv.counts[i]++
	}
	hv.count++
	hv.sum += v
}

func (h *Histogram) write(w *bufio.Writer) {
	h.writeHead(w)
	h.mu.Lock()
	var blocks []string
	for _, hv := range h.values {
		var b strings.Builder
		var cum uint64
		for i, le := range h.buckets {
			cum += hv.counts[i]
			b.WriteString(h.name + "_bucket" + h.labelSet(hv.labels, "le", num(le)) + " " + strconv.FormatUint(cum, 10) + "\n")
		}
		b.WriteString(h.name + "_bucket" + h.labelSet(hv.labels, "le", "+Inf") + " " + strconv.FormatUint(hv.count, 10) + "\n")
		b.WriteString(h.name + "_sum" + h.labelSet(hv.labels) + " " + num(hv.sum) + "\n")
		b.WriteString(h.name + "_count" + h.labelSet(hv.labels) + " " + strconv.FormatUint(hv.count, 10) + "\n")
		blocks = append(blocks, b.String())
	}
	h.mu.Unlock()
	slices.Sort(blocks)
	for _, b := range blocks {
		w.WriteString(b)
	}
}

// gauge is a family read at scrape time.
type gauge struct {
	head
	fn func() []Sample
}

func (g *gauge) write(w *bufio.Writer) {
	samples := g.fn()
	if len(samples) == 0 {
		return
	}
	g.writeHead(w)
	lines := make([]string, 0, len(samples))
	for _, s := range samples {
		lines = append(lines, g.name+g.labelSet(s.Labels)+" "+num(s.Value)+"\n")
	}
	slices.Sort(lines)
	for _, l := range lines {
		w.WriteString(l)
	}
}

func num(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	valueEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeValue(s string) string { return valueEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
