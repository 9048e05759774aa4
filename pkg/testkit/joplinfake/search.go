package joplinfake

import (
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// indexEntry is a note as the search index saw it at the last reindex.
type indexEntry struct {
	title string
	body  string
	seq   int64
}

// routeSearch is routes/search.ts. Notes go through the (stale) search
// index; folders, tags and resources are matched with title LIKE ?, where
// the query's "*" becomes "%", trashed folders included.
func (s *Server) routeSearch(req *request, _, _ string, _ []string) (any, *apiError) {
	if req.method != http.MethodGet {
		return nil, errMethodNotAllowed(frameSearch)
	}
	q := req.query
	query := q.Get("query")
	if query == "" {
		return nil, errBadRequest(`Missing "query" parameter`, frameSearch)
	}
	var k *kind
	var rows []record
	switch typ := q.Get("type"); typ {
	case "", "note":
		return s.searchNotes(query, q)
	case "folder":
		k, rows = folderKind, s.folders.all()
	case "tag":
		k, rows = tagKind, s.tags.all()
	case "resource":
		k, rows = resourceKind, s.resources.all()
	case "master_key":
		return page{Items: []map[string]any{}}, nil
	default:
		return nil, errInternal("Unknown model type: "+typ, frameSearch)
	}
	if _, aerr := requestFields(k, q, true); aerr != nil {
		return nil, aerr
	}
	like := likePattern(strings.ReplaceAll(query, "*", "%"))
	var matched []record
	for _, r := range rows {
		if like.MatchString(asciiLower(r.str("title"))) {
			matched = append(matched, r)
		}
	}
	return collectionPage(k, matched, q, true, q.Get("order_by") != "")
}

// likePattern compiles an SQLite LIKE pattern (% and _ wildcards, ASCII
// case folding, whole-string match) to a regexp over asciiLower'd text.
func likePattern(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for _, r := range asciiLower(p) {
		switch r {
		case '%':
			b.WriteString(`.*`)
		case '_':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

// searchTerm is one word or quoted phrase of a note search query.
type searchTerm struct {
	toks   []string // lower-cased tokens; "*" inside a token is a wildcard
	field  string   // "", "title" or "body"
	negate bool
}

// parseQuery splits a query into terms. It understands quoted phrases,
// a leading "-" (exclude) and the title: and body: filters; any other
// filter is searched as plain text.
func parseQuery(query string) []searchTerm {
	var words []string
	var cur strings.Builder
	inQuote := false
	for _, r := range query {
		switch {
		case r == '"':
			inQuote = !inQuote
			cur.WriteRune(r)
		case unicode.IsSpace(r) && !inQuote:
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	var terms []searchTerm
	for _, w := range words {
		var t searchTerm
		if strings.HasPrefix(w, "-") {
			t.negate, w = true, w[1:]
		}
		for _, f := range []string{"title:", "body:"} {
			if strings.HasPrefix(strings.ToLower(w), f) {
				t.field, w = strings.TrimSuffix(f, ":"), w[len(f):]
			}
		}
		t.toks = tokenize(strings.ReplaceAll(w, `"`, " "), true)
		if len(t.toks) > 0 {
			terms = append(terms, t)
		}
	}
	return terms
}

// tokenize lower-cases s and splits it into runs of letters and digits,
// like SQLite's unicode61 tokenizer. With wildcards, "*" is kept inside
// tokens and tokens made only of "*" are dropped.
func tokenize(s string, wildcards bool) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !(wildcards && r == '*')
	}) {
		if strings.Trim(f, "*") != "" {
			out = append(out, f)
		}
	}
	return out
}

// tokenMatch matches one text token against one query token. Joplin
// appends a wildcard to every term, so the last token of a term matches as
// a prefix.
func tokenMatch(text, q string, prefix bool) bool {
	if strings.Contains(q, "*") {
		parts := strings.Split(q, "*")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		re := "^" + strings.Join(parts, ".*")
		if !prefix {
			re += "$"
		}
		return regexp.MustCompile(re).MatchString(text)
	}
	if prefix {
		return strings.HasPrefix(text, q)
	}
	return text == q
}

// phraseMatch reports whether the query tokens appear consecutively in
// the text tokens.
func phraseMatch(text, q []string) bool {
	for i := 0; i+len(q) <= len(text); i++ {
		ok := true
		for j, qt := range q {
			if !tokenMatch(text[i+j], qt, j == len(q)-1) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// searchNotes runs a note search over the index snapshot, then loads the
// current notes, skipping deleted, trashed and conflicted ones (as
// Note.previews does). Results come in an approximate relevance order
// (title hits first, then most recently updated) unless order_by is given.
func (s *Server) searchNotes(query string, q url.Values) (any, *apiError) {
	if _, aerr := requestFields(noteKind, q, true); aerr != nil {
		return nil, aerr
	}
	terms := parseQuery(query)
	positive := false
	for _, t := range terms {
		positive = positive || !t.negate
	}
	type hit struct {
		note  record
		score int
	}
	var hits []hit
	if positive {
		for id, e := range s.index {
			score, ok := scoreEntry(e, terms)
			if !ok {
				continue
			}
			n := s.notes.get(id)
			if n == nil || n.int("deleted_time") != 0 || n.int("is_conflict") != 0 {
				continue
			}
			hits = append(hits, hit{note: n, score: score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		a, b := hits[i].note.int("user_updated_time"), hits[j].note.int("user_updated_time")
		if a != b {
			return a > b
		}
		return hits[i].note.str("id") < hits[j].note.str("id")
	})
	rows := make([]record, len(hits))
	for i, h := range hits {
		rows[i] = h.note
	}
	return collectionPage(noteKind, rows, q, true, q.Get("order_by") != "")
}

// scoreEntry reports whether an indexed note matches every term, and how
// well (title hits weigh more than body hits).
func scoreEntry(e indexEntry, terms []searchTerm) (int, bool) {
	title, body := tokenize(e.title, false), tokenize(e.body, false)
	score := 0
	for _, t := range terms {
		inTitle := t.field != "body" && phraseMatch(title, t.toks)
		inBody := t.field != "title" && phraseMatch(body, t.toks)
		if t.negate {
			if inTitle || inBody {
				return 0, false
			}
			continue
		}
		if !inTitle && !inBody {
			return 0, false
		}
		if inTitle {
			score += 2
		}
		if inBody {
			score++
		}
	}
	return score, true
}
