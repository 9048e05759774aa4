// Package searchindex is the embedded full-text index of the Joplin notes:
// an SQLite database (modernc.org/sqlite, pure Go) with an FTS5 table over
// note titles and bodies, plus the notebooks, tags and tag links that the
// notebook: and tag: filters need. It knows nothing of Joplin's API: the
// caller feeds it (see pkg/joplin/joplinindex).
package searchindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// FormatVersion is stored with the index; an index of another version is
// rebuilt.
const FormatVersion = 2

// ErrRebuild says the index file must be rebuilt: it is corrupt or of
// another format version. Open has already moved it aside.
var ErrRebuild = errors.New("search index needs a rebuild")

// Index is an open index. It is safe for concurrent use.
type Index struct {
	db   *sql.DB
	path string
}

// Note is one note as the index holds it.
type Note struct {
	ID, ParentID, Title, Body         string
	IsTodo                            bool
	TodoDue, TodoCompleted            int64
	CreatedTime, UpdatedTime, Deleted int64
	TagIDs                            []string
	// Attachments are the texts Joplin extracted (OCR) from the resources
	// the note links to; searched with the note.
	Attachments []Attachment
}

// Attachment is the OCR text of one resource a note links to.
type Attachment struct {
	ID          string
	UpdatedTime int64
	Text        string
}

// Folder is one notebook.
type Folder struct{ ID, ParentID, Title string }

// Tag is one tag.
type Tag struct{ ID, Title string }

// schemaSQL: notes holds the metadata the filters read (narrow rows, so
// that filtering thousands of matches stays cheap); texts holds titles and
// bodies, the external content of the fts table.
var schemaSQL = []string{
	`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
	`CREATE TABLE notes(rid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, parent_id TEXT NOT NULL,
		title TEXT NOT NULL, is_todo INTEGER NOT NULL, todo_due INTEGER NOT NULL,
		todo_completed INTEGER NOT NULL, created_time INTEGER NOT NULL, updated_time INTEGER NOT NULL,
		deleted_time INTEGER NOT NULL)`,
	`CREATE INDEX notes_parent ON notes(parent_id)`,
	`CREATE TABLE texts(rid INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL, ocr TEXT NOT NULL)`,
	`CREATE VIRTUAL TABLE fts USING fts5(title, body, ocr, content='texts', content_rowid='rid',
		tokenize='unicode61 remove_diacritics 2')`,
	`CREATE TRIGGER texts_ai AFTER INSERT ON texts BEGIN
		INSERT INTO fts(rowid, title, body, ocr) VALUES (new.rid, new.title, new.body, new.ocr); END`,
	`CREATE TRIGGER texts_ad AFTER DELETE ON texts BEGIN
		INSERT INTO fts(fts, rowid, title, body, ocr) VALUES ('delete', old.rid, old.title, old.body, old.ocr); END`,
	`CREATE TRIGGER texts_au AFTER UPDATE ON texts BEGIN
		INSERT INTO fts(fts, rowid, title, body, ocr) VALUES ('delete', old.rid, old.title, old.body, old.ocr);
		INSERT INTO fts(rowid, title, body, ocr) VALUES (new.rid, new.title, new.body, new.ocr); END`,
	`CREATE TABLE note_resources(note_id TEXT NOT NULL, resource_id TEXT NOT NULL, updated_time INTEGER NOT NULL,
		PRIMARY KEY(note_id, resource_id)) WITHOUT ROWID`,
	`CREATE INDEX note_resources_resource ON note_resources(resource_id)`,
	`CREATE TABLE folders(id TEXT PRIMARY KEY, parent_id TEXT NOT NULL, title TEXT NOT NULL)`,
	`CREATE TABLE tags(id TEXT PRIMARY KEY, title TEXT NOT NULL)`,
	`CREATE TABLE note_tags(note_id TEXT NOT NULL, tag_id TEXT NOT NULL, PRIMARY KEY(note_id, tag_id)) WITHOUT ROWID`,
	`CREATE INDEX note_tags_tag ON note_tags(tag_id)`,
}

// Open opens the index at path, creating an empty one when there is
// none. A corrupt file or one of another format version is renamed to
// path+".bad" and an empty index is created in its place: Open then
// returns the new index and an error wrapping ErrRebuild.
func Open(ctx context.Context, path string) (*Index, error) {
	ix, err := open(ctx, path)
	if err == nil {
		return ix, nil
	}
	if !errors.Is(err, ErrRebuild) {
		return nil, err
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	if rerr := os.Rename(path, path+".bad"); rerr != nil && !os.IsNotExist(rerr) {
		return nil, fmt.Errorf("move the old search index aside: %w", rerr)
	}
	ix, err2 := open(ctx, path)
	if err2 != nil {
		return nil, err2
	}
	return ix, err
}

func open(ctx context.Context, path string) (*Index, error) {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		if err := createFile(ctx, path); err != nil {
			return nil, err
		}
	}
	// Indexes made before they were created private were 0644.
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("open search index: %w", err)
	}
	ix, err := openDB(path)
	if err != nil {
		return nil, err
	}
	err = ix.check(ctx)
	for _, s := range vectorSQL {
		if err == nil {
			_, err = ix.db.ExecContext(ctx, s)
			err = wrap(err, "add the tables of search by meaning")
		}
	}
	if err != nil {
		ix.db.Close()
		return nil, err
	}
	return ix, nil
}

func openDB(path string) (*Index, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, fmt.Errorf("open search index: %w", err)
	}
	db.SetMaxOpenConns(1)
	return &Index{db: db, path: path}, nil
}

// createFile makes an empty index at path: private (0600; SQLite gives
// its -wal and -shm files the same mode), built under a temporary name
// and renamed into place once its schema is committed, so a process that
// stops half-way never leaves a partial index for the next one to set
// aside.
func createFile(ctx context.Context, path string) error {
	tmp := path + ".new"
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(tmp + suffix)
	}
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("create search index: %w", err)
	}
	f.Close()
	ix, err := openDB(tmp)
	if err != nil {
		return err
	}
	// 16 KiB pages hold several 2 KB notes each: 4 KiB pages waste about
	// half of every page on notes of that size. Incremental auto-vacuum
	// lets Optimize hand back the pages that merging the full-text
	// segments frees.
	if _, err = ix.db.ExecContext(ctx, `PRAGMA page_size=16384; PRAGMA auto_vacuum=INCREMENTAL`); err == nil {
		_, err = ix.db.ExecContext(ctx, `PRAGMA journal_mode=WAL`)
	}
	if err == nil {
		err = ix.create(ctx)
	}
	if cerr := ix.db.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("create search index: %w", cerr)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func (ix *Index) create(ctx context.Context) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create search index: %w", err)
	}
	defer tx.Rollback()
	for _, s := range schemaSQL {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("create search index: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta VALUES ('format', ?)`, strconv.Itoa(FormatVersion)); err != nil {
		return fmt.Errorf("create search index: %w", err)
	}
	return tx.Commit()
}

// check verifies the file's integrity and format version.
func (ix *Index) check(ctx context.Context) error {
	var res string
	if err := ix.db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&res); err != nil {
		return fmt.Errorf("%w: integrity check: %v", ErrRebuild, err)
	}
	if res != "ok" {
		return fmt.Errorf("%w: integrity check: %s", ErrRebuild, res)
	}
	v, err := ix.Meta(ctx, "format")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRebuild, err)
	}
	if v != strconv.Itoa(FormatVersion) {
		return fmt.Errorf("%w: format version %q, want %d", ErrRebuild, v, FormatVersion)
	}
	return nil
}

// Close closes the index.
func (ix *Index) Close() error { return ix.db.Close() }

// Path is the index file.
func (ix *Index) Path() string { return ix.path }

// Meta returns the value stored under key, "" when there is none.
func (ix *Index) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read search index meta %s: %w", key, err)
	}
	return v, nil
}

// SetMeta stores value under key.
func (ix *Index) SetMeta(ctx context.Context, key, value string) error {
	_, err := ix.db.ExecContext(ctx, `INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
	return wrap(err, "write search index meta")
}

// Count returns how many notes the index holds, trashed included.
func (ix *Index) Count(ctx context.Context) (int, error) {
	var n int
	err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM notes`).Scan(&n)
	return n, wrap(err, "count indexed notes")
}

// CountIn returns how many notes of the given notebooks the index holds,
// trashed included.
func (ix *Index) CountIn(ctx context.Context, notebooks []string) (int, error) {
	cond, args := inNotebooks(notebooks)
	var n int
	err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM notes n WHERE `+cond, args...).Scan(&n)
	return n, wrap(err, "count indexed notes")
}

// Reset empties the index (for a rebuild), keeping its format and the
// embeddings (keyed by content, they stay valid).
func (ix *Index) Reset(ctx context.Context) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return wrap(err, "reset search index")
	}
	defer tx.Rollback()
	for _, s := range []string{`DELETE FROM texts`, `DELETE FROM notes`, `DELETE FROM folders`, `DELETE FROM tags`, `DELETE FROM note_tags`,
		`DELETE FROM note_resources`, `DELETE FROM meta WHERE key <> 'format' AND key NOT LIKE 'embed_%'`} {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return wrap(err, "reset search index")
		}
	}
	return wrap(tx.Commit(), "reset search index")
}

// Optimize merges the full-text index segments, frees the pages that
// leaves unused and checkpoints the write-ahead log, after a build.
func (ix *Index) Optimize(ctx context.Context) error {
	for _, s := range []string{`INSERT INTO fts(fts) VALUES ('optimize')`, `PRAGMA incremental_vacuum`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := ix.db.ExecContext(ctx, s); err != nil {
			return wrap(err, "optimize search index")
		}
	}
	return nil
}

// IsDiskFull reports whether err is SQLite's "database or disk is full".
func IsDiskFull(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL
}

// IsCorrupt reports whether err says the database file is damaged.
func IsCorrupt(err error) bool {
	if errors.Is(err, ErrBadRow) {
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_CORRUPT || c == sqlite3.SQLITE_NOTADB
}

func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
