package searchindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
)

// vectorSQL adds the tables of search by meaning to any index, new or
// existing (no format change, no rebuild): chunks lists each note's
// chunks (body offsets and content hash), embeddings holds one int8
// vector per content hash (vec NULL: the provider refused that chunk). A
// note's chunks are dropped when its text changes or it is removed, so
// "no chunks" means "to be chunked"; embeddings outlive a rebuild of the
// index and are shared by chunks of equal text. notes_trashed lists the
// trashed notes a search by meaning leaves out (see Scope).
var vectorSQL = []string{
	`CREATE TABLE IF NOT EXISTS chunks(rid INTEGER NOT NULL, seq INTEGER NOT NULL, hash BLOB NOT NULL,
		start INTEGER NOT NULL, end INTEGER NOT NULL, PRIMARY KEY(rid, seq)) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash)`,
	`CREATE TABLE IF NOT EXISTS embeddings(hash BLOB PRIMARY KEY, vec BLOB, scale REAL NOT NULL) WITHOUT ROWID`,
	`CREATE TRIGGER IF NOT EXISTS texts_au_chunks AFTER UPDATE ON texts BEGIN DELETE FROM chunks WHERE rid = old.rid; END`,
	`CREATE TRIGGER IF NOT EXISTS texts_ad_chunks AFTER DELETE ON texts BEGIN DELETE FROM chunks WHERE rid = old.rid; END`,
	`CREATE INDEX IF NOT EXISTS notes_trashed ON notes(rid) WHERE deleted_time <> 0`,
}

// noHash is the hash of a chunk with no text: never embedded.
var noHash = make([]byte, 16)

// NoteText is a note's text, by row id.
type NoteText struct {
	RID         int64
	Title, Body string
}

// ChunkRow is one stored chunk of a note.
type ChunkRow struct {
	Seq        int
	Hash       [16]byte
	Start, End int
}

// Vector is the quantised embedding of one content hash; a nil Vec marks
// a chunk the provider refused.
type Vector struct {
	Hash  [16]byte
	Vec   []int8
	Scale float32
}

// Unchunked returns up to limit notes whose chunks are not stored.
func (ix *Index) Unchunked(ctx context.Context, limit int) ([]NoteText, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT t.rid, t.title, t.body FROM texts t
		WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.rid = t.rid) LIMIT ?`, limit)
	if err != nil {
		return nil, wrap(err, "read notes to chunk")
	}
	defer rows.Close()
	var out []NoteText
	for rows.Next() {
		var n NoteText
		if err := rows.Scan(&n.RID, &n.Title, &n.Body); err != nil {
			return nil, wrap(err, "read notes to chunk")
		}
		out = append(out, n)
	}
	return out, wrap(rows.Err(), "read notes to chunk")
}

// PutChunks stores the chunks of note n, cut from n's title and body. When
// the note's text changed since (or the note is gone) nothing is stored
// and ok is false: the next pass chunks the new text.
func (ix *Index) PutChunks(ctx context.Context, n NoteText, chunks []ChunkRow) (ok bool, err error) {
	err = ix.tx(ctx, "store note chunks", func(tx *sql.Tx) error {
		var title, body string
		err := tx.QueryRowContext(ctx, `SELECT title, body FROM texts WHERE rid = ?`, n.RID).Scan(&title, &body)
		if err == sql.ErrNoRows || (err == nil && (title != n.Title || body != n.Body)) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE rid = ?`, n.RID); err != nil {
			return err
		}
		for _, c := range chunks {
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks VALUES (?,?,?,?,?)`, n.RID, c.Seq, c.Hash[:], c.Start, c.End); err != nil {
				return err
			}
		}
		ok = true
		return nil
	})
	return ok, err
}

// Unembedded returns up to limit notes (with their text) holding chunks
// whose hash has no vector yet, and those hashes.
func (ix *Index) Unembedded(ctx context.Context, limit int) ([]NoteText, map[[16]byte]bool, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT DISTINCT c.hash, t.rid, t.title, t.body FROM chunks c JOIN texts t ON t.rid = c.rid
		WHERE c.hash <> ? AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash) LIMIT ?`, noHash, limit)
	if err != nil {
		return nil, nil, wrap(err, "read chunks to embed")
	}
	defer rows.Close()
	var notes []NoteText
	seen := map[int64]bool{}
	hashes := map[[16]byte]bool{}
	for rows.Next() {
		var h []byte
		var n NoteText
		if err := rows.Scan(&h, &n.RID, &n.Title, &n.Body); err != nil {
			return nil, nil, wrap(err, "read chunks to embed")
		}
		hashes[[16]byte(h)] = true
		if !seen[n.RID] {
			seen[n.RID] = true
			notes = append(notes, n)
		}
	}
	return notes, hashes, wrap(rows.Err(), "read chunks to embed")
}

// PutVectors stores vectors and returns the notes holding a chunk of
// one of their hashes.
func (ix *Index) PutVectors(ctx context.Context, vecs []Vector) ([]int64, error) {
	var notes []int64
	err := ix.tx(ctx, "store embeddings", func(tx *sql.Tx) error {
		seen := map[int64]bool{}
		for _, v := range vecs {
			var blob []byte
			if v.Vec != nil {
				blob = int8Bytes(v.Vec)
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO embeddings VALUES (?,?,?)`, v.Hash[:], blob, v.Scale); err != nil {
				return err
			}
			rows, err := tx.QueryContext(ctx, `SELECT rid FROM chunks WHERE hash = ?`, v.Hash[:])
			if err != nil {
				return err
			}
			for rows.Next() {
				var rid int64
				if err := rows.Scan(&rid); err != nil {
					rows.Close()
					return err
				}
				if !seen[rid] {
					seen[rid] = true
					notes = append(notes, rid)
				}
			}
			rows.Close()
		}
		return nil
	})
	return notes, err
}

// ErrBadRow marks a stored row that cannot be what this index wrote (a
// value of the wrong type or size): damage below SQLite's notice, which
// IsCorrupt reports as it reports a damaged file.
var ErrBadRow = errors.New("a stored row has a value of the wrong type or size")

// CopyTo writes a consistent copy of the index to path (0600), which must
// not exist: the damaged index kept for inspection.
func (ix *Index) CopyTo(ctx context.Context, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("copy index: %w", err)
	}
	f.Close()
	if _, err := ix.db.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		os.Remove(path)
		return wrap(err, "copy index")
	}
	return nil
}

// NoteVectors calls fn with every embedded chunk of the notes given (all
// notes when rids is nil).
func (ix *Index) NoteVectors(ctx context.Context, rids []int64, fn func(rid int64, seq int, vec []int8, scale float32)) error {
	q := `SELECT c.rid, c.seq, e.vec, e.scale FROM chunks c JOIN embeddings e ON e.hash = c.hash WHERE e.vec IS NOT NULL`
	var args []any
	if rids != nil {
		if len(rids) == 0 {
			return nil
		}
		q += ` AND c.rid IN (` + strings.TrimSuffix(strings.Repeat("?,", len(rids)), ",") + `)`
		for _, r := range rids {
			args = append(args, r)
		}
	}
	rows, err := ix.db.QueryContext(ctx, q+` ORDER BY c.rid, c.seq`, args...)
	if err != nil {
		return wrap(err, "read embeddings")
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		var seq int
		var blob []byte
		var scale float32
		if err := rows.Scan(&rid, &seq, &blob, &scale); err != nil {
			// The query's own columns: only a value of another type
			// (a text scale, a number for a vector) fails to scan.
			return fmt.Errorf("read embeddings: %w (%v)", ErrBadRow, err)
		}
		fn(rid, seq, bytesInt8(blob), scale)
	}
	return wrap(rows.Err(), "read embeddings")
}

// VectorCounts is the progress of embedding.
type VectorCounts struct {
	Chunks, Done, Failed, Pending int
}

// CountVectors counts chunks with text: embedded, refused, still to do.
func (ix *Index) CountVectors(ctx context.Context) (VectorCounts, error) {
	var c VectorCounts
	err := ix.db.QueryRowContext(ctx, `SELECT count(*),
		coalesce(sum(e.hash IS NOT NULL AND e.vec IS NOT NULL), 0), coalesce(sum(e.hash IS NOT NULL AND e.vec IS NULL), 0)
		FROM chunks c LEFT JOIN embeddings e ON e.hash = c.hash WHERE c.hash <> ?`, noHash).Scan(&c.Chunks, &c.Done, &c.Failed)
	c.Pending = c.Chunks - c.Done - c.Failed
	return c, wrap(err, "count embeddings")
}

// UnchunkedCount is the number of notes whose chunks are not stored.
func (ix *Index) UnchunkedCount(ctx context.Context) (int, error) {
	var n int
	err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM texts t WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.rid = t.rid)`).Scan(&n)
	return n, wrap(err, "count notes to chunk")
}

// ClearVectors removes every embedding (the model changed).
func (ix *Index) ClearVectors(ctx context.Context) error {
	_, err := ix.db.ExecContext(ctx, `DELETE FROM embeddings`)
	return wrap(err, "clear embeddings")
}

// PruneVectors removes the embeddings no chunk refers to any more.
func (ix *Index) PruneVectors(ctx context.Context) error {
	_, err := ix.db.ExecContext(ctx, `DELETE FROM embeddings WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = embeddings.hash)`)
	return wrap(err, "prune embeddings")
}

// NoteRIDs returns the row ids of every note.
func (ix *Index) NoteRIDs(ctx context.Context) (map[int64]bool, error) {
	return ix.ridSet(ctx, `SELECT rid FROM notes`)
}

func (ix *Index) ridSet(ctx context.Context, q string, args ...any) (map[int64]bool, error) {
	rows, err := ix.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrap(err, "read note ids")
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var rid int64
		if err := rows.Scan(&rid); err != nil {
			return nil, wrap(err, "read note ids")
		}
		out[rid] = true
	}
	return out, wrap(rows.Err(), "read note ids")
}

func int8Bytes(v []int8) []byte {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(x)
	}
	return b
}

func bytesInt8(b []byte) []int8 {
	v := make([]int8, len(b))
	for i, x := range b {
		v[i] = int8(x)
	}
	return v
}
