package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/core/writejournal"
)

// row is one line of a status section.
type row struct{ Key, Value string }

// statusView is the status page: what joplin_status says as the owner
// (Joplin reachable, the sync, the search index and search by meaning),
// and the uncertain writes of the journal.
type statusView struct {
	Joplin, Sync, Index []row
	Uncertain           []writejournal.Entry
	JournalError        string
}

func (c *Console) status(w http.ResponseWriter, req request) {
	p := page{Title: "Status"}
	var v statusView
	raw, derr := c.cfg.Owner.Call(req.Context(), "joplin_status", json.RawMessage(`{}`))
	if derr != nil {
		p.Error = "Joplin's status could not be read (" + string(derr.Code) + "): " + derr.Message
	} else {
		var st map[string]any
		if err := json.Unmarshal(raw, &st); err == nil {
			sync, index := st["sync"], st["index"]
			delete(st, "sync")
			delete(st, "index")
			delete(st, "notebooks") // the owner's: every notebook
			v.Joplin, v.Sync, v.Index = rows("", st), rows("", sync), rows("", index)
		}
	}
	if c.cfg.Journal != nil {
		es, err := c.cfg.Journal()
		if err != nil {
			v.JournalError = err.Error()
		}
		for i := len(es) - 1; i >= 0; i-- {
			v.Uncertain = append(v.Uncertain, es[i])
		}
	}
	p.Data = v
	c.show(w, req, http.StatusOK, "status", "status", p)
}

// rows flattens a decoded JSON value into key/value lines, keys sorted,
// nested keys joined by dots.
func rows(prefix string, v any) []row {
	switch t := v.(type) {
	case nil:
		if prefix == "" {
			return nil
		}
		return []row{{prefix, "none"}}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []row
		for _, k := range keys {
			name := k
			if prefix != "" {
				name = prefix + "." + k
			}
			out = append(out, rows(name, t[k])...)
		}
		return out
	case []any:
		parts := make([]string, 0, len(t))
		for _, e := range t {
			b, _ := json.Marshal(e)
			parts = append(parts, strings.Trim(string(b), `"`))
		}
		return []row{{prefix, strings.Join(parts, ", ")}}
	case float64:
		return []row{{prefix, strconv.FormatFloat(t, 'f', -1, 64)}}
	default:
		return []row{{prefix, fmt.Sprint(t)}}
	}
}

// when shows a time in UTC to the second; "never" for the zero time.
func when(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}
