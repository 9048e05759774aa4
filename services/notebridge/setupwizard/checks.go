package setupwizard

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The codes setup answers with. The sync ones are joplin_status's
// (docs/sync.md), so a refused login reads the same before and after it is
// saved; all are listed in docs/errors.md.
const (
	CodeDomainUnresolved = "SETUP_DOMAIN_UNRESOLVED"
	CodeBadAnswer        = "SETUP_BAD_ANSWER"
	CodeSyncConfig       = "SYNC_CONFIG"
	CodeSyncBadURL       = "SYNC_BAD_URL"
	CodeSyncAuthFailed   = "SYNC_AUTH_FAILED"
	CodeSyncUnreachable  = "SYNC_UNREACHABLE"
)

// Problem is an answer setup refuses: a code, the setting to fix and a
// message without secrets.
type Problem struct {
	Code, Setting, Message string
}

func (p *Problem) Error() string { return p.Code + " (" + p.Setting + "): " + p.Message }

// Resolver looks a host name up (net.DefaultResolver.LookupHost in
// production).
type Resolver func(ctx context.Context, host string) ([]string, error)

// CheckDomain refuses a public name that does not resolve: connectors
// could not reach it, and Caddy could not get its certificate.
func CheckDomain(ctx context.Context, resolve Resolver, domain string) error {
	addrs, err := resolve(ctx, domain)
	if err != nil || len(addrs) == 0 {
		return &Problem{CodeDomainUnresolved, "NOTEBRIDGE_DOMAIN",
			fmt.Sprintf("%q does not resolve; point its DNS record at this host first, or choose a tunnel (docs/tunnels.md)", domain)}
	}
	return nil
}

// checkedTargets are the sync targets whose login setup tries before
// saving; the others are tried by the first sync (joplin_status).
var checkedTargets = map[string]bool{"webdav": true, "nextcloud": true, "joplin-server": true, "joplin-cloud": true}

// joplinCloudURL is Joplin Cloud's API, the bundled Joplin's default for
// that target (services/joplinsync).
const joplinCloudURL = "https://api.joplincloud.com"

// CheckSync tries the sync login the way the bundled Joplin will use it:
// WebDAV and Nextcloud with a PROPFIND of the folder, Joplin Server with a
// session (Joplin Cloud is a Joplin Server; a blank URL is its own). It
// answers nil for a target it does not check.
func CheckSync(ctx context.Context, client *http.Client, target, rawURL, user, password string) error {
	if !checkedTargets[target] {
		return nil
	}
	if user == "" || password == "" {
		return &Problem{CodeSyncConfig, "NOTEBRIDGE_SYNC_USER", "the " + target + " target needs a user name and a password"}
	}
	if target == "joplin-cloud" && rawURL == "" {
		rawURL = joplinCloudURL
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return &Problem{CodeSyncBadURL, "NOTEBRIDGE_SYNC_URL", fmt.Sprintf("%.200q is not an http(s) URL", rawURL)}
	}
	var req *http.Request
	if target == "joplin-server" || target == "joplin-cloud" {
		body, _ := json.Marshal(map[string]string{"email": user, "password": password})
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(u.String(), "/")+"/api/sessions", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
	} else {
		req, err = http.NewRequestWithContext(ctx, "PROPFIND", u.String(), nil)
		if err == nil {
			req.SetBasicAuth(user, password)
			req.Header.Set("Depth", "0")
		}
	}
	if err != nil {
		return &Problem{CodeSyncBadURL, "NOTEBRIDGE_SYNC_URL", "the URL gives no request"}
	}
	resp, err := client.Do(req)
	if err != nil {
		var unknown x509.UnknownAuthorityError
		var invalid x509.CertificateInvalidError
		var hostname x509.HostnameError
		if errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &hostname) {
			return &Problem{CodeSyncBadURL, "NOTEBRIDGE_SYNC_URL", "the target's certificate is not trusted"}
		}
		return &Problem{CodeSyncUnreachable, "NOTEBRIDGE_SYNC_URL", "no answer from " + u.Host + " (DNS, connection or timeout)"}
	}
	resp.Body.Close()
	switch s := resp.StatusCode; {
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return &Problem{CodeSyncAuthFailed, "NOTEBRIDGE_SYNC_USER", fmt.Sprintf("the target refused the login (%d); check the user name and the password", s)}
	case s == http.StatusNotFound || s == http.StatusMethodNotAllowed || s == http.StatusConflict:
		return &Problem{CodeSyncBadURL, "NOTEBRIDGE_SYNC_URL", fmt.Sprintf("the target answers %d there; the folder must exist", s)}
	case s >= 500:
		return &Problem{CodeSyncUnreachable, "NOTEBRIDGE_SYNC_URL", fmt.Sprintf("the target answers %d", s)}
	case s >= 200 && s < 300:
		return nil
	}
	return &Problem{CodeSyncBadURL, "NOTEBRIDGE_SYNC_URL", fmt.Sprintf("unexpected answer %d", resp.StatusCode)}
}

// DefaultResolver is the system's.
func DefaultResolver(ctx context.Context, host string) ([]string, error) {
	return net.DefaultResolver.LookupHost(ctx, host)
}
