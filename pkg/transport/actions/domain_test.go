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
// answers PUBLIC_DOMAIN_REQUIRED (404, the usual error body) with or
// without a credential, never a document for another host.
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
		for _, auth := range []bool{false, true} {
			code, body := get(srv.URL, auth)
			var e struct{ Error domainerr.Error }
			if code != 404 || json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != domainerr.PublicDomainRequired ||
				!strings.Contains(e.Error.Message, "NOTEBRIDGE_DOMAIN") || strings.Contains(body, "openapi") {
				t.Errorf("%s, credential %v: %d %s", name, auth, code, body)
			}
		}
	}
	srv, _ := newActions(t, Config{Document: []byte(`{"openapi":"3.1.0"}`)}, nil)
	if code, body := get(srv.URL, true); code != 200 || body != `{"openapi":"3.1.0"}` {
		t.Errorf("document: %d %s", code, body)
	}
}

// TestDocumentIsPublic: the GPT editor imports the schema by URL without a
// credential, so GET /openapi.json is served to anyone (the document holds
// no secret), and only that exact path is open.
func TestDocumentIsPublic(t *testing.T) {
	doc := []byte(`{"openapi":"3.1.0"}`)
	srv, _ := newActions(t, Config{Document: doc}, nil)
	resp, err := http.Get(srv.URL + DocumentPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != string(doc) {
		t.Errorf("GET %s without a credential: %d %s", DocumentPath, resp.StatusCode, body)
	}
	if resp, _ := call(t, srv.URL+"/v1/read_pad", `{}`); resp.StatusCode != 401 {
		t.Errorf("an operation without a credential beside the open document: %d", resp.StatusCode)
	}
}
