package oauthserver

import (
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/ory/fosite"

	"github.com/notebridge/notebridge/pkg/core/scope"
)

// maxFormBytes bounds an authorization, token or revocation request body.
const maxFormBytes = 16 << 10

// pkceChallenge is an S256 challenge: base64url of a SHA-256 digest.
var pkceChallenge = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// errInvalidTarget is RFC 8707's error for a resource we do not serve.
var errInvalidTarget = &fosite.RFC6749Error{
	ErrorField:       "invalid_target",
	DescriptionField: "The requested resource is not served by this authorization server.",
	CodeField:        http.StatusBadRequest,
}

// authorize serves the authorization endpoint. Requests whose client or
// redirect URI is not registered get an error page, never a redirect;
// other errors are sent to the registered redirect URI. Every response
// sent to the redirect URI is a query-string redirect carrying iss.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		writeJSONError(w, http.StatusBadRequest, "invalid_request", "the request could not be parsed")
		return
	}
	if id := r.Form.Get("client_id"); isCIMDClientID(id) && !s.ensureCIMDClient(w, r, id) {
		return
	}
	// Exact redirect matching, before fosite (which lets loopback
	// redirects vary their port) can redirect anywhere.
	trusted := false
	if c, ok := s.store.lookupClient(r.Form.Get("client_id")); ok {
		redirect := r.Form.Get("redirect_uri")
		if len(r.Form["redirect_uri"]) != 1 || !slices.Contains(c.RedirectURIs, redirect) {
			writeJSONError(w, http.StatusBadRequest, "invalid_request", "redirect_uri is missing or not registered for this client")
			return
		}
		trusted = true
	}
	if !s.checkResponseMode(w, r, trusted) {
		return
	}
	ar, err := s.provider.NewAuthorizeRequest(ctx, r)
	if err != nil {
		s.authorizeError(w, ar, err)
		return
	}
	if err := s.checkAuthorizeParams(r); err != nil {
		s.authorizeError(w, ar, err)
		return
	}
	granted, err := scope.Parse(joinScopes(ar.GetRequestedScopes()))
	if err != nil {
		s.authorizeError(w, ar, fosite.ErrInvalidScope)
		return
	}
	c, _ := s.store.lookupClient(ar.GetClient().GetID())
	if granted.Empty() {
		granted, _ = scope.Parse(strings.Join(c.Scopes, " "))
	}
	switch s.cfg.Consent.Decide(w, r, ConsentRequest{
		ClientID: c.ID, ClientName: c.Name, RedirectURI: ar.GetRedirectURI().String(), Scopes: granted,
	}) {
	case Pending:
		return
	case Denied:
		s.authorizeError(w, ar, fosite.ErrAccessDenied.WithHint("The owner denied the request."))
		return
	}
	for _, sc := range granted.List() {
		ar.GrantScope(string(sc))
	}
	ar.GrantAudience(s.cfg.Resource)
	resp, err := s.provider.NewAuthorizeResponse(ctx, ar, &fosite.DefaultSession{Subject: "owner", Extra: s.chosenNotebooks(r)})
	if err != nil {
		s.authorizeError(w, ar, err)
		return
	}
	resp.AddParameter("iss", s.cfg.Issuer) // RFC 9207
	s.provider.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// checkAuthorizeParams checks what fosite leaves to the server: a PKCE
// challenge with method S256 (checked again by fosite when the code is
// issued, but before the owner is asked here), the code response type
// alone, and the resource.
func (s *Server) checkAuthorizeParams(r *http.Request) error {
	f := r.Form
	if f.Get("response_type") != "code" {
		return fosite.ErrUnsupportedResponseType
	}
	if f.Get("code_challenge_method") != "S256" {
		return fosite.ErrInvalidRequest.WithHint("code_challenge_method must be S256.")
	}
	if !pkceChallenge.MatchString(f.Get("code_challenge")) {
		return fosite.ErrInvalidRequest.WithHint("code_challenge must be an S256 challenge.")
	}
	return s.checkResource(f["resource"])
}

// checkResource accepts no resource (the one we serve is implied) or
// exactly our resource URL.
func (s *Server) checkResource(values []string) error {
	for _, v := range values {
		if v != s.cfg.Resource {
			return errInvalidTarget
		}
	}
	if len(values) > 1 {
		return errInvalidTarget
	}
	return nil
}

// token serves the token endpoint: authorization_code and refresh_token.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		writeJSONError(w, http.StatusBadRequest, "invalid_request", "the request could not be parsed")
		return
	}
	if len(r.URL.Query()) > 0 {
		writeJSONError(w, http.StatusBadRequest, "invalid_request", "parameters belong in the request body")
		return
	}
	if err := s.checkResource(r.PostForm["resource"]); err != nil {
		s.provider.WriteAccessError(ctx, w, nil, err)
		return
	}
	if r.PostForm.Get("grant_type") == "refresh_token" && r.PostForm.Has("scope") {
		if err := s.checkRefreshScope(r); err != nil {
			s.provider.WriteAccessError(ctx, w, nil, err)
			return
		}
	}
	ar, err := s.provider.NewAccessRequest(ctx, r, &fosite.DefaultSession{})
	if s.refuseBusy(w, err) {
		return
	}
	if err != nil {
		s.provider.WriteAccessError(ctx, w, ar, err)
		return
	}
	resp, err := s.provider.NewAccessResponse(ctx, ar)
	if err != nil {
		s.provider.WriteAccessError(ctx, w, ar, err)
		return
	}
	s.provider.WriteAccessResponse(ctx, w, ar, resp)
}

// checkRefreshScope refuses a refresh that asks for a scope the grant does
// not hold (RFC 6749 §6). A narrower request is accepted; the new tokens
// keep the grant's scopes.
func (s *Server) checkRefreshScope(r *http.Request) error {
	asked, err := scope.Parse(r.PostForm.Get("scope"))
	if err != nil {
		return fosite.ErrInvalidScope.WithHint("Unknown scope.")
	}
	sig := s.strategy.RefreshTokenSignature(r.Context(), r.PostForm.Get("refresh_token"))
	held, ok := s.store.grantScopes(sig)
	if !ok {
		return nil // fosite refuses the unknown token itself
	}
	if !held.Contains(asked) {
		return fosite.ErrInvalidScope.WithHint("A refresh cannot add scopes to the grant.")
	}
	return nil
}

// revoke serves RFC 7009 revocation; revoking either token of a grant
// ends the whole grant at once.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	err := s.provider.NewRevocationRequest(ctx, r)
	if s.refuseBusy(w, err) {
		return
	}
	s.provider.WriteRevocationResponse(ctx, w, err)
}
