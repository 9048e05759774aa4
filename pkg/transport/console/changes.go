package console

import (
	"context"
	"encoding/json"
	"github.com/notebridge/notebridge/pkg/core/activity"
	"net/http"
	"time"
)

// Change is one receipt of reviewed note edits, with a readable diff of
// each note: the only note text the console shows besides titles.
type Change struct {
	ID, Kind, Undoes string
	Created          time.Time
	Done             bool
	Notes            []ChangedNote
	// Skipped are the notes an undo left as they were (they had changed).
	Skipped []string
}

// ChangedNote is one note of a change.
type ChangedNote struct {
	ID                      string
	TitleBefore, TitleAfter string
	Moved, Written          bool
	// Diff is the body's unified diff (empty when the body is unchanged).
	Diff string
}

// Changes lists the receipts, newest first.
type Changes interface {
	List(ctx context.Context) ([]Change, error)
}

// changeView is a change with the app that made it and its undo form.
type changeView struct {
	Change
	App      string
	UndoCSRF string
	// UndoneBy is the undo receipt that took it back, if any.
	UndoneBy string
}

func (c *Console) changes(w http.ResponseWriter, req request) {
	c.showChanges(w, req, http.StatusOK, "", "")
}

func (c *Console) showChanges(w http.ResponseWriter, req request, status int, notice, problem string) {
	p := page{Title: "Changes", Notice: notice, Error: problem}
	var list []Change
	if c.cfg.Changes != nil {
		var err error
		if list, err = c.cfg.Changes.List(req.Context()); err != nil && p.Error == "" {
			p.Error = "The changes could not be read: " + err.Error()
		}
	}
	made := c.receiptApps()
	undone := map[string]string{}
	for _, ch := range list {
		if ch.Undoes != "" {
			undone[ch.Undoes] = ch.ID
		}
	}
	views := make([]changeView, 0, len(list))
	for _, ch := range list {
		v := changeView{Change: ch, App: made[ch.ID], UndoneBy: undone[ch.ID]}
		if v.App == "" {
			v.App = "unknown (before the activity log, or the console)"
		}
		if ch.Kind == "apply" && v.UndoneBy == "" {
			v.UndoCSRF = c.csrf(req, "/owner/changes/undo")
		}
		views = append(views, v)
	}
	p.Data = views
	c.show(w, req, status, "changes", "changes", p)
}

// receiptApps maps each receipt to the app whose call made it, from the
// activity log.
func (c *Console) receiptApps() map[string]string {
	out := map[string]string{}
	if c.cfg.Activity == nil {
		return out
	}
	es, err := c.cfg.Activity.Read(activity.Filter{})
	if err != nil {
		return out
	}
	_, names := c.appNames()
	for _, e := range es {
		if e.Receipt != nil && *e.Receipt != "" {
			if _, seen := out[*e.Receipt]; !seen {
				out[*e.Receipt] = appName(e, names)
			}
		}
	}
	return out
}

// undo takes a change back through undo_note_changes, the reviewed undo
// the tools use, as the owner: a note changed since is refused
// (UNDO_CONFLICT) and the reason shown.
func (c *Console) undo(w http.ResponseWriter, req request) {
	args, _ := json.Marshal(map[string]any{"receipt_id": req.PostForm.Get("receipt")})
	raw, derr := c.cfg.Owner.Call(req.Context(), "undo_note_changes", args)
	if derr != nil {
		c.showChanges(w, req, http.StatusConflict, "", "Not undone ("+string(derr.Code)+"): "+derr.Message)
		return
	}
	var out struct {
		ReceiptID string `json:"receipt_id"`
	}
	_ = json.Unmarshal(raw, &out)
	c.showChanges(w, req, http.StatusOK, "Undone; the undo's receipt is "+out.ReceiptID+".", "")
}
