package joplin

import (
	"context"
	"net/url"
	"strconv"

	"github.com/notebridge/notebridge/pkg/domainerr"
)

// PageSize is Joplin's largest allowed page.
const PageSize = 100

// Page is one page of a Joplin list endpoint.
type Page[T any] struct {
	Items   []T  `json:"items"`
	HasMore bool `json:"has_more"`
}

// ListAll follows every page of a list endpoint, up to maxItems items. It
// copes with Joplin reporting has_more on an exactly-full last page (the
// next page is then empty). Exceeding maxItems is an error, never a silent
// truncation.
func ListAll[T any](ctx context.Context, c *Client, path string, query url.Values, maxItems int) ([]T, error) {
	var all []T
	for page := 1; ; page++ {
		q := url.Values{}
		for k, v := range query {
			q[k] = v
		}
		q.Set("limit", strconv.Itoa(PageSize))
		q.Set("page", strconv.Itoa(page))
		var p Page[T]
		if err := c.Get(ctx, path, q, &p); err != nil {
			return nil, err
		}
		all = append(all, p.Items...)
		if len(all) > maxItems {
			return nil, domainerr.New(domainerr.JoplinError, "Joplin holds more than %d objects of this kind; narrow the request", maxItems)
		}
		if !p.HasMore || len(p.Items) == 0 {
			return all, nil
		}
	}
}
