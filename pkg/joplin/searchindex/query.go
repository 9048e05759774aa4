package searchindex

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// Query is a parsed Joplin search query: text terms and filters, joined by
// AND (or by OR with any:1).
type Query struct {
	Any   bool
	Terms []Term
	// Filters are the non-text conditions, in query order.
	Filters []Filter
}

// Term is a word, "a phrase" or prefix*, optionally limited to one field.
type Term struct {
	Tokens []string // lower-cased words of the term, as the tokenizer sees them
	Field  string   // "", "title" or "body"
	Negate bool
}

// Filter is a non-text condition such as tag:, notebook: or created:.
type Filter struct {
	Name   string // tag, notebook, created, updated, due, type, iscompleted, id
	Value  string // the raw value (tag and notebook patterns keep their *)
	Time   int64  // created, updated, due: the threshold in Unix ms
	Negate bool
}

// Unsupported names the filters the index does not hold: a query that uses
// one is answered by Joplin's own search.
var Unsupported = map[string]bool{
	"resource": true, "sourceurl": true, "latitude": true, "longitude": true, "altitude": true,
}

// ErrUnsupported reports a query the index cannot answer (an unsupported
// filter or basic "/" search); callers fall back to Joplin's search.
type ErrUnsupported struct{ What string }

func (e *ErrUnsupported) Error() string { return "the search index cannot answer " + e.What }

var known = map[string]bool{
	"any": true, "title": true, "body": true, "tag": true, "notebook": true, "created": true,
	"updated": true, "due": true, "type": true, "iscompleted": true, "id": true,
}

// Limits on a query, against pathological input.
const (
	MaxQueryBytes = 4000 // the tool schema allows 1,000 characters
	MaxParts      = 64
)

// Parse parses a Joplin query. now anchors relative dates (day-2, ...).
// A malformed query is an INVALID_ARGUMENT error naming the problem; a
// query the index does not support is *ErrUnsupported.
func Parse(query string, now time.Time) (Query, error) {
	var q Query
	if !utf8.ValidString(query) {
		return q, invalid("the query is not valid UTF-8")
	}
	if len(query) > MaxQueryBytes {
		return q, invalid("the query is longer than %d bytes", MaxQueryBytes)
	}
	if strings.HasPrefix(strings.TrimSpace(query), "/") {
		return q, &ErrUnsupported{What: "basic (/) search"}
	}
	parts, err := split(query)
	if err != nil {
		return q, err
	}
	if len(parts) == 0 {
		return q, invalid("the query is empty")
	}
	if len(parts) > MaxParts {
		return q, invalid("the query has more than %d terms and filters", MaxParts)
	}
	for _, p := range parts {
		if err := q.add(p, now); err != nil {
			return Query{}, err
		}
	}
	if len(q.Terms) == 0 && len(q.Filters) == 0 {
		return q, invalid("the query has no term or filter")
	}
	return q, nil
}

func invalid(format string, args ...any) error {
	return domainerr.New(domainerr.InvalidArgument, "query: "+format, args...)
}

// part is one whitespace-separated piece of a query.
type part struct {
	negate bool
	name   string // filter name, lower-cased; "" for a text term
	value  string // unquoted value
	quoted bool
}

// split cuts the query at whitespace outside double quotes. An unbalanced
// quote is an error.
func split(query string) ([]part, error) {
	var parts []part
	var cur strings.Builder
	inQuote, quoted, quoteAt := false, false, 0
	flush := func() {
		if cur.Len() > 0 || quoted {
			parts = append(parts, makePart(cur.String(), quoted))
		}
		cur.Reset()
		quoted = false
	}
	for i, r := range query {
		switch {
		case r == '"':
			inQuote, quoted = !inQuote, true
			quoteAt = i
			cur.WriteRune(r)
		case unicode.IsSpace(r) && !inQuote:
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	if inQuote {
		return nil, invalid("unbalanced double quote at byte %d", quoteAt)
	}
	flush()
	return parts, nil
}

func makePart(s string, quoted bool) part {
	p := part{quoted: quoted}
	if len(s) > 1 && s[0] == '-' {
		p.negate, s = true, s[1:]
	}
	if i := strings.IndexByte(s, ':'); i > 0 && !strings.Contains(s[:i], `"`) {
		if name := strings.ToLower(s[:i]); known[name] || Unsupported[name] {
			p.name, s = name, s[i+1:]
		}
	}
	p.value = strings.ReplaceAll(s, `"`, "")
	return p
}

func (q *Query) add(p part, now time.Time) error {
	if Unsupported[p.name] {
		return &ErrUnsupported{What: "the " + p.name + ": filter"}
	}
	switch p.name {
	case "", "title", "body":
		return q.addTerm(p)
	case "any":
		switch p.value {
		case "0":
			q.Any = false
		case "1":
			q.Any = true
		default:
			return invalid("any: takes 0 or 1, not %q", p.value)
		}
		return nil
	}
	f := Filter{Name: p.name, Value: strings.TrimSpace(p.value), Negate: p.negate}
	if f.Value == "" {
		return invalid("the %s: filter has no value", p.name)
	}
	switch p.name {
	case "created", "updated", "due":
		t, err := parseDate(f.Value, now)
		if err != nil {
			return invalid("%s:%s: %v", p.name, f.Value, err)
		}
		f.Time = t
	case "type":
		f.Value = strings.ToLower(f.Value)
		if f.Value != "note" && f.Value != "todo" {
			return invalid("type: takes note or todo, not %q", f.Value)
		}
	case "iscompleted":
		if f.Value != "0" && f.Value != "1" {
			return invalid("iscompleted: takes 0 or 1, not %q", f.Value)
		}
	}
	q.Filters = append(q.Filters, f)
	return nil
}

func (q *Query) addTerm(p part) error {
	toks := Tokenize(p.value)
	if len(toks) == 0 {
		if p.name != "" {
			return invalid("the %s: filter has no word to search for", p.name)
		}
		// Joplin ignores a term without letters or digits (a lone "*", "-").
		return nil
	}
	q.Terms = append(q.Terms, Term{Tokens: toks, Field: p.name, Negate: p.negate})
	return nil
}

// Tokenize lower-cases s and splits it into runs of letters and digits,
// as SQLite's unicode61 tokenizer does (diacritics are folded by the
// tokenizer itself at match time).
func Tokenize(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r)
	})
}

// parseDate reads Joplin's date filter values: YYYYMMDD, YYYYMM, YYYY,
// or day-N, week-N, month-N, year-N (also +N) relative to now.
func parseDate(v string, now time.Time) (int64, error) {
	loc := now.Location()
	if unit, n, ok := relative(v); ok {
		y, m, d := now.Date()
		var t time.Time
		switch unit {
		case "day":
			t = time.Date(y, m, d+n, 0, 0, 0, 0, loc)
		case "week":
			wd := int(now.Weekday())
			t = time.Date(y, m, d-wd+7*n, 0, 0, 0, 0, loc)
		case "month":
			t = time.Date(y, m+time.Month(n), 1, 0, 0, 0, 0, loc)
		default:
			t = time.Date(y+n, 1, 1, 0, 0, 0, 0, loc)
		}
		return t.UnixMilli(), nil
	}
	layouts := map[int]string{8: "20060102", 6: "200601", 4: "2006"}
	layout, ok := layouts[len(v)]
	if !ok {
		return 0, fmt.Errorf("want YYYYMMDD, YYYYMM, YYYY or day-N, week-N, month-N, year-N")
	}
	t, err := time.ParseInLocation(layout, v, loc)
	if err != nil {
		return 0, fmt.Errorf("not a date in the form %s", strings.NewReplacer("2006", "YYYY", "01", "MM", "02", "DD").Replace(layout))
	}
	return t.UnixMilli(), nil
}

// relative parses unit-N or unit+N.
func relative(v string) (unit string, n int, ok bool) {
	for _, u := range []string{"day", "week", "month", "year"} {
		rest, found := strings.CutPrefix(strings.ToLower(v), u)
		if !found || len(rest) < 2 || (rest[0] != '-' && rest[0] != '+') {
			continue
		}
		var k int
		if _, err := fmt.Sscanf(rest[1:], "%d", &k); err != nil || k > 100_000 || fmt.Sprint(k) != rest[1:] {
			return "", 0, false
		}
		if rest[0] == '-' {
			k = -k
		}
		return u, k, true
	}
	return "", 0, false
}
