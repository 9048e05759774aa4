package joplin

import (
	"context"
	"net/url"
	"strconv"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// PageSize is Joplin's largest allowed page.
const PageSize = 100

// Page is one page of a Joplin list endpoint.
type Page[T any] struct {
	Items   []T  `json:"items"`
	HasMore bool `json:"has_more"`
}

// EachPage follows every page of a list endpoint, PageSize items at a
// time, handing each page (numbered from 1) to fn; an error from fn stops
// it. Joplin's has_more alone ends it: a page may come back empty or short
// and still be followed by more, because the client's view (scopeview)
// removes what the caller may not see and keeps Joplin's has_more. (An
// exactly-full last page says has_more; the next one, empty, does not.)
func EachPage[T any](ctx context.Context, c *Client, path string, query url.Values, fn func(page int, items []T) error) error {
	for page := 1; ; page++ {
		q := url.Values{}
		for k, v := range query {
			q[k] = v
		}
		q.Set("limit", strconv.Itoa(PageSize))
		q.Set("page", strconv.Itoa(page))
		var p Page[T]
		if err := c.Get(ctx, path, q, &p); err != nil {
			return err
		}
		if err := fn(page, p.Items); err != nil {
			return err
		}
		if !p.HasMore {
			return nil
		}
	}
}

// ListAll collects every page of a list endpoint, up to maxItems items.
// Exceeding maxItems is an error, never a silent truncation.
func ListAll[T any](ctx context.Context, c *Client, path string, query url.Values, maxItems int) ([]T, error) {
	var all []T
	err := EachPage(ctx, c, path, query, func(_ int, items []T) error {
		all = append(all, items...)
		if len(all) > maxItems {
			return domainerr.New(domainerr.JoplinError, "Joplin holds more than %d objects of this kind; narrow the request", maxItems)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}
