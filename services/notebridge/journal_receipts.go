package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/notebridge/notebridge/pkg/joplin/receipts"
)

// receiptStores opens every Joplin receipt directory under stateDir (one per
// Joplin endpoint).
func receiptStores(stateDir string) ([]*receipts.Store, error) {
	dirs, err := filepath.Glob(filepath.Join(stateDir, "receipts", "joplin-*"))
	if err != nil {
		return nil, err
	}
	var out []*receipts.Store
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, receipts.Open(d, receipts.DefaultLimits))
		}
	}
	return out, nil
}

// listReceipts prints one line per receipt of reviewed note edits: never
// note text, only ids, counts and progress.
func listReceipts(stateDir string, stdout io.Writer) error {
	stores, err := receiptStores(stateDir)
	if err != nil {
		return err
	}
	n := 0
	for _, s := range stores {
		sums, err := s.List()
		if err != nil {
			return err
		}
		for _, r := range sums {
			state := "incomplete"
			if r.Done {
				state = "done"
			}
			extra := ""
			if r.Undoes != "" {
				extra = " undoes=" + r.Undoes
			}
			if len(r.Skipped) > 0 {
				extra += fmt.Sprintf(" skipped=%d", len(r.Skipped))
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\tnotes=%d written=%d %s%s\n", r.ID, r.Created.Format("2006-01-02T15:04:05Z07:00"), r.Kind, len(r.NoteIDs), r.Written, state, extra)
			n++
		}
	}
	if n == 0 {
		fmt.Fprintf(stdout, "no note-change receipts (%s)\n", filepath.Join(stateDir, "receipts"))
	}
	return nil
}

// showReceipt prints one receipt as JSON: its header, and per note its id,
// whether it was written and its sizes before and after; never note text.
func showReceipt(stateDir, id string, stdout io.Writer) error {
	stores, err := receiptStores(stateDir)
	if err != nil {
		return err
	}
	for _, s := range stores {
		r, ok, err := s.Load(id)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		type noteLine struct {
			ID          string `json:"id"`
			Written     bool   `json:"written"`
			BodyBytes   [2]int `json:"body_bytes"` // before, after
			TitleChange bool   `json:"title_changed"`
			Moved       bool   `json:"moved"`
		}
		notes := []noteLine{}
		for _, n := range r.Notes {
			notes = append(notes, noteLine{ID: n.ID, Written: r.Written[n.ID], BodyBytes: [2]int{len(n.Before.Body), len(n.After.Body)},
				TitleChange: n.Before.Title != n.After.Title, Moved: n.Before.NotebookID != n.After.NotebookID})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{
			"id": r.ID, "kind": r.Kind, "created": r.Created, "undoes": r.Undoes, "skipped": r.Skipped,
			"done": r.Done, "dir": s.Dir(), "notes": notes,
		})
	}
	return fmt.Errorf("no receipt %q under %s", strings.TrimSpace(id), filepath.Join(stateDir, "receipts"))
}
