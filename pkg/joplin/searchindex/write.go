package searchindex

import (
	"context"
	"database/sql"
)

// PutNotes inserts or replaces notes, tag links included, in one
// transaction.
func (ix *Index) PutNotes(ctx context.Context, notes []Note) error {
	return ix.tx(ctx, "index notes", func(tx *sql.Tx) error {
		up, err := tx.PrepareContext(ctx, `INSERT INTO notes(id, parent_id, title, is_todo, todo_due, todo_completed,
			created_time, updated_time, deleted_time) VALUES (?,?,?,?,?,?,?,?,?)
			ON CONFLICT(id) DO UPDATE SET parent_id=excluded.parent_id, title=excluded.title,
			is_todo=excluded.is_todo, todo_due=excluded.todo_due, todo_completed=excluded.todo_completed,
			created_time=excluded.created_time, updated_time=excluded.updated_time, deleted_time=excluded.deleted_time
			RETURNING rid`)
		if err != nil {
			return err
		}
		defer up.Close()
		// The text is rewritten (and re-tokenized) only when it changed.
		text, err := tx.PrepareContext(ctx, `INSERT INTO texts(rid, title, body, ocr) VALUES (?,?,?,?)
			ON CONFLICT(rid) DO UPDATE SET title=excluded.title, body=excluded.body, ocr=excluded.ocr
			WHERE title IS NOT excluded.title OR body IS NOT excluded.body OR ocr IS NOT excluded.ocr`)
		if err != nil {
			return err
		}
		defer text.Close()
		for _, n := range notes {
			todo := 0
			if n.IsTodo {
				todo = 1
			}
			var rid int64
			if err := up.QueryRowContext(ctx, n.ID, n.ParentID, n.Title, todo, n.TodoDue, n.TodoCompleted,
				n.CreatedTime, n.UpdatedTime, n.Deleted).Scan(&rid); err != nil {
				return err
			}
			if _, err := text.ExecContext(ctx, rid, n.Title, n.Body, joinAttachments(n.Attachments)); err != nil {
				return err
			}
			if err := setAttachments(ctx, tx, n.ID, n.Attachments); err != nil {
				return err
			}
			if n.TagIDs != nil {
				if err := setTags(ctx, tx, n.ID, n.TagIDs); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// DeleteNotes removes notes (deleted for good in Joplin).
func (ix *Index) DeleteNotes(ctx context.Context, ids []string) error {
	return ix.tx(ctx, "remove notes from the index", func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM texts WHERE rid = (SELECT rid FROM notes WHERE id = ?)`, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM note_resources WHERE note_id = ?`, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM notes WHERE id = ?`, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM note_tags WHERE note_id = ?`, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// SetNoteTags replaces the tags of one note.
func (ix *Index) SetNoteTags(ctx context.Context, noteID string, tagIDs []string) error {
	return ix.tx(ctx, "index note tags", func(tx *sql.Tx) error { return setTags(ctx, tx, noteID, tagIDs) })
}

func setTags(ctx context.Context, tx *sql.Tx, noteID string, tagIDs []string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM note_tags WHERE note_id = ?`, noteID); err != nil {
		return err
	}
	for _, t := range tagIDs {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO note_tags VALUES (?, ?)`, noteID, t); err != nil {
			return err
		}
	}
	return nil
}

// ReplaceFolders replaces every notebook.
func (ix *Index) ReplaceFolders(ctx context.Context, folders []Folder) error {
	return ix.tx(ctx, "index notebooks", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM folders`); err != nil {
			return err
		}
		for _, f := range folders {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO folders VALUES (?, ?, ?)`, f.ID, f.ParentID, f.Title); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReplaceTags replaces every tag and, when links is not nil, every tag
// link (note id -> tag ids).
func (ix *Index) ReplaceTags(ctx context.Context, tags []Tag, links map[string][]string) error {
	return ix.tx(ctx, "index tags", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM tags`); err != nil {
			return err
		}
		for _, t := range tags {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO tags VALUES (?, ?)`, t.ID, t.Title); err != nil {
				return err
			}
		}
		if links == nil {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM note_tags`); err != nil {
			return err
		}
		for note, ids := range links {
			for _, t := range ids {
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO note_tags VALUES (?, ?)`, note, t); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Stamp is what the reconciliation pass compares for one note.
type Stamp struct {
	ParentID    string
	UpdatedTime int64
	Deleted     int64
}

// Stamps returns the stamp of every indexed note.
func (ix *Index) Stamps(ctx context.Context) (map[string]Stamp, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT id, parent_id, updated_time, deleted_time FROM notes`)
	if err != nil {
		return nil, wrap(err, "read note stamps")
	}
	defer rows.Close()
	out := map[string]Stamp{}
	for rows.Next() {
		var id string
		var s Stamp
		if err := rows.Scan(&id, &s.ParentID, &s.UpdatedTime, &s.Deleted); err != nil {
			return nil, wrap(err, "read note stamps")
		}
		out[id] = s
	}
	return out, wrap(rows.Err(), "read note stamps")
}

// NoteStamp returns the stamp of one indexed note; ok is false when the
// index does not hold it.
func (ix *Index) NoteStamp(ctx context.Context, id string) (s Stamp, ok bool, err error) {
	err = ix.db.QueryRowContext(ctx, `SELECT parent_id, updated_time, deleted_time FROM notes WHERE id = ?`, id).
		Scan(&s.ParentID, &s.UpdatedTime, &s.Deleted)
	if err == sql.ErrNoRows {
		return Stamp{}, false, nil
	}
	return s, err == nil, wrap(err, "read a note's stamp")
}

// Tags returns every indexed tag.
func (ix *Index) Tags(ctx context.Context) ([]Tag, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT id, title FROM tags`)
	if err != nil {
		return nil, wrap(err, "read tags")
	}
	defer rows.Close()
	var out []Tag
	for rows.Next() {
		var t Tag
		if err := rows.Scan(&t.ID, &t.Title); err != nil {
			return nil, wrap(err, "read tags")
		}
		out = append(out, t)
	}
	return out, wrap(rows.Err(), "read tags")
}

func (ix *Index) tx(ctx context.Context, what string, fn func(*sql.Tx) error) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return wrap(err, what)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return wrap(err, what)
	}
	return wrap(tx.Commit(), what)
}

// UpdateTags replaces what the index holds of the given tags (title, and
// the notes in notesOf, tag id -> note ids) and removes the tags gone
// with their links, in one transaction: the light check's answer to a few
// tags changed among many.
func (ix *Index) UpdateTags(ctx context.Context, tags []Tag, notesOf map[string][]string, gone []string) error {
	return ix.tx(ctx, "index changed tags", func(tx *sql.Tx) error {
		for _, id := range gone {
			if _, err := tx.ExecContext(ctx, `DELETE FROM note_tags WHERE tag_id = ?`, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM tags WHERE id = ?`, id); err != nil {
				return err
			}
		}
		for _, t := range tags {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO tags VALUES (?, ?)`, t.ID, t.Title); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM note_tags WHERE tag_id = ?`, t.ID); err != nil {
				return err
			}
			for _, note := range notesOf[t.ID] {
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO note_tags VALUES (?, ?)`, note, t.ID); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// PutTag inserts or renames one tag.
func (ix *Index) PutTag(ctx context.Context, t Tag) error {
	return ix.tx(ctx, "index tag", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO tags VALUES (?, ?)`, t.ID, t.Title)
		return err
	})
}

// DeleteTag removes one tag and its links.
func (ix *Index) DeleteTag(ctx context.Context, id string) error {
	return ix.tx(ctx, "remove tag from the index", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM note_tags WHERE tag_id = ?`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM tags WHERE id = ?`, id)
		return err
	})
}

// HasTag reports whether the index holds tag id.
func (ix *Index) HasTag(ctx context.Context, id string) (bool, error) {
	var n int
	err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM tags WHERE id = ?`, id).Scan(&n)
	return n > 0, err
}

// LinkTag adds (linked) or removes one note's tag link.
func (ix *Index) LinkTag(ctx context.Context, noteID, tagID string, linked bool) error {
	return ix.tx(ctx, "index tag link", func(tx *sql.Tx) error {
		q := `DELETE FROM note_tags WHERE note_id = ? AND tag_id = ?`
		if linked {
			q = `INSERT OR IGNORE INTO note_tags VALUES (?, ?)`
		}
		_, err := tx.ExecContext(ctx, q, noteID, tagID)
		return err
	})
}
