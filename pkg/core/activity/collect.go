package activity

import (
	"context"
	"sync"
)

// Collector gathers the ids one call read or changed. The executor puts
// one in the call's context; the Joplin view adds what it served. It is
// safe for concurrent use (a handler may fan out).
type Collector struct {
	mu                                sync.Mutex
	notes, notebooks, tags, resources set
}

// set is an ordered set of ids.
type set struct {
	ids  []string
	seen map[string]bool
}

func (s *set) add(ids []string) {
	for _, id := range ids {
		if id == "" || s.seen[id] {
			continue
		}
		if s.seen == nil {
			s.seen = map[string]bool{}
		}
		s.seen[id] = true
		s.ids = append(s.ids, id)
	}
}

// Kind names the object an id is of.
type Kind uint8

// The kinds of object a call reads or changes.
const (
	Note Kind = iota
	Notebook
	Tag
	Resource
)

// Add records ids of kind k.
func (c *Collector) Add(k Kind, ids ...string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch k {
	case Note:
		c.notes.add(ids)
	case Notebook:
		c.notebooks.add(ids)
	case Tag:
		c.tags.add(ids)
	case Resource:
		c.resources.add(ids)
	}
}

// Fill copies the collected ids into e.
func (c *Collector) Fill(e *Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.Notes, e.Notebooks, e.Tags, e.Resources = c.notes.ids, c.notebooks.ids, c.tags.ids, c.resources.ids
}

type collectorKey struct{}

// WithCollector returns ctx carrying c.
func WithCollector(ctx context.Context, c *Collector) context.Context {
	return context.WithValue(ctx, collectorKey{}, c)
}

// CollectorFrom returns the Collector of ctx's call, or nil outside a call
// (notebridge's own requests); Add on nil does nothing.
func CollectorFrom(ctx context.Context) *Collector {
	c, _ := ctx.Value(collectorKey{}).(*Collector)
	return c
}

type surfaceKey struct{}

// WithSurface returns ctx marking the calls made under it as arriving on
// surface (SurfaceResources, SurfaceCallTool), for adapters whose surface
// the transport alone does not say.
func WithSurface(ctx context.Context, surface string) context.Context {
	return context.WithValue(ctx, surfaceKey{}, surface)
}

// SurfaceFrom returns the surface WithSurface set, or "".
func SurfaceFrom(ctx context.Context) string {
	s, _ := ctx.Value(surfaceKey{}).(string)
	return s
}
