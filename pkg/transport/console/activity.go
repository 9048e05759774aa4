package console

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
)

// ActivityReader reads the activity log (pkg/core/activity), newest
// first.
type ActivityReader interface {
	Read(activity.Filter) ([]activity.Entry, error)
}

// feedLimit bounds the entries one page shows.
const feedLimit = 200

// calls24h counts the calls of the last 24 hours by credential.
func (c *Console) calls24h() map[string]int {
	out := map[string]int{}
	if c.cfg.Activity == nil {
		return out
	}
	es, err := c.cfg.Activity.Read(activity.Filter{Since: c.cfg.Now().Add(-24 * time.Hour)})
	if err != nil {
		return out
	}
	for _, e := range es {
		out[e.Credential]++
	}
	return out
}

// grantCalls counts the calls of grant id in the last 24 hours.
func (c *Console) grantCalls(id string) int {
	if c.cfg.Activity == nil {
		return 0
	}
	es, err := c.cfg.Activity.Read(activity.Filter{Since: c.cfg.Now().Add(-24 * time.Hour), Grant: id})
	if err != nil {
		return 0
	}
	return len(es)
}

// allSel selects every notebook, to list the whole tree.
var allSel = notebookscope.All()

// feedEntry is one entry as the feed shows it.
type feedEntry struct {
	activity.Entry
	App     string
	Notes   []titled
	Folders []string
}

// titled is a note named by its current title.
type titled struct {
	ID, Title string
	Gone      bool
}

// spans are the feed's time filters.
var spans = []struct {
	Key, Label string
	D          time.Duration
}{
	{"1h", "last hour", time.Hour}, {"24h", "last 24 hours", 24 * time.Hour},
	{"7d", "last 7 days", 7 * 24 * time.Hour}, {"30d", "last 30 days", 30 * 24 * time.Hour}, {"", "all", 0},
}

func (c *Console) activity(w http.ResponseWriter, req request) {
	q := req.URL.Query()
	f := activity.Filter{Grant: q.Get("app"), Tool: q.Get("tool"), Notebook: q.Get("notebook"), Limit: feedLimit}
	for _, s := range spans {
		if s.Key == q.Get("since") && s.D > 0 {
			f.Since = c.cfg.Now().Add(-s.D)
		}
	}
	p := page{Title: "Activity"}
	var entries []activity.Entry
	if c.cfg.Activity == nil {
		p.Error = "The activity log is off."
	} else if es, err := c.cfg.Activity.Read(f); err != nil {
		p.Error = "The activity log could not be read: " + err.Error()
	} else {
		entries = es
	}
	titles := c.titles(req.Context(), entries)
	tree, _ := c.cfg.Notebooks(req.Context())
	apps, names := c.appNames()
	feed := make([]feedEntry, 0, len(entries))
	for _, e := range entries {
		fe := feedEntry{Entry: e, App: appName(e, names)}
		for _, id := range e.Notes {
			fe.Notes = append(fe.Notes, titles[id])
		}
		for _, id := range e.Notebooks {
			name := id
			if tree != nil && tree.Has(id) {
				name = tree.PathOf(id)
			}
			fe.Folders = append(fe.Folders, name)
		}
		feed = append(feed, fe)
	}
	var folders []treeNode
	if tree != nil {
		folders = flatten(markTree(tree, "", tree.Resolve(allSel), tree.Resolve(allSel), false, 0), "")
	}
	p.Data = struct {
		Entries          []feedEntry
		Apps             []appView
		Tools            []string
		Folders          []treeNode
		Spans            any
		App, Tool, Since string
		Notebook         string
	}{feed, apps, c.tools(), folders, spans, f.Grant, f.Tool, q.Get("since"), f.Notebook}
	c.show(w, req, http.StatusOK, "activity", "activity", p)
}

// appNames lists the OAuth apps (for the feed's filter) and maps each
// credential of the log to the name the console shows for it.
func (c *Console) appNames() ([]appView, map[string]string) {
	var apps []appView
	names := map[string]string{}
	if g, err := c.openGrants(); err == nil && g != nil {
		if grants, err := g.Grants(); err == nil {
			for _, gi := range grants {
				apps = append(apps, appView{GrantID: gi.ID, ClientName: displayName(gi.ClientName)})
				names["oauth:"+gi.ID] = displayName(gi.ClientName)
			}
		}
	}
	for _, t := range c.cfg.Tokens {
		names[t.Credential] = t.Name
	}
	return apps, names
}

// appName is who made a call, as the feed names it: an OAuth client by
// the name it claimed, a static token by its name, else the credential
// (stdio, console, a revoked grant).
func appName(e activity.Entry, names map[string]string) string {
	switch {
	case e.Client != "":
		return displayName(e.Client) + " (its own claim)"
	case strings.HasPrefix(e.Credential, "oauth:") && names[e.Credential] != "":
		return names[e.Credential] + " (its own claim)"
	case names[e.Credential] != "":
		return names[e.Credential]
	}
	return e.Credential
}

// titles looks the notes of entries up by their current titles, through
// the owner's view; a note that is gone is marked so.
func (c *Console) titles(ctx context.Context, entries []activity.Entry) map[string]titled {
	out := map[string]titled{}
	for _, e := range entries {
		for _, id := range e.Notes {
			if _, ok := out[id]; ok {
				continue
			}
			out[id] = c.title(ctx, id)
		}
	}
	return out
}

func (c *Console) title(ctx context.Context, id string) titled {
	title, ok := c.cfg.NoteTitle(ctx, id)
	if !ok {
		return titled{ID: id, Gone: true}
	}
	return titled{ID: id, Title: title}
}

// tools are the operation names the feed filters by.
func (c *Console) tools() []string {
	var out []string
	if c.cfg.Activity == nil {
		return out
	}
	es, err := c.cfg.Activity.Read(activity.Filter{Limit: 1000})
	if err != nil {
		return out
	}
	for _, e := range es {
		if !slices.Contains(out, e.Tool) {
			out = append(out, e.Tool)
		}
	}
	slices.Sort(out)
	return out
}

// flatten lists a tree's notebooks with their paths as titles.
func flatten(nodes []treeNode, prefix string) []treeNode {
	var out []treeNode
	for _, n := range nodes {
		path := prefix + n.Title
		out = append(out, treeNode{ID: n.ID, Title: path})
		out = append(out, flatten(n.Children, path+"/")...)
	}
	return out
}
