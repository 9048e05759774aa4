package console

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/consent"
	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/schema"
)

// appView is one connected app as the apps page shows it.
type appView struct {
	GrantID, ClientName, ClientID string
	RedirectHosts, Scopes         []string
	// All: every notebook; else Tree marks what it may read and change.
	All                 bool
	Tree                []treeNode
	NotebooksUnreadable bool
	Created, LastUsed   time.Time
	Calls24h            int
	RevokeCSRF          string
}

// tokenView is one static token.
type tokenView struct {
	StaticToken
	Calls24h int
}

// treeNode is one notebook of a tree shown or chosen.
type treeNode struct {
	ID, Title   string
	Read, Write bool
	Children    []treeNode
}

// markTree is the notebook tree below parent with what sc resolves to
// marked; with onlyShared, branches holding nothing shared are left out.
func markTree(t *notebookscope.Tree, parent string, read, write notebookscope.Set, onlyShared bool, depth int) []treeNode {
	if depth > 100 {
		return nil
	}
	var out []treeNode
	for _, f := range t.Children(parent) {
		if f.Trashed {
			continue
		}
		n := treeNode{ID: f.ID, Title: f.Title, Read: read.Has(f.ID), Write: read.Has(f.ID) && write.Has(f.ID),
			Children: markTree(t, f.ID, read, write, onlyShared, depth+1)}
		if !onlyShared || n.Read || len(n.Children) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// openGrants opens the OAuth state; nil, nil while there is none.
func (c *Console) openGrants() (Grants, error) {
	if c.cfg.OpenGrants == nil {
		return nil, nil
	}
	g, err := c.cfg.OpenGrants()
	if errors.Is(err, ErrNoGrants) {
		return nil, nil
	}
	return g, err
}

func (c *Console) apps(w http.ResponseWriter, req request) {
	c.showApps(w, req, http.StatusOK, "", "")
}

func (c *Console) showApps(w http.ResponseWriter, req request, status int, notice, problem string) {
	p := page{Title: "Connected apps", Notice: notice, Error: problem}
	var apps []appView
	g, err := c.openGrants()
	if err == nil && g != nil {
		apps, err = c.appViews(req, g)
	}
	if err != nil {
		p.Error = "The connected apps could not be read: " + err.Error()
	}
	calls := c.calls24h()
	tokens := make([]tokenView, 0, len(c.cfg.Tokens))
	for _, t := range c.cfg.Tokens {
		tokens = append(tokens, tokenView{StaticToken: t, Calls24h: calls[t.Credential]})
	}
	p.Data = struct {
		Apps   []appView
		Tokens []tokenView
	}{apps, tokens}
	c.show(w, req, status, "apps", "apps", p)
}

func (c *Console) appViews(req request, g Grants) ([]appView, error) {
	grants, err := g.Grants()
	if err != nil {
		return nil, err
	}
	clients, err := g.Clients()
	if err != nil {
		return nil, err
	}
	byID := map[string]oauthserver.ClientInfo{}
	for _, cl := range clients {
		byID[cl.ID] = cl
	}
	tree, treeErr := c.cfg.Notebooks(req.Context())
	out := make([]appView, 0, len(grants))
	for i := len(grants) - 1; i >= 0; i-- { // newest first
		gi := grants[i]
		cl := byID[gi.ClientID]
		v := appView{GrantID: gi.ID, ClientName: displayName(gi.ClientName), ClientID: gi.ClientID, Scopes: gi.Scopes,
			Created: gi.Created, LastUsed: gi.LastUsed, Calls24h: c.grantCalls(gi.ID),
			RevokeCSRF: c.csrf(req, "/owner/apps/revoke")}
		for _, u := range cl.RedirectURIs {
			if pu, err := url.Parse(u); err == nil && !slices.Contains(v.RedirectHosts, pu.Host) {
				v.RedirectHosts = append(v.RedirectHosts, pu.Host)
			}
		}
		sc, err := g.GrantNotebooks(gi.ID)
		switch {
		case err != nil:
			v.NotebooksUnreadable = true
		case sc.Unlimited():
			v.All = true
		case treeErr != nil:
			v.NotebooksUnreadable = true
		default:
			v.Tree = markTree(tree, "", tree.Resolve(sc.Read), tree.Resolve(sc.Write), true, 0)
		}
		out = append(out, v)
	}
	return out, nil
}

// displayName is a client's name as the console shows it: as it is when
// registration would accept it, else quoted with escapes.
func displayName(name string) string {
	if oauthserver.CheckClientName(name) == nil {
		return name
	}
	return strconv.QuoteToASCII(name)
}

var joplinID = regexp.MustCompile(schema.IDPattern)

// grantOrApps returns the grants and the live grant id names; without
// them it answers the apps page, 404, with "No such app." when there are
// no grants to read and gone when id is not among them.
func (c *Console) grantOrApps(w http.ResponseWriter, req request, id, gone string) (Grants, oauthserver.GrantInfo, bool) {
	g, err := c.openGrants()
	if err != nil || g == nil {
		c.showApps(w, req, http.StatusNotFound, "", "No such app.")
		return nil, oauthserver.GrantInfo{}, false
	}
	gi, ok := liveGrant(g, id)
	if !ok {
		c.showApps(w, req, http.StatusNotFound, "", gone)
		return nil, oauthserver.GrantInfo{}, false
	}
	return g, gi, true
}

// liveGrant returns the grant id names, refusing anything else (a client
// id, which Revoke would also take).
func liveGrant(g Grants, id string) (oauthserver.GrantInfo, bool) {
	grants, err := g.Grants()
	if err != nil {
		return oauthserver.GrantInfo{}, false
	}
	for _, gi := range grants {
		if gi.ID == id {
			return gi, true
		}
	}
	return oauthserver.GrantInfo{}, false
}

// revoke ends a grant: its tokens are gone from the state the resource
// server reads on every request, so its next call, on an open MCP
// session too, gets 401.
func (c *Console) revoke(w http.ResponseWriter, req request) {
	g, gi, ok := c.grantOrApps(w, req, req.PostForm.Get("grant"), "No such app: it may have been revoked already.")
	if !ok {
		return
	}
	if _, err := g.Revoke(gi.ID); err != nil {
		c.showApps(w, req, http.StatusInternalServerError, "", "The app could not be revoked: "+err.Error())
		return
	}
	c.showApps(w, req, http.StatusOK, "Revoked "+displayName(gi.ClientName)+": its next request is refused.", "")
}

// chooseView is the notebook form of one grant.
type chooseView struct {
	App        appView
	All        bool
	Tree       []treeNode
	CSRF       string
	Unreadable bool
}

func (c *Console) notebooksForm(w http.ResponseWriter, req request) {
	c.showChoose(w, req, http.StatusOK, req.URL.Query().Get("grant"), "")
}

func (c *Console) showChoose(w http.ResponseWriter, req request, status int, id, problem string) {
	g, gi, ok := c.grantOrApps(w, req, id, "No such app: it may have been revoked.")
	if !ok {
		return
	}
	sc, err := g.GrantNotebooks(gi.ID)
	if err != nil {
		c.showApps(w, req, http.StatusInternalServerError, "", "The app's notebooks could not be read.")
		return
	}
	v := chooseView{App: appView{GrantID: gi.ID, ClientName: displayName(gi.ClientName), ClientID: gi.ClientID},
		All: sc.Unlimited(), CSRF: c.csrf(req, "/owner/apps/notebooks")}
	if tree, err := c.cfg.Notebooks(req.Context()); err == nil {
		v.Tree = markTree(tree, "", tree.Resolve(sc.Read), tree.Resolve(sc.Write), false, 0)
	} else {
		v.Unreadable = true
	}
	c.show(w, req, status, "apps", "choose", page{Title: "Notebooks of " + v.App.ClientName, Error: problem, Data: v})
}

// setNotebooks changes a grant's notebooks in place. Narrowing (every
// notebook it may read or change now, it could before) takes effect at
// once; widening needs the owner passphrase again.
func (c *Console) setNotebooks(w http.ResponseWriter, req request) {
	form := req.PostForm
	id := form.Get("grant")
	g, gi, ok := c.grantOrApps(w, req, id, "No such app: it may have been revoked.")
	if !ok {
		return
	}
	old, err := g.GrantNotebooks(id)
	tree, treeErr := c.cfg.Notebooks(req.Context())
	if err != nil || treeErr != nil {
		c.showChoose(w, req, http.StatusServiceUnavailable, id, "Your notebooks could not be listed right now (is Joplin running?). Try again later.")
		return
	}
	next, names, problem := chosen(form, tree)
	if problem != "" {
		c.showChoose(w, req, http.StatusBadRequest, id, problem)
		return
	}
	if widens(tree, old, next) {
		if v := c.cfg.Checker.Admit(req.Context(), oauthserver.ClientAddr(req.Request)); v != consent.Admitted {
			c.refuse(w, v)
			return
		}
		switch v := c.cfg.Checker.Check(req.Context(), oauthserver.ClientAddr(req.Request), form.Get("passphrase")); v {
		case consent.Right:
		case consent.Wrong, consent.Busy:
			msg := "This shares more than before: enter the owner passphrase to confirm."
			if form.Get("passphrase") != "" {
				msg = v.Message()
			}
			c.showChoose(w, req, http.StatusUnauthorized, id, msg)
			return
		default:
			c.refuse(w, v)
			return
		}
	}
	if err := g.SetGrantNotebooks(id, next, names); err != nil {
		c.showChoose(w, req, http.StatusInternalServerError, id, "The notebooks could not be changed: "+err.Error())
		return
	}
	c.showApps(w, req, http.StatusOK, "Changed the notebooks of "+displayName(gi.ClientName)+": its next request sees only those.", "")
}

// chosen reads the notebook form: every notebook, or the checked ones.
func chosen(form url.Values, tree *notebookscope.Tree) (notebookscope.Scope, string, string) {
	if form.Get("all_notebooks") == "1" {
		return notebookscope.Everything(), "all notebooks", ""
	}
	read, write := form["notebook"], form["write_notebook"]
	for _, id := range append(slices.Clone(read), write...) {
		if !joplinID.MatchString(id) || !tree.Has(id) {
			return notebookscope.Scope{}, "", "The notebook choice is malformed. Reload the page."
		}
	}
	sc := notebookscope.New(notebookscope.Only(read...), notebookscope.Only(write...))
	paths := func(ids []string) string {
		out := make([]string, 0, len(ids))
		for _, id := range ids {
			out = append(out, tree.PathOf(id))
		}
		return strings.Join(out, ", ")
	}
	names := "read: " + paths(sc.Read.Refs())
	if w := sc.Write.Refs(); len(w) > 0 {
		names += "; write: " + paths(w)
	}
	if len(read) == 0 {
		names = "no notebook"
	}
	return sc, names, ""
}

// widens reports whether next lets the grant read or change a notebook
// old did not, as the tree stands (a selection naming a notebook covers
// its sub-notebooks, present and future, so choosing every notebook is
// wider than any list).
func widens(tree *notebookscope.Tree, old, next notebookscope.Scope) bool {
	oldRead, nextRead := tree.Resolve(old.Read), tree.Resolve(next.Read)
	oldWrite, nextWrite := oldRead.Intersect(tree.Resolve(old.Write)), nextRead.Intersect(tree.Resolve(next.Write))
	return !within(nextRead, oldRead) || !within(nextWrite, oldWrite)
}

// within reports whether every notebook of a is in b.
func within(a, b notebookscope.Set) bool {
	if b.IsAll() {
		return true
	}
	if a.IsAll() {
		return false
	}
	for _, id := range a.IDs() {
		if !b.Has(id) {
			return false
		}
	}
	return true
}
