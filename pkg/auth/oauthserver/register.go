package oauthserver

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/scope"
)

// Bounds of a registration document.
const (
	MaxRegistrationBytes = 8 << 10
	maxRedirectURIs      = 8
	maxRedirectURILen    = 512
	maxClientNameLen     = 100
)

// The token endpoint authentication methods clients may register.
const (
	authNone   = "none"
	authPost   = "client_secret_post"
	authBasic  = "client_secret_basic"
	grantCode  = "authorization_code"
	grantRenew = "refresh_token"
)

var authMethods = []string{authNone, authPost, authBasic}

// Registration is the part of an RFC 7591 client metadata document
// notebridge reads; other members are ignored, as RFC 7591 §2 allows.
type Registration struct {
	// ClientID is read only from Client ID Metadata Documents.
	ClientID      string   `json:"client_id"`
	RedirectURIs  []string `json:"redirect_uris"`
	ClientName    string   `json:"client_name"`
	AuthMethod    string   `json:"token_endpoint_auth_method"`
	GrantTypes    []string `json:"grant_types"`
	ResponseTypes []string `json:"response_types"`
	Scope         string   `json:"scope"`
}

// errMetadata is an invalid_client_metadata or invalid_redirect_uri
// problem; its message is safe to return (it never echoes values).
type errMetadata struct{ code, msg string }

func (e errMetadata) Error() string { return e.code + ": " + e.msg }

func badMetadata(format string, args ...any) error {
	return errMetadata{"invalid_client_metadata", fmt.Sprintf(format, args...)}
}

func badRedirect(format string, args ...any) error {
	return errMetadata{"invalid_redirect_uri", fmt.Sprintf(format, args...)}
}

// ParseRegistration decodes and validates a registration document of at
// most MaxRegistrationBytes, filling the defaults: both grant types, the
// code response type, every scope. An absent auth method stays empty: its
// default depends on how the client registers.
func ParseRegistration(raw []byte) (Registration, scope.Set, error) {
	var reg Registration
	if len(raw) > MaxRegistrationBytes {
		return reg, scope.Set{}, badMetadata("the registration document exceeds %d bytes", MaxRegistrationBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&reg); err != nil {
		return reg, scope.Set{}, badMetadata("the registration document is not a JSON object of client metadata")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return reg, scope.Set{}, badMetadata("the registration document has trailing data")
	}
	if len(reg.RedirectURIs) == 0 || len(reg.RedirectURIs) > maxRedirectURIs {
		return reg, scope.Set{}, badRedirect("between 1 and %d redirect_uris are required", maxRedirectURIs)
	}
	for i, u := range reg.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return reg, scope.Set{}, badRedirect("redirect_uris[%d] %v", i, err)
		}
	}
	if err := CheckClientName(reg.ClientName); err != nil {
		return reg, scope.Set{}, err
	}
	switch reg.AuthMethod {
	case "", authNone, authPost, authBasic:
	default:
		return reg, scope.Set{}, badMetadata("token_endpoint_auth_method must be one of %s", strings.Join(authMethods, ", "))
	}
	if len(reg.GrantTypes) == 0 {
		reg.GrantTypes = []string{grantCode, grantRenew}
	}
	for _, g := range reg.GrantTypes {
		if g != grantCode && g != grantRenew {
			return reg, scope.Set{}, badMetadata("grant_types may hold only authorization_code and refresh_token")
		}
	}
	if len(reg.ResponseTypes) == 0 {
		reg.ResponseTypes = []string{"code"}
	}
	for _, rt := range reg.ResponseTypes {
		if rt != "code" {
			return reg, scope.Set{}, badMetadata("response_types may hold only code")
		}
	}
	scopes := scope.NewSet(scope.All...)
	if strings.TrimSpace(reg.Scope) != "" {
		var err error
		if scopes, err = scope.Parse(reg.Scope); err != nil {
			return reg, scope.Set{}, badMetadata("scope may hold only %s", scope.NewSet(scope.All...))
		}
	}
	return reg, scopes, nil
}

// checkRedirectURI accepts an absolute https URL, or an http URL on a
// loopback address for native clients (RFC 8252 §7.3), without fragment or
// user info, whose host is an IP address or an ASCII DNS name (checkHost).
// Private-use schemes are not accepted.
func checkRedirectURI(raw string) error {
	if len(raw) > maxRedirectURILen {
		return fmt.Errorf("is longer than %d bytes", maxRedirectURILen)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return errors.New("is not an absolute URL")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") || u.User != nil {
		return errors.New("must not have a fragment or user info")
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return errors.New("has spaces or control characters")
	}
	if err := checkHost(u.Hostname()); err != nil {
		return err
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
		return errors.New("must use https (http only on a loopback address)")
	}
	return errors.New("must use https")
}

// register serves RFC 7591 Dynamic Client Registration. Registration is
// open, as the MCP authorization specification expects, but bounded: the
// document's size and content, and the number of clients kept.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxRegistrationBytes+1))
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "invalid_client_metadata", "the registration document could not be read")
		return
	}
	reg, scopes, err := ParseRegistration(raw)
	var em errMetadata
	if errors.As(err, &em) {
		writeJSONError(w, http.StatusBadRequest, em.code, em.msg)
		return
	}
	if reg.AuthMethod == "" {
		reg.AuthMethod = authBasic // RFC 7591 §2
	}
	id := newClientID()
	rec := clientRecord{ID: id, Name: reg.ClientName, RedirectURIs: reg.RedirectURIs, GrantTypes: reg.GrantTypes,
		Scopes: stringsOf(scopes), AuthMethod: reg.AuthMethod, RegisteredAt: s.cfg.Now().UTC(), RegisteredVia: "dcr"}
	var secret string
	if reg.AuthMethod != authNone {
		secret = randomString(32)
		rec.SecretHash = hashSecret([]byte(secret))
	}
	if err := s.store.addClient(rec, s.cfg.MaxClients); err != nil {
		if errors.Is(err, errTooManyClients) {
			writeJSONError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "too many registered clients hold live grants; revoke one first")
			return
		}
		writeJSONError(w, http.StatusInternalServerError, "server_error", "the client could not be registered")
		return
	}
	out := map[string]any{
		"client_id": id, "client_id_issued_at": rec.RegisteredAt.Unix(), "redirect_uris": reg.RedirectURIs,
		"token_endpoint_auth_method": reg.AuthMethod, "grant_types": reg.GrantTypes, "response_types": reg.ResponseTypes,
		"scope": scopes.String(),
	}
	if reg.ClientName != "" {
		out["client_name"] = reg.ClientName
	}
	if secret != "" {
		out["client_secret"], out["client_secret_expires_at"] = secret, 0
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(out)
}

func stringsOf(s scope.Set) []string {
	var out []string
	for _, sc := range s.List() {
		out = append(out, string(sc))
	}
	return out
}

// newClientID returns a random client ID (24 bytes, base64url) that does
// not begin with "-", so an operator can pass it to a command as an
// argument and not a flag.
func newClientID() string {
	for {
		if id := randomString(24); id[0] != '-' {
			return id
		}
	}
}

// randomString returns n random bytes, base64url-encoded.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
