package joplin

import (
	"context"
	"errors"
	"net/url"
)

// Request is one Data API exchange as a View sees it. Admit may change
// Query (say, to ask for a field it needs); nothing else.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	// Body is the JSON body of a write (nil for reads and for multipart
	// uploads).
	Body []byte
}

// View narrows what the caller of one request sees of Joplin: it refuses
// requests about objects the caller may not see or change, and removes
// such objects from answers. Every request of the client passes it, except
// those made under a context from WholeJoplin. pkg/joplin/scopeview provides
// the notebook-scope View.
type View interface {
	// Admit vets r before it is sent. ErrHidden makes the request answer
	// exactly as Joplin does for a missing object; any other error is the
	// request's.
	Admit(ctx context.Context, r *Request) error
	// Narrow vets the answer of an admitted read and returns what the
	// caller may see of it; ErrHidden as for Admit.
	Narrow(ctx context.Context, r Request, answer []byte) ([]byte, error)
}

// ErrHidden marks an object outside the caller's view: the request answers
// NOT_FOUND with the message of a missing object.
var ErrHidden = errors.New("joplin: outside the caller's view")

// SetView installs v; call it before the client is used (joplinstack.New
// assembles the service's client in one call).
func (c *Client) SetView(v View) { c.view = v }

type wholeKey struct{}

// WholeJoplin returns a context whose requests skip the view: the view's
// own lookups, and the few decisions that must consider every object (a
// tag create that reuses an invisible tag) and reveal nothing of it.
func WholeJoplin(ctx context.Context) context.Context {
	return context.WithValue(ctx, wholeKey{}, true)
}

// viewed reports whether requests under ctx pass the view.
func (c *Client) viewed(ctx context.Context) bool {
	return c.view != nil && ctx.Value(wholeKey{}) == nil
}

// hidden is the error of a request about an object outside the view:
// the very error a 404 from Joplin gives.
func hidden(write bool) error { return statusError(404, nil, write) }

// admit runs the view's Admit on r.
func (c *Client) admit(ctx context.Context, r *request) error {
	vr := Request{Method: r.method, Path: r.path, Query: r.query, Body: r.body}
	if err := c.view.Admit(ctx, &vr); err != nil {
		if errors.Is(err, ErrHidden) {
			return hidden(r.isWrite())
		}
		return err
	}
	r.query = vr.Query
	return nil
}

// narrow runs the view's Narrow on the answer of read r.
func (c *Client) narrow(ctx context.Context, r request, answer []byte) ([]byte, error) {
	out, err := c.view.Narrow(ctx, Request{Method: r.method, Path: r.path, Query: r.query}, answer)
	if errors.Is(err, ErrHidden) {
		return nil, hidden(false)
	}
	return out, err
}
