package oauthserver

import (
	"net/http"
	"net/url"

	"github.com/ory/fosite"
)

// Authorization responses reach the client only as query-string
// redirects (the one response mode the metadata advertises) to a
// redirect URI registered for the client and matched exactly, and carry
// the issuer as iss (RFC 9207), errors included, so a client talking to
// several authorization servers can tell which one answered.

// checkResponseMode accepts an absent (or empty) response_mode or exactly
// one "query". Any other is refused: with a query-string redirect when the
// redirect URI is trusted (the client's, matched exactly), else with an
// error page; never with a fragment or a form_post page. It reports
// whether the request may go on; on refusal it has written the answer.
func (s *Server) checkResponseMode(w http.ResponseWriter, r *http.Request, trusted bool) bool {
	modes, ok := r.Form["response_mode"]
	if !ok {
		return true
	}
	if len(modes) == 1 && (modes[0] == "" || modes[0] == string(fosite.ResponseModeQuery)) {
		// Empty is absent (RFC 6749 §3.1). query is fosite's default for
		// the code flow; named explicitly, fosite would ask the client
		// for its list of modes, which registration does not keep.
		r.Form.Del("response_mode")
		return true
	}
	err := fosite.ErrUnsupportedResponseMode.WithHint("Only response_mode query is supported.")
	if !trusted {
		writeErrorPage(w, err)
		return false
	}
	redirect, perr := url.Parse(r.Form.Get("redirect_uri"))
	if perr != nil { // registered URIs parse; kept for safety
		writeJSONError(w, http.StatusBadRequest, "invalid_request", "redirect_uri is not a URL")
		return false
	}
	s.redirectError(w, redirect, r.Form.Get("state"), err)
	return false
}

// authorizeError answers a refused authorization request: a query-string
// redirect to the request's redirect URI when fosite found it valid for
// the client (the exact match was checked before), else an error page.
func (s *Server) authorizeError(w http.ResponseWriter, ar fosite.AuthorizeRequester, err error) {
	if ar == nil || !ar.IsRedirectURIValid() {
		writeErrorPage(w, err)
		return
	}
	s.redirectError(w, ar.GetRedirectURI(), ar.GetState(), err)
}

// writeErrorPage answers err where nothing may redirect: as JSON with
// the error's status (its description never holds fosite's debug text).
func writeErrorPage(w http.ResponseWriter, err error) {
	rfc := fosite.ErrorToRFC6749Error(err)
	writeJSONError(w, rfc.CodeField, rfc.ErrorField, rfc.GetDescription())
}

// redirectError sends err to redirect in its query, beside the redirect
// URI's own parameters, with state (when the request had one) and iss.
func (s *Server) redirectError(w http.ResponseWriter, redirect *url.URL, state string, err error) {
	rfc := fosite.ErrorToRFC6749Error(err)
	u := *redirect
	u.Fragment, u.RawFragment = "", ""
	q := u.Query()
	q.Set("error", rfc.ErrorField)
	q.Set("error_description", rfc.GetDescription())
	if state != "" {
		q.Set("state", state)
	}
	q.Set("iss", s.cfg.Issuer)
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", u.String())
	w.WriteHeader(http.StatusSeeOther)
}
