package searchindex

import (
	"context"
	"slices"
	"strings"
)

// Hit is one matching note.
type Hit struct {
	RID                 int64 // the note's row id in the index
	ID, Title, ParentID string
	Deleted, Updated    int64
	// Snippet is a short extract with matched terms between ** and **;
	// empty when the query has no text term to rank by.
	Snippet string
	// Attachment is the resource whose OCR text matched, when the text
	// terms matched in an attachment; AttachmentSnippet is its extract.
	Attachment, AttachmentSnippet string
}

// Options shape a search.
type Options struct {
	Limit, Offset  int
	IncludeTrashed bool
	// OnlyNotebooks limits the search to notes in Notebooks (a caller's
	// notebook scope): nothing else is matched, ranked or quoted.
	OnlyNotebooks bool
	Notebooks     []string
	// NoSnippets leaves Hit.Snippet empty (see Snippets): a hybrid search
	// ranks many more hits than it shows.
	NoSnippets bool
}

// Snippet markers around matched terms.
const (
	MarkOpen  = "**"
	MarkClose = "**"
)

// Search runs q. Text terms are ranked by BM25 (title hits weigh 10 times
// body hits); a query of filters only, or any:1 mixing text and filters,
// is ordered by most recently updated. It returns one more hit than
// opts.Limit when there are more.
func (ix *Index) Search(ctx context.Context, q Query, opts Options) ([]Hit, error) {
	sqlText, args := build(q, opts)
	rows, err := ix.db.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return nil, wrap(err, "search the index")
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.RID, &h.ID, &h.Title, &h.ParentID, &h.Deleted, &h.Updated, &h.Snippet, &h.AttachmentSnippet); err != nil {
			return nil, wrap(err, "search the index")
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(err, "search the index")
	}
	rows.Close()
	for i := range hits {
		if err := ix.finishSnippets(ctx, &hits[i]); err != nil {
			return nil, err
		}
	}
	return hits, nil
}

// finishSnippets cleans h's raw snippets and names the attachment whose
// OCR text matched (none when the match is elsewhere).
func (ix *Index) finishSnippets(ctx context.Context, h *Hit) error {
	h.Snippet = cleanSnippet(h.Snippet)
	if !strings.Contains(h.AttachmentSnippet, MarkOpen) {
		h.AttachmentSnippet = ""
		return nil
	}
	var err error
	if h.Attachment, err = ix.matchedAttachment(ctx, h.RID, h.AttachmentSnippet); err != nil {
		return err
	}
	h.AttachmentSnippet = cleanSnippet(h.AttachmentSnippet)
	return nil
}

// build translates q into one SELECT. With any:0 the positive text terms
// form one FTS5 MATCH expression (ranked, with snippets); negative terms
// and filters are conditions on the note row. So does any:1 with positive
// terms only (joined by OR); any:1 with filters or negative terms makes
// every term and filter one condition, all joined by OR.
func build(q Query, opts Options) (string, []any) {
	mixedOr := q.Any && len(q.Filters) > 0
	for _, t := range q.Terms {
		mixedOr = mixedOr || (q.Any && t.Negate)
	}
	var pos []Term
	var conds []string
	var args []any
	for _, t := range q.Terms {
		if !t.Negate && !mixedOr {
			pos = append(pos, t)
			continue
		}
		c := `n.rid IN (SELECT rowid FROM fts WHERE fts MATCH ?)`
		if t.Negate {
			c = `n.rid NOT IN (SELECT rowid FROM fts WHERE fts MATCH ?)`
		}
		conds = append(conds, c)
		args = append(args, matchExpr(t))
	}
	conds, args = filterConds(q, conds, args)
	join := " AND "
	if q.Any {
		join = " OR "
	}
	var where []string
	var whereArgs []any
	if len(conds) > 0 {
		where, whereArgs = append(where, "("+strings.Join(conds, join)+")"), args
	}
	if !opts.IncludeTrashed {
		where = append(where, `n.deleted_time = 0`)
	}
	if opts.OnlyNotebooks {
		c, a := inNotebooks(opts.Notebooks)
		where, whereArgs = append(where, c), append(whereArgs, a...)
	}
	var b strings.Builder
	var all []any
	if len(pos) > 0 {
		exprs := make([]string, len(pos))
		for i, t := range pos {
			exprs[i] = matchExpr(t)
		}
		snip, asnip := snippetSQL, attachmentSnippetSQL
		if opts.NoSnippets {
			snip, asnip = `''`, `''`
		}
		b.WriteString(`SELECT n.rid, n.id, n.title, n.parent_id, n.deleted_time, n.updated_time, ` + snip + `, ` + asnip + ` FROM fts JOIN notes n ON n.rid = fts.rowid WHERE fts MATCH ?`)
		all = append(all, strings.Join(exprs, join))
		for _, w := range where {
			b.WriteString(" AND " + w)
		}
		all = append(all, whereArgs...)
		b.WriteString(` ORDER BY bm25(fts, 10.0, 1.0), n.updated_time DESC`)
	} else {
		b.WriteString(`SELECT n.rid, n.id, n.title, n.parent_id, n.deleted_time, n.updated_time, '', '' FROM notes n`)
		if len(where) > 0 {
			b.WriteString(" WHERE " + strings.Join(where, " AND "))
		}
		all = append(all, whereArgs...)
		b.WriteString(` ORDER BY n.updated_time DESC, n.id`)
	}
	b.WriteString(` LIMIT ? OFFSET ?`)
	all = append(all, opts.Limit+1, opts.Offset)
	return b.String(), all
}

// filterConds appends the conditions of q's filters to conds and args:
// one per filter, but a note is in one notebook, so positive notebook:
// filters are joined by OR into one (unless any:1 joins everything by OR).
// The keyword search and the scope of a search by meaning share it.
func filterConds(q Query, conds []string, args []any) ([]string, []any) {
	var notebooks []string
	var nbArgs []any
	for _, f := range q.Filters {
		c, a := filterSQL(f)
		if f.Name == "notebook" && !f.Negate && !q.Any {
			notebooks, nbArgs = append(notebooks, c), append(nbArgs, a...)
			continue
		}
		conds, args = append(conds, c), append(args, a...)
	}
	if len(notebooks) > 0 {
		conds, args = append(conds, "("+strings.Join(notebooks, " OR ")+")"), append(args, nbArgs...)
	}
	return conds, args
}

// inNotebooks is the condition "the note is in one of notebooks", with
// its arguments.
func inNotebooks(notebooks []string) (string, []any) {
	if len(notebooks) == 0 {
		return `0`, nil
	}
	args := make([]any, len(notebooks))
	for i, id := range notebooks {
		args[i] = id
	}
	return `n.parent_id IN (?` + strings.Repeat(`, ?`, len(notebooks)-1) + `)`, args
}

// snippetSQL is the extract of a hit around its best match.
const snippetSQL = `snippet(fts, -1, '` + MarkOpen + `', '` + MarkClose + `', '…', 12)`

// attachmentSnippetSQL is the extract of a hit's attachment texts around
// their best match (unmarked when the match is elsewhere).
const attachmentSnippetSQL = `snippet(fts, 2, '` + MarkOpen + `', '` + MarkClose + `', '…', 12)`

// rankedMatch is the MATCH expression Search ranks q by; ok is false when
// q has no ranked text term (Search orders by time, without snippets).
func rankedMatch(q Query) (expr string, ok bool) {
	var exprs []string
	for _, t := range q.Terms {
		if t.Negate || (q.Any && len(q.Filters) > 0) {
			return "", false
		}
		exprs = append(exprs, matchExpr(t))
	}
	join := " AND "
	if q.Any {
		join = " OR "
	}
	return strings.Join(exprs, join), len(exprs) > 0
}

// Snippets returns the snippets Search gives the notes rids for q (none
// when q has no ranked text term), by row id: each hit's Snippet, and its
// Attachment and AttachmentSnippet when q's words matched an attachment's
// OCR text; notes q does not match are left out. One statement serves
// all rids: FTS5 sets a query up once (for a prefix term, the doclists of
// all its words merged), and a statement per note repeats that for each.
func (ix *Index) Snippets(ctx context.Context, q Query, rids []int64) (map[int64]Hit, error) {
	out := map[int64]Hit{}
	expr, ok := rankedMatch(q)
	if !ok || len(rids) == 0 {
		return out, nil
	}
	// The rowid bounds let FTS5 skip the doclists outside them; +rowid
	// keeps the IN list a plain filter rather than a query per value.
	args := []any{expr, slices.Min(rids), slices.Max(rids)}
	for _, rid := range rids {
		args = append(args, rid)
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT rowid, `+snippetSQL+`, `+attachmentSnippetSQL+` FROM fts
		WHERE fts MATCH ? AND rowid BETWEEN ? AND ? AND +rowid IN (?`+strings.Repeat(`, ?`, len(rids)-1)+`)`, args...)
	if err != nil {
		return nil, wrap(err, "search snippets")
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.RID, &h.Snippet, &h.AttachmentSnippet); err != nil {
			return nil, wrap(err, "search snippets")
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(err, "search snippets")
	}
	rows.Close()
	for _, h := range hits {
		if err := ix.finishSnippets(ctx, &h); err != nil {
			return nil, err
		}
		out[h.RID] = h
	}
	return out, nil
}

// matchExpr is the FTS5 expression of one term: its tokens as a quoted
// phrase, the last one a prefix (Joplin's Data API appends a wildcard to
// every term), limited to a column for title: and body:.
func matchExpr(t Term) string {
	e := `"` + strings.Join(t.Tokens, " ") + `" *`
	if t.Field != "" {
		e = t.Field + " : " + e
	}
	return e
}

// filterSQL is the condition of one filter on the note row n.
func filterSQL(f Filter) (string, []any) {
	var c string
	var args []any
	switch f.Name {
	case "tag":
		c = `n.id IN (SELECT nt.note_id FROM note_tags nt JOIN tags t ON t.id = nt.tag_id WHERE t.title LIKE ? ESCAPE '\')`
		args = []any{likePattern(f.Value)}
	case "notebook":
		c = `n.parent_id IN (WITH RECURSIVE sub(id) AS (SELECT id FROM folders WHERE title LIKE ? ESCAPE '\'
			UNION SELECT f.id FROM folders f JOIN sub ON f.parent_id = sub.id) SELECT id FROM sub)`
		args = []any{likePattern(f.Value)}
	case "created", "updated":
		c, args = `n.`+f.Name+`_time >= ?`, []any{f.Time}
	case "due":
		c, args = `(n.is_todo = 1 AND n.todo_due >= ?)`, []any{f.Time}
		if f.Negate {
			// -due:X is "due before X", not "not due on or after X".
			return `(n.is_todo = 1 AND n.todo_due > 0 AND n.todo_due < ?)`, args
		}
	case "type":
		c = `n.is_todo = 0`
		if f.Value == "todo" {
			c = `n.is_todo = 1`
		}
	case "iscompleted":
		c = `(n.is_todo = 1 AND n.todo_completed = 0)`
		if f.Value == "1" {
			c = `(n.is_todo = 1 AND n.todo_completed > 0)`
		}
	default: // id
		c, args = `n.id = ?`, []any{f.Value}
	}
	if f.Negate {
		c = "NOT " + c
	}
	return c, args
}

// likePattern turns a title pattern with * wildcards into a LIKE pattern
// (case-insensitive for ASCII, as in Joplin) escaped with \.
func likePattern(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`, `*`, `%`)
	return r.Replace(v)
}
