package oauthserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document):
// a client whose client_id is an https URL publishes its metadata there,
// and the authorization server fetches it. The fetch is an outbound request
// chosen by a stranger, so it is bounded: https only, no redirects, no
// proxy, every dialled address public (outside every block of the IANA
// special-purpose registries that is not globally reachable: specialaddr.go;
// checked on the resolved address at connect time), at most
// MaxRegistrationBytes in cimdTimeout.

const (
	cimdTimeout   = 5 * time.Second
	cimdMaxURLLen = 512
	cimdFreshness = time.Hour
)

// CIMDTesting relaxes the fetch for tests only: loopback addresses are
// allowed and RootCAs trusts a test server. Production never sets it.
type CIMDTesting struct {
	AllowLoopback bool
	RootCAs       *x509.CertPool
	// Timeout replaces the fetch's time bound when set.
	Timeout time.Duration
}

// isCIMDClientID reports whether a client_id names a metadata document.
func isCIMDClientID(id string) bool { return strings.HasPrefix(id, "https://") }

// checkCIMDURL accepts an https URL with a path, without user info, query,
// fragment, port-less oddities or dot segments, whose host is an IP
// address or an ASCII DNS name (checkHost: the URL is the client ID the
// owner is shown).
func checkCIMDURL(raw string) (*url.URL, error) {
	if len(raw) > cimdMaxURLLen {
		return nil, errors.New("the client_id URL is too long")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		strings.Contains(raw, "#") || u.Path == "" || u.Path == "/" {
		return nil, errors.New("the client_id URL must be an https URL with a path and no query or fragment")
	}
	if err := checkHost(u.Hostname()); err != nil {
		return nil, errors.New("the client_id URL " + err.Error())
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return nil, errors.New("the client_id URL must not have dot segments")
		}
	}
	return u, nil
}

// publicAddr reports whether an address may be dialled for a document:
// a global unicast address outside every special-purpose block that is not
// globally reachable (specialBlocks). allowLoopback (tests only) admits
// loopback addresses.
func publicAddr(a netip.Addr, allowLoopback bool) bool {
	a = a.Unmap()
	if a.IsLoopback() {
		return allowLoopback
	}
	return a.IsGlobalUnicast() && !notPublic(a)
}

// dialControl refuses, at connect time (after DNS), every address that is
// not public.
func dialControl(allowLoopback bool) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !publicAddr(ap.Addr(), allowLoopback) {
			return errors.New("the client_id URL resolves to an address that is not public")
		}
		return nil
	}
}

// cimdClient is the HTTP client of document fetches.
func cimdClient(testing CIMDTesting) *http.Client {
	timeout := cimdTimeout
	if testing.Timeout > 0 {
		timeout = testing.Timeout
	}
	dialer := &net.Dialer{
		Timeout: timeout,
		Control: dialControl(testing.AllowLoopback),
	}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dialer.DialContext,
			TLSClientConfig:        &tls.Config{RootCAs: testing.RootCAs, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    timeout,
			ResponseHeaderTimeout:  timeout,
			MaxResponseHeaderBytes: 16 << 10,
			DisableKeepAlives:      true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("redirects are not followed") },
	}
}

// fetchCIMD fetches and validates the document of id, and returns the
// client it registers. The document must name itself as client_id and be
// a public client (token_endpoint_auth_method none): it cannot hold a
// secret.
func (s *Server) fetchCIMD(ctx context.Context, id string) (clientRecord, error) {
	if _, err := checkCIMDURL(id); err != nil {
		return clientRecord{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return clientRecord{}, errors.New("the client_id URL cannot be fetched")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.cimd.Do(req)
	if err != nil {
		return clientRecord{}, errors.New("the client metadata document could not be fetched from a public https address")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return clientRecord{}, fmt.Errorf("the client metadata document answered HTTP %d", resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxRegistrationBytes+1))
	if err != nil {
		return clientRecord{}, errors.New("the client metadata document could not be read")
	}
	reg, scopes, err := ParseRegistration(raw)
	if err != nil {
		return clientRecord{}, err
	}
	if reg.ClientID != id {
		return clientRecord{}, errors.New("the client metadata document does not name its own URL as client_id")
	}
	if reg.AuthMethod != authNone && reg.AuthMethod != "" {
		return clientRecord{}, errors.New("a client metadata document must declare token_endpoint_auth_method none")
	}
	return clientRecord{ID: id, Name: reg.ClientName, RedirectURIs: reg.RedirectURIs, GrantTypes: reg.GrantTypes,
		Scopes: stringsOf(scopes), AuthMethod: authNone, RegisteredAt: s.cfg.Now().UTC(), RegisteredVia: "cimd"}, nil
}

// ensureCIMDClient fetches the document of a URL client_id unless a fresh
// copy is registered. It reports whether the client is usable; on failure
// it has written the error (never a redirect).
func (s *Server) ensureCIMDClient(w http.ResponseWriter, r *http.Request, id string) bool {
	if c, ok := s.store.lookupClient(id); ok && s.cfg.Now().Sub(c.RegisteredAt) < cimdFreshness {
		return true
	}
	c, err := s.fetchCIMD(r.Context(), id)
	if err != nil {
		var em errMetadata
		msg := err.Error()
		if errors.As(err, &em) {
			msg = "the client metadata document is invalid: " + em.msg
		}
		writeJSONError(w, http.StatusBadRequest, "invalid_client", msg)
		return false
	}
	if err := s.store.addClient(c, s.cfg.MaxClients); err != nil {
		writeJSONError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "too many registered clients hold live grants")
		return false
	}
	return true
}
