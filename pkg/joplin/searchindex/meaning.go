package searchindex

import (
	"context"
	"database/sql"
	"strings"
)

// MeaningText is what a search by meaning embeds for q: the words of its
// positive text terms, in order (filters and exclusions apply as
// conditions, see Scope).
func (q Query) MeaningText() string {
	var words []string
	for _, t := range q.Terms {
		if !t.Negate {
			words = append(words, t.Tokens...)
		}
	}
	return strings.Join(words, " ")
}

// Scope returns which notes a search by meaning may return for q: those
// its filters and exclusions accept (joined by AND, or OR with any:1),
// trashed ones only when opts.IncludeTrashed, and only notes of
// opts.Notebooks when opts.OnlyNotebooks (a caller's notebook scope); nil
// when every note may be returned. It reads the note rows once.
func (ix *Index) Scope(ctx context.Context, q Query, opts Options) (func(rid int64) bool, error) {
	var conds []string
	var args []any
	for _, t := range q.Terms {
		if t.Negate {
			conds, args = append(conds, `n.rid NOT IN (SELECT rowid FROM fts WHERE fts MATCH ?)`), append(args, matchExpr(t))
		}
	}
	conds, args = filterConds(q, conds, args)
	if len(conds) == 0 && !opts.OnlyNotebooks {
		if opts.IncludeTrashed {
			return nil, nil
		}
		// notes_trashed makes this a read of the trash, not of every note.
		trashed, err := ix.ridSet(ctx, `SELECT rid FROM notes WHERE deleted_time <> 0`)
		if err != nil || len(trashed) == 0 {
			return nil, err
		}
		return func(rid int64) bool { return !trashed[rid] }, nil
	}
	join := " AND "
	if q.Any {
		join = " OR "
	}
	where := "1"
	if len(conds) > 0 {
		where = "(" + strings.Join(conds, join) + ")"
	}
	if !opts.IncludeTrashed {
		where += ` AND n.deleted_time = 0`
	}
	if opts.OnlyNotebooks {
		c, a := inNotebooks(opts.Notebooks)
		where, args = where+` AND `+c, append(args, a...)
	}
	allowed, err := ix.ridSet(ctx, `SELECT n.rid FROM notes n WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	return func(rid int64) bool { return allowed[rid] }, nil
}

// ChunkRef names one chunk of a note by row id.
type ChunkRef struct {
	RID int64
	Seq int
}

// snippetWords bounds a chunk snippet.
const snippetWords = 30

// ChunkHits returns the notes of refs, in order, each with an extract of
// the chunk named as its snippet. Notes gone from the index are left out.
func (ix *Index) ChunkHits(ctx context.Context, refs []ChunkRef) ([]Hit, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	stmt, err := ix.db.PrepareContext(ctx, `SELECT n.id, n.title, n.parent_id, n.deleted_time, n.updated_time, t.body, c.start, c.end
		FROM notes n JOIN texts t ON t.rid = n.rid LEFT JOIN chunks c ON c.rid = n.rid AND c.seq = ?
		WHERE n.rid = ?`)
	if err != nil {
		return nil, wrap(err, "read search hits")
	}
	defer stmt.Close()
	var hits []Hit
	for _, r := range refs {
		h := Hit{RID: r.RID}
		var body string
		var start, end sql.NullInt64
		err := stmt.QueryRowContext(ctx, r.Seq, r.RID).Scan(&h.ID, &h.Title, &h.ParentID, &h.Deleted, &h.Updated, &body, &start, &end)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return nil, wrap(err, "read search hits")
		}
		s, e := int(start.Int64), int(end.Int64)
		if !start.Valid || s < 0 || e > len(body) || s > e {
			s, e = 0, len(body) // the chunk changed since: the body's start
		}
		h.Snippet = extract(body[s:e])
		hits = append(hits, h)
	}
	return hits, nil
}

// extract is the first snippetWords words of text, whitespace collapsed.
func extract(text string) string {
	words := strings.Fields(text)
	if len(words) > snippetWords {
		return strings.Join(words[:snippetWords], " ") + " …"
	}
	return strings.Join(words, " ")
}
