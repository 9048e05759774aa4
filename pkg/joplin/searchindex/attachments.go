package searchindex

import (
	"context"
	"database/sql"
	"regexp"
	"strings"
	"unicode"
)

// A note's attachment texts are stored as one fts column, each text after
// a separator line naming its resource: attachmentSep, the id, "\n".
const attachmentSep = "\n\x1e"

func joinAttachments(as []Attachment) string {
	var b strings.Builder
	for _, a := range as {
		if a.Text == "" {
			continue
		}
		b.WriteString(attachmentSep + a.ID + "\n")
		b.WriteString(a.Text)
	}
	return b.String()
}

// setAttachments records which resources a note links to, with their
// update times, for the reconciliation pass.
func setAttachments(ctx context.Context, tx *sql.Tx, noteID string, as []Attachment) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM note_resources WHERE note_id = ?`, noteID); err != nil {
		return err
	}
	for _, a := range as {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO note_resources VALUES (?,?,?)`, noteID, a.ID, a.UpdatedTime); err != nil {
			return err
		}
	}
	return nil
}

// AttachmentStamps returns the update time recorded for every resource an
// indexed note links to.
func (ix *Index) AttachmentStamps(ctx context.Context) (map[string]int64, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT resource_id, MAX(updated_time) FROM note_resources GROUP BY resource_id`)
	if err != nil {
		return nil, wrap(err, "read attachment stamps")
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var t int64
		if err := rows.Scan(&id, &t); err != nil {
			return nil, wrap(err, "read attachment stamps")
		}
		out[id] = t
	}
	return out, wrap(rows.Err(), "read attachment stamps")
}

// NotesLinking returns the indexed notes that link to resource id.
func (ix *Index) NotesLinking(ctx context.Context, id string) ([]string, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT note_id FROM note_resources WHERE resource_id = ?`, id)
	if err != nil {
		return nil, wrap(err, "read attachment links")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, wrap(err, "read attachment links")
		}
		out = append(out, n)
	}
	return out, wrap(rows.Err(), "read attachment links")
}

// matchedAttachment names the attachment of note rid whose text holds the
// terms snippet marks, or "".
func (ix *Index) matchedAttachment(ctx context.Context, rid int64, snippet string) (string, error) {
	var ocr string
	if err := ix.db.QueryRowContext(ctx, `SELECT ocr FROM texts WHERE rid = ?`, rid).Scan(&ocr); err != nil {
		return "", wrap(err, "read attachment text")
	}
	terms := markedTerms(snippet)
	for _, part := range strings.Split(ocr, attachmentSep)[1:] {
		resID, text, _ := strings.Cut(part, "\n")
		words := map[string]bool{}
		for _, w := range Tokenize(text) {
			words[w] = true
		}
		for _, t := range terms {
			for w := range words {
				if strings.HasPrefix(w, t) {
					return resID, nil
				}
			}
		}
	}
	return "", nil
}

// markedTerms returns the tokens snippet marks as matched.
func markedTerms(snippet string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(snippet, MarkOpen)
		if !ok {
			return out
		}
		term, after, ok := strings.Cut(rest, MarkClose)
		if !ok {
			return out
		}
		out = append(out, Tokenize(strings.TrimFunc(term, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))...)
		snippet = after
	}
}

// separatorLine matches the separator lines of the attachments column.
var separatorLine = regexp.MustCompile("\n?\x1e?[0-9a-f]{32}\n")

// cleanSnippet removes the separator lines from a snippet.
func cleanSnippet(s string) string {
	if !strings.Contains(s, "\x1e") {
		return s
	}
	return strings.TrimSpace(separatorLine.ReplaceAllString(s, " "))
}
