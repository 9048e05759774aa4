// Package console is the owner's console at /owner/ on the public origin:
// which apps are connected and what each may see, what they did, the
// changes they made (with undo), and the bridge's status. Small
// server-rendered pages, no script, a strict Content-Security-Policy, and
// no framing. The owner signs in with the owner passphrase through the
// consent page's own checks (consent.Checker: rate limit, lockout, bounded
// argon2id); a session cookie (HttpOnly, Secure, SameSite=Strict, a short
// idle timeout) follows. Every form carries a single-use CSRF token bound
// to the session and the form's action, and every POST must come from the
// console's own origin. A bearer token never opens the console. No note
// text leaves it but the diffs of changes and the titles the owner is
// shown.
package console

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/consent"
	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/writejournal"
)

// Prefix is where the console is served.
const Prefix = "/owner/"

// Grants is the authorization server's state as the console reads and
// changes it (oauthserver.Operator).
type Grants interface {
	Grants() ([]oauthserver.GrantInfo, error)
	Clients() ([]oauthserver.ClientInfo, error)
	GrantNotebooks(id string) (notebookscope.Scope, error)
	SetGrantNotebooks(id string, sc notebookscope.Scope, names string) error
	Revoke(id string) (string, error)
}

// Owner runs an operation through the executor as the owner
// (principal.Console): the status and undo, each an entry of the
// activity log.
type Owner interface {
	Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, *domainerr.Error)
}

// StaticToken is a static bearer token the bridge accepts, as the
// console shows it.
type StaticToken struct {
	// Name says which token (e.g. "MCP bearer token"); Credential is how
	// the activity log names its calls.
	Name, Credential string
	// Notebooks names what it may read and write.
	Notebooks string
	// Rotate says how to revoke it.
	Rotate string
}

// Config configures the console.
type Config struct {
	// Origin is the public https origin the console is served on; every
	// POST must carry it as its Origin.
	Origin string
	// Checker checks the owner passphrase (shared with the consent page).
	Checker *consent.Checker
	// OpenGrants opens the authorization server's state; ErrNoGrants
	// (or nil OpenGrants) when OAuth has never been used.
	OpenGrants func() (Grants, error)
	Tokens     []StaticToken
	// Activity reads the activity log (nil: no log).
	Activity ActivityReader
	// Changes lists the receipts of changes (nil: none).
	Changes Changes
	Owner   Owner
	// NoteTitle looks a note's current title up through the owner's view
	// (ok false: the note is gone). It is no operation, so showing the
	// feed writes nothing to the activity log it shows.
	NoteTitle func(ctx context.Context, id string) (title string, ok bool)
	// Notebooks lists the owner's notebook tree.
	Notebooks func(ctx context.Context) (*notebookscope.Tree, error)
	// Journal reads the uncertain writes (nil: none).
	Journal func() ([]writejournal.Entry, error)
	// IdleTimeout ends a session without a request for this long
	// (default 15 minutes); MaxAge ends any session (default 12 hours).
	IdleTimeout time.Duration
	MaxAge      time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// ErrNoGrants is what OpenGrants returns while no OAuth state exists.
var ErrNoGrants = errors.New("no OAuth state")

// Console serves /owner/.
type Console struct {
	cfg      Config
	sessions *sessions
	signins  *signins
	mux      *http.ServeMux
}

// Cookie names; __Host- pins them to this origin, https and path /.
const (
	sessionCookie = "__Host-notebridge-owner"
	signinCookie  = "__Host-notebridge-owner-signin"
)

// maxFormBytes bounds a posted form.
const maxFormBytes = 64 << 10

// New builds the console.
func New(cfg Config) (*Console, error) {
	if cfg.Checker == nil || cfg.Owner == nil || cfg.NoteTitle == nil {
		return nil, errors.New("owner console: a passphrase checker, the owner's executor and a note title lookup are required")
	}
	if !strings.HasPrefix(cfg.Origin, "https://") || strings.Count(cfg.Origin, "/") != 2 {
		return nil, errors.New("owner console: the public origin must be https://host[:port]")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.IdleTimeout = cmp.Or(cfg.IdleTimeout, 15*time.Minute)
	cfg.MaxAge = cmp.Or(cfg.MaxAge, 12*time.Hour)
	c := &Console{cfg: cfg, sessions: newSessions(cfg.IdleTimeout, cfg.MaxAge, 16, cfg.Now),
		signins: newSignins(10*time.Minute, 1024, cfg.Now), mux: http.NewServeMux()}
	c.mux.HandleFunc("GET /owner/{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/owner/apps", http.StatusSeeOther) })
	c.mux.HandleFunc("GET /owner/style.css", serveStyle)
	c.mux.HandleFunc("GET /owner/signin", c.signinForm)
	c.mux.HandleFunc("POST /owner/signin", c.signin)
	c.mux.HandleFunc("POST /owner/signout", c.owner(c.signout))
	c.mux.HandleFunc("GET /owner/apps", c.owner(c.apps))
	c.mux.HandleFunc("GET /owner/apps/notebooks", c.owner(c.notebooksForm))
	c.mux.HandleFunc("POST /owner/apps/notebooks", c.owner(c.setNotebooks))
	c.mux.HandleFunc("POST /owner/apps/revoke", c.owner(c.revoke))
	c.mux.HandleFunc("GET /owner/activity", c.owner(c.activity))
	c.mux.HandleFunc("GET /owner/changes", c.owner(c.changes))
	c.mux.HandleFunc("POST /owner/changes/undo", c.owner(c.undo))
	c.mux.HandleFunc("GET /owner/status", c.owner(c.status))
	return c, nil
}

// ServeHTTP sets the security headers, refuses bearer tokens and
// cross-origin posts, then routes.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	headers(w)
	if r.Header.Get("Authorization") != "" {
		c.message(w, http.StatusForbidden, "The console does not accept tokens. Sign in with the owner passphrase.")
		return
	}
	if r.Method == http.MethodPost {
		if !c.sameOrigin(r) {
			c.message(w, http.StatusForbidden, "This form did not come from the console's own page.")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			c.message(w, http.StatusBadRequest, "The form could not be read.")
			return
		}
	}
	c.mux.ServeHTTP(w, r)
}

// sameOrigin reports whether a POST comes from the console's origin: its
// Origin is the console's (a browser sends it on every POST), and the
// browser, when it says, calls it same-origin.
func (c *Console) sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return false
	}
	return strings.EqualFold(r.Header.Get("Origin"), c.cfg.Origin)
}

// headers sets the console's security headers (consent.PageHeaders): no
// script, styles and forms from the console only.
func headers(w http.ResponseWriter) {
	consent.PageHeaders(w.Header(), "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
}

// request is a signed-in request: its session cookie, for the forms.
type request struct {
	*http.Request
	cookie string
}

// owner admits only a signed-in owner: a GET without a session goes to
// the sign-in page, a POST without one, or without its form's CSRF
// token, is refused.
func (c *Console) owner(h func(http.ResponseWriter, request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie(sessionCookie)
		if err != nil || !c.sessions.touch(ck.Value) {
			if r.Method == http.MethodPost {
				c.message(w, http.StatusForbidden, "You are not signed in, or your session ended. Sign in again.")
				return
			}
			http.Redirect(w, r, "/owner/signin", http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost && !c.sessions.consume(ck.Value, r.PostForm.Get("csrf"), r.URL.Path) {
			c.message(w, http.StatusForbidden, "This form expired or was already used. Reload the page and try again.")
			return
		}
		h(w, request{Request: r, cookie: ck.Value})
	}
}

// csrf returns a token for a form of req posting to action.
func (c *Console) csrf(req request, action string) string {
	return c.sessions.issue(req.cookie, action)
}
