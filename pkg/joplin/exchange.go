package joplin

import (
	"errors"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// Exchange is one HTTP exchange with Joplin as the metrics count it: the
// method and how it ended, never the path, query or body.
type Exchange struct {
	Method string
	// Outcome is "ok", "unreachable" (no answer at all) or the error code
	// of Joplin's answer.
	Outcome string
}

// OnExchange has fn told of every exchange with Joplin, retries included;
// call it before c is used. fn runs in the caller's goroutine.
func (c *Client) OnExchange(fn func(Exchange)) { c.exchanges = append(c.exchanges, fn) }

// exchanged tells the OnExchange functions how one exchange ended.
func (c *Client) exchanged(method string, err error) {
	if len(c.exchanges) == 0 {
		return
	}
	x := Exchange{Method: method, Outcome: "ok"}
	var unreachable *unreachableError
	switch {
	case err == nil:
	case errors.As(err, &unreachable):
		x.Outcome = "unreachable"
	default:
		x.Outcome = string(domainerr.JoplinError)
		if de, ok := domainerr.As(err); ok {
			x.Outcome = string(de.Code)
		}
	}
	for _, fn := range c.exchanges {
		fn(x)
	}
}
