// Package consent is the owner's consent page of the built-in
// authorization server: plain HTML, no third-party assets, strict security
// headers. It names the client, where it will send the owner back and the
// scopes asked for, and approves with the owner passphrase (argon2id hash).
// Forms carry a CSRF token bound to a cookie and to the exact request;
// the cookie's nonce is single-use, short-lived and bound to the client
// address that loaded the page. Attempts are rate-limited per client key
// (an IPv4 address or an IPv6 /64, ulule/limiter), counted before the passphrase is hashed (an
// address is locked out after repeated wrong passphrases), and the
// memory-hard checks are bounded across the process.
package consent

import (
	"cmp"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
	"github.com/notebridge/notebridge/pkg/core/scope"
)

// Config configures the page.
type Config struct {
	Hash Hash
	// Rate bounds consent requests per client key (ulule format,
	// default "30-M").
	Rate string
	// MaxFailures wrong passphrases lock an address out for Lockout
	// (defaults 5 and 15 minutes).
	MaxFailures int
	Lockout     time.Duration
	// Now is the clock of the lockout and the forms (nil: time.Now).
	Now func() time.Time
	// MaxChecks bounds the passphrase checks (argon2id, 19 MiB each)
	// running at once across the process (default 2); a check waits at
	// most CheckWait for a slot (default 2 seconds), then the form is
	// shown again with 429 and Retry-After.
	MaxChecks int
	CheckWait time.Duration
	// NonceTTL is how long a form stays valid (default 10 minutes). Each
	// client key (oauthserver.ClientKey: an IPv4 address or an IPv6 /64)
	// holds at most MaxNoncesPerKey forms (default 4, its oldest go); at
	// most MaxNonces are outstanding in all (default 16384; past it no
	// form is shown, 503, until some expire).
	NonceTTL        time.Duration
	MaxNonces       int
	MaxNoncesPerKey int
	// MaxAddresses bounds the client keys whose failures are remembered
	// (default 10000; past it a new key replaces the one with the fewest
	// failures).
	MaxAddresses int
	// Notebooks, when set, lists Joplin's notebooks: the page asks the
	// owner which to share (notebooks.go). Unset, a grant covers every
	// notebook.
	Notebooks Tree
	// Checker, when set, checks the passphrase (shared with the owner's
	// console, so both count one lockout); unset, New builds one from the
	// fields above.
	Checker *Checker
	// Refused, when set, is told of every refused sign-in (by the Checker New builds; a given Checker has its own) with its reason
	// (RefusedWrongPassphrase, RefusedLockedOut), for the metrics.
	Refused func(reason string)
}

// Page implements oauthserver.Consent.
type Page struct {
	*Checker
	cfg    Config
	key    []byte
	nonces *nonces
}

// cookieName holds the CSRF nonce; __Host- pins it to this origin, https
// and path /.
const cookieName = "__Host-notebridge-consent"

// New builds the page.
func New(cfg Config) (*Page, error) {
	if len(cfg.Hash.key) == 0 && cfg.Checker == nil {
		return nil, errors.New("oauth consent: the owner passphrase hash is required")
	}
	checker := cfg.Checker
	if checker == nil {
		var err error
		if checker, err = NewChecker(cfg); err != nil {
			return nil, err
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.NonceTTL = cmp.Or(cfg.NonceTTL, 10*time.Minute)
	cfg.MaxNonces = cmp.Or(cfg.MaxNonces, 16384)
	cfg.MaxNoncesPerKey = cmp.Or(cfg.MaxNoncesPerKey, 4)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &Page{Checker: checker, cfg: cfg, key: key,
		nonces: newNonces(cfg.NonceTTL, cfg.MaxNonces, cfg.MaxNoncesPerKey, cfg.Now)}, nil
}

// Decide implements oauthserver.Consent: GET shows the page; POST checks the
// CSRF token, consumes the form's nonce and, to approve, checks the
// passphrase.
func (p *Page) Decide(w http.ResponseWriter, r *http.Request, req oauthserver.ConsentRequest) oauthserver.Decision {
	headers(w, req.RedirectURI)
	addr := oauthserver.ClientAddr(r)
	if v := p.Admit(r.Context(), addr); v != Admitted {
		p.refuse(w, v)
		return oauthserver.Pending
	}
	if r.Method != http.MethodPost {
		p.form(w, r, req, http.StatusOK, "")
		return oauthserver.Pending
	}
	for k := range r.PostForm {
		if k != "csrf" && k != "passphrase" && k != "decision" && k != fieldAll && k != fieldRead && k != fieldWrite {
			p.message(w, http.StatusBadRequest, "The form carries unexpected fields.")
			return oauthserver.Pending
		}
	}
	c, err := r.Cookie(cookieName)
	if err != nil || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(p.csrf(c.Value, r.URL.RawQuery))) {
		p.message(w, http.StatusForbidden, "This form expired or did not come from this page. Go back to the application and start again.")
		return oauthserver.Pending
	}
	decision := r.PostForm.Get("decision")
	if decision != "deny" && decision != "approve" {
		p.message(w, http.StatusBadRequest, "Choose Approve or Deny.")
		return oauthserver.Pending
	}
	result, offered := p.nonces.consume(c.Value, addr)
	switch result {
	case nonceGone:
		p.message(w, http.StatusForbidden, "This form expired or was already used. Go back to the application and start again.")
		return oauthserver.Pending
	case nonceElsewhere:
		p.message(w, http.StatusForbidden, "This form was loaded from another network address. Go back to the application and start again.")
		return oauthserver.Pending
	}
	if decision == "deny" {
		return oauthserver.Denied
	}
	d := p.checkPassphrase(w, r, req, addr)
	if d != oauthserver.Approved {
		return d
	}
	// Checked after the passphrase, so a wrong one is told as such.
	if problem := p.checkNotebooks(r.Context(), req, r.PostForm, offered); problem != "" {
		p.form(w, r, req, http.StatusBadRequest, problem)
		return oauthserver.Pending
	}
	return d
}

// csrf binds a form to its cookie nonce and to the exact request query.
func (p *Page) csrf(nonce, query string) string {
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte(nonce))
	m.Write([]byte{0})
	m.Write([]byte(query))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// headers sets the page's security headers. Forms may post only here, and
// the redirect after approval may go only to the client's redirect origin.
func headers(w http.ResponseWriter, redirect string) {
	formAction := "'self'"
	if u, err := url.Parse(redirect); err == nil && u.Scheme != "" && u.Host != "" {
		formAction += " " + u.Scheme + "://" + u.Host
	}
	PageHeaders(w.Header(), "default-src 'none'; form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
}

// PageHeaders sets the security headers of a page the owner signs in on
// (this consent page, the owner's console) under the Content-Security-
// Policy csp: no framing, no sniffing, nothing cached, no referrer across
// origins.
func PageHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: under no-referrer a browser sends a
	// form's POST with "Origin: null", which the origin checks refuse;
	// cross-origin (the redirect to the client) no referrer is sent
	// either way.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
}

// scopeText says what each scope allows, in the owner's words.
var scopeText = map[scope.Scope]string{
	scope.NotesRead:  "read your Joplin notes, notebooks, tags and attachments",
	scope.NotesWrite: "create, change and trash your Joplin notes, notebooks, tags and attachments",
	scope.OKFRead:    "read your OKF knowledge bundles",
	scope.OKFWrite:   "change your OKF knowledge bundles",
}

type formData struct {
	ClientName, ClientID, RedirectSite, RedirectHost, CSRF, Error string
	Scopes                                                        []string
	// AskNotebooks shows the notebook choice: Notebooks (empty when
	// NotebooksUnavailable), with a write column when CanWrite.
	AskNotebooks, CanWrite, NotebooksUnavailable bool
	Notebooks                                    []notebookNode
}

func (p *Page) form(w http.ResponseWriter, r *http.Request, req oauthserver.ConsentRequest, status int, problem string) {
	var d formData
	p.notebookForm(r.Context(), req, &d)
	addr := oauthserver.ClientAddr(r)
	nonce, ok := p.nonces.issue(addr, oauthserver.ClientKey(addr), offerOf(&d).digest())
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(p.cfg.NonceTTL/time.Second)))
		p.message(w, http.StatusServiceUnavailable, "Too many consent forms are open right now. Try again in a few minutes.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: nonce, Path: "/", Secure: true, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(p.cfg.NonceTTL / time.Second)})
	d.ClientName, d.ClientID, d.CSRF, d.Error = displayName(req.ClientName), req.ClientID, p.csrf(nonce, r.URL.RawQuery), problem
	d.RedirectSite, d.RedirectHost = describeRedirect(req.RedirectURI)
	for _, s := range req.Scopes.List() {
		d.Scopes = append(d.Scopes, string(s)+": "+scopeText[s])
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = formPage.Execute(w, d)
}

func (p *Page) message(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = messagePage.Execute(w, msg)
}

var formPage = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Allow access to your notes?</title></head>
<body>
<h1>Allow access to your notes?</h1>
<p>An application asks to use notebridge on your behalf. After you decide, you are sent back to the site</p>
<h2>{{.RedirectSite}}</h2>
<p>Full host: <code>{{.RedirectHost}}</code>.
Approve only if you started this from an application on that site.</p>
<p>{{if .ClientName}}The application calls itself <strong>{{.ClientName}}</strong>. That name is its own claim, not verified:
any application can register under any name.{{else}}The application gives no name.{{end}}
Client ID <code>{{.ClientID}}</code>.</p>
<p>It asks to:</p>
<ul>{{range .Scopes}}<li>{{.}}</li>{{end}}</ul>
{{if .Error}}<p role="alert"><strong>{{.Error}}</strong></p>{{end}}
<form method="post">
<input type="hidden" name="csrf" value="{{.CSRF}}">
{{if .AskNotebooks}}<fieldset id="notebooks"><legend>Notebooks it may use</legend>
<p>Only the notebooks you check, with the notebooks inside them (also ones created later), are shared. Everything else stays invisible to the application.</p>
<p><label><input type="checkbox" name="all_notebooks" value="1" id="all-notebooks"> All notebooks</label></p>
{{if .NotebooksUnavailable}}<p>Your notebooks could not be listed right now (is Joplin running?). Share all notebooks, or go back and try again later.</p>
{{else}}{{template "tree" .Notebooks}}{{end}}
</fieldset>{{end}}
<p><label for="passphrase">Owner passphrase</label><br>
<input id="passphrase" name="passphrase" type="password" autocomplete="current-password" autofocus></p>
<p><button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button></p>
</form>
<p>The passphrase is printed by <code>notebridge secrets show owner-passphrase</code>.</p>
</body></html>
`))

// treeTemplate renders the notebook tree: a "read" checkbox per notebook and,
// when the application asks to change notes, a "change" one.
const treeTemplate = `{{define "tree"}}<ul>{{range .}}<li><label><input type="checkbox" name="notebook" value="{{.ID}}"> {{.Title}}</label>
{{if .CanWrite}}<label><input type="checkbox" name="write_notebook" value="{{.ID}}"> may change</label>{{end}}
{{if .Children}}{{template "tree" .Children}}{{end}}</li>{{end}}</ul>{{end}}`

func init() { template.Must(formPage.New("tree").Parse(treeTemplate)) }

var messagePage = template.Must(template.New("message").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>notebridge</title></head>
<body><p>{{.}}</p></body></html>
`))
