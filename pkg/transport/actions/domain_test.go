package actions

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

func TestOriginFromDomain(t *testing.T) {
	for domain, want := range map[string]string{
		"notes.example.org":     "https://notes.example.org",
		" Notes.Example.ORG. ":  "https://notes.example.org",
		"notes.example.org:443": "https://notes.example.org",
	} {
		if got, derr := OriginFromDomain(domain); derr != nil || got != want {
			t.Errorf("OriginFromDomain(%q) = %q, %v; want %q", domain, got, derr, want)
		}
	}
	for domain, reason := range map[string]string{
		"":                       "set NOTEBRIDGE_DOMAIN",
		"localhost":              "local name",
		"LOCALHOST":              "local name",
		"notes.localhost":        "local name",
		"localhost:8443":         "local name",
		"127.0.0.1":              "local name",
		"::1":                    "local name",
		"[::1]:443":              "local name",
		"0.0.0.0":                "local name",
		"10.0.0.1":               "not an IP address",
		"notes.example.org:8443": "port 443",
		"notes":                  "fully qualified",
		"two words.example.org":  "not a URL",
	} {
		got, derr := OriginFromDomain(domain)
		if derr == nil || derr.Code != domainerr.PublicDomainRequired || derr.Retryable || got != "" ||
			!strings.Contains(derr.Message, "GPT Actions need a public domain") || !strings.Contains(derr.Message, reason) {
			t.Errorf("OriginFromDomain(%q) = %q, %v; want PUBLIC_DOMAIN_REQUIRED naming %q", domain, got, derr, reason)
		}
	}
}

// TestDocumentRouteWithoutPublicDomain: with no document, GET /openapi.json
// answers PUBLIC_DOMAIN_REQUIRED (404, the usual error body) after
// authentication, never a document for another host.
func TestDocumentRouteWithoutPublicDomain(t *testing.T) {
	get := func(url string, auth bool) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url+DocumentPath, nil)
		if auth {
			req.Header.Set(authHeader[0], authHeader[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, local := OriginFromDomain("localhost")
	for name, cfg := range map[string]Config{"local domain": {DocumentError: local}, "no domain": {}} {
		srv, _ := newActions(t, cfg, nil)
		if code, body := get(srv.URL, false); code != 401 {
			t.Errorf("%s, unauthenticated: %d %s", name, code, body)
		}
		code, body := get(srv.URL, true)
		var e struct{ Error domainerr.Error }
		if code != 404 || json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != domainerr.PublicDomainRequired ||
			!strings.Contains(e.Error.Message, "NOTEBRIDGE_DOMAIN") || strings.Contains(body, "openapi") {
			t.Errorf("%s: %d %s", name, code, body)
		}
	}
	srv, _ := newActions(t, Config{Document: []byte(`{"openapi":"3.1.0"}`)}, nil)
	if code, body := get(srv.URL, true); code != 200 || body != `{"openapi":"3.1.0"}` {
		t.Errorf("document: %d %s", code, body)
	}
}
