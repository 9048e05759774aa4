package joplinfake

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// page is the {items, has_more} envelope of every list endpoint.
type page struct {
	Items   []map[string]any `json:"items"`
	HasMore bool             `json:"has_more"`
}

// requestFields is utils/requestFields.ts: the comma-separated ?fields=
// list, or the kind's defaults. When strict, an unknown column fails the way
// the SQL SELECT would.
func requestFields(k *kind, q url.Values, strict bool) ([]string, *apiError) {
	var fields []string
	for _, v := range q["fields"] {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				fields = append(fields, f)
			}
		}
	}
	if len(fields) == 0 {
		return append([]string(nil), k.defaults...), nil
	}
	if strict {
		for _, f := range fields {
			if !k.has(f) {
				return nil, errNoColumn(f)
			}
		}
	}
	return fields, nil
}

// pagination is utils/requestPaginationOptions.ts.
type pagination struct {
	limit   int
	page    int
	orderBy string
	dir     string
	ordered bool // order_by was given
}

func requestPagination(q url.Values) (pagination, *apiError) {
	p := pagination{limit: 100, page: 1, orderBy: "updated_time", dir: "ASC"}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return p, errSyntax(v)
		}
		if n < 0 || n > 100 {
			return p, errBadRequest("Limit out of bond: "+v, framePagination)
		}
		p.limit = n
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return p, errSyntax(v)
		}
		if n > 1 {
			p.page = n
		}
	}
	if v := q.Get("order_by"); v != "" {
		p.orderBy = v
		p.ordered = true
	}
	if v := q.Get("order_dir"); v != "" {
		p.dir = v
	}
	return p, nil
}

// compareValues orders two column values; strings compare case-insensitively
// for ASCII letters, like COLLATE NOCASE.
func compareValues(a, b any) int {
	switch x := a.(type) {
	case string:
		y, _ := b.(string)
		return strings.Compare(asciiLower(x), asciiLower(y))
	case int64:
		y := toNum(b)
		switch {
		case float64(x) < y:
			return -1
		case float64(x) > y:
			return 1
		}
	case float64:
		y := toNum(b)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}

func toNum(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// sqlPage is models/utils/paginatedFeed.ts: a SELECT with ORDER BY
// `order_by` COLLATE NOCASE <dir>, `id` <dir>, LIMIT and OFFSET. has_more is
// "a full page came back", so an exactly-full last page says true.
func sqlPage(k *kind, rows []record, q url.Values) (any, *apiError) {
	fields, aerr := requestFields(k, q, true)
	if aerr != nil {
		return nil, aerr
	}
	p, aerr := requestPagination(q)
	if aerr != nil {
		return nil, aerr
	}
	if !k.has(p.orderBy) {
		return nil, errNoColumn(p.orderBy)
	}
	desc := false
	switch strings.ToUpper(p.dir) {
	case "ASC":
	case "DESC":
		desc = true
	default:
		return nil, errSyntax(p.dir)
	}
	sorted := append([]record(nil), rows...)
	sort.SliceStable(sorted, func(i, j int) bool {
		c := compareValues(sorted[i][p.orderBy], sorted[j][p.orderBy])
		if c == 0 {
			c = strings.Compare(sorted[i].str("id"), sorted[j].str("id"))
		}
		if desc {
			return c > 0
		}
		return c < 0
	})
	out := page{Items: []map[string]any{}}
	start := (p.page - 1) * p.limit
	for i := start; i < len(sorted) && i < start+p.limit; i++ {
		out.Items = append(out.Items, project(sorted[i], fields))
	}
	out.HasMore = len(out.Items) >= p.limit
	return out, nil
}

// collectionPage is utils/collectionToPaginatedResults.ts: pagination over
// an already loaded list, with the same has_more rule as sqlPage. Joplin
// projects the items to the requested fields before sorting them on the one
// order_by key, so the sort only happens when that key is among the fields
// (and, for search, only when order_by was given).
func collectionPage(k *kind, rows []record, q url.Values, strict, sortIt bool) (any, *apiError) {
	fields, aerr := requestFields(k, q, strict)
	if aerr != nil {
		return nil, aerr
	}
	p, aerr := requestPagination(q)
	if aerr != nil {
		return nil, aerr
	}
	sorted := append([]record(nil), rows...)
	if sortIt && contains(fields, p.orderBy) {
		asc := p.dir == "ASC"
		sort.SliceStable(sorted, func(i, j int) bool {
			c := compareValues(sorted[i][p.orderBy], sorted[j][p.orderBy])
			if asc {
				return c < 0
			}
			return c > 0
		})
	}
	out := page{Items: []map[string]any{}}
	start := (p.page - 1) * p.limit
	for i := start; i < len(sorted) && i < start+p.limit; i++ {
		out.Items = append(out.Items, project(sorted[i], fields))
	}
	out.HasMore = len(out.Items) >= p.limit
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// single answers GET /<kind>/:id: the default or requested fields plus
// type_, or 404.
func single(k *kind, r record, q url.Values) (any, *apiError) {
	if r == nil {
		return nil, errNotFound(frameDefaultAction)
	}
	fields, aerr := requestFields(k, q, true)
	if aerr != nil {
		return nil, aerr
	}
	return render(k, r, fields), nil
}
