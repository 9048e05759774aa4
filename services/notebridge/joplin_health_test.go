package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/identity"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// healthJoplin is a fake Joplin accepting the token
// "the-right-token-0123456789" and a token file holding token.
func healthJoplin(t *testing.T, token string) (*joplinfake.Server, *httptest.Server, string) {
	t.Helper()
	fake := joplinfake.New("the-right-token-0123456789")
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	tf := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tf, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return fake, srv, tf
}

// TestJoplinHealthTellsConfigurationFromOutage: a Joplin that refuses the
// token makes the container unhealthy; a Joplin that does not answer does
// not (the outage is retried); the answer is reused for healthEvery, with
// no request, while the token file is unchanged, and a fixed token is
// seen at the next probe.
func TestJoplinHealthTellsConfigurationFromOutage(t *testing.T) {
	fake, srv, tf := healthJoplin(t, "a-wrong-token-0123456789")
	c, err := joplin.New(joplin.Config{BaseURL: srv.URL, TokenFile: tf, AvailabilityWait: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := newJoplinHealth(c, tf)
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	h.now = func() time.Time { return now }
	ctx := context.Background()
	if de, ok := domainerr.As(h.Check(ctx)); !ok || de.Code != domainerr.JoplinAuthFailed {
		t.Fatalf("refused token: %v, want JOPLIN_AUTH_FAILED", h.Check(ctx))
	}
	asked := len(fake.Requests())
	now = now.Add(healthEvery - time.Second)
	if h.Check(ctx) == nil || len(fake.Requests()) != asked {
		t.Errorf("nothing changed within healthEvery: the answer was not reused (%d requests, were %d)", len(fake.Requests()), asked)
	}
	os.WriteFile(filepath.Join(filepath.Dir(tf), "token.new"), []byte("the-right-token-0123456789"), 0o600)
	os.Rename(filepath.Join(filepath.Dir(tf), "token.new"), tf) // as secrets --joplin-token-from writes it
	if err := h.Check(ctx); err != nil {
		t.Errorf("token fixed, within healthEvery of the refusal: %v", err)
	}
	fake.SetDown(true)
	now = now.Add(healthEvery)
	if err := h.Check(ctx); err != nil {
		t.Errorf("Joplin down is an outage, not a configuration error: %v", err)
	}
}

// TestJoplinForgetHealsAtTheNextProbe: a bridge refusing another Joplin
// (JOPLIN_CHANGED) is healthy at the first probe after `joplin forget`,
// not healthEvery later, so `docker compose up --wait` right after the
// forget succeeds (issue 36: it failed, and worked 10 s later).
func TestJoplinForgetHealsAtTheNextProbe(t *testing.T) {
	_, srv, tf := healthJoplin(t, "the-right-token-0123456789")
	state := t.TempDir()
	other := identity.Record{Schema: 1, RecordedAt: time.Now().UTC(), Endpoint: "http://another-joplin:41184",
		Anchors: []identity.Anchor{{Kind: "folders", ID: strings.Repeat("a", 32), Created: 1}}}
	raw, _ := json.Marshal(other)
	if err := os.WriteFile(filepath.Join(state, identity.FileName), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	c := &config{JoplinURL: srv.URL, JoplinTokenFile: tf, StateDir: state, Toolsets: "joplin", MaxResource: 1 << 20,
		MaxRequestBytes: 1 << 20, MaxDepth: 64, MaxActive: 4}
	a, err := newApp(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	if _, err := a.exec.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "create_notebook", json.RawMessage(`{"title":"Mine"}`)); err == nil {
		t.Fatal("a call reached the Joplin the bridge does not know")
	}
	check := a.joplinHealth(tf, state)
	if err := check(context.Background()); !domainerr.HasCode(err, domainerr.JoplinChanged) {
		t.Fatalf("another Joplin: %v, want JOPLIN_CHANGED", err)
	}
	if had, err := identity.Forget(state); !had || err != nil {
		t.Fatalf("forget: %v %v", had, err)
	}
	if err := check(context.Background()); err != nil {
		t.Errorf("the probe right after joplin forget: %v, want healthy", err)
	}
}

// TestJoplinForgetCommand: forget removes the identity file, then asks
// the running server's health URL and says whether it serves the Joplin
// configured now (exit 1, with the reason, when it does not); with no
// server there, the next call records the Joplin.
func TestJoplinForgetCommand(t *testing.T) {
	state := t.TempDir()
	nobody := "http://127.0.0.1:1/healthz"
	stdout, stderr, code := runCLI(t, "joplin", "forget", "--state-dir", state, "--url", nobody)
	if code != 0 || !strings.Contains(stdout, "no Joplin identity was recorded") || !strings.Contains(stdout, "the next call records") {
		t.Fatalf("nothing to forget: %d %q %q", code, stdout, stderr)
	}
	healthy, refused := healthServer(t, http.StatusOK, `{"status":"ok"}`),
		healthServer(t, http.StatusServiceUnavailable, `{"status":"misconfigured","code":"JOPLIN_AUTH_FAILED"}`)
	os.WriteFile(filepath.Join(state, identity.FileName), []byte(`{"schema":1}`), 0o600)
	stdout, _, code = runCLI(t, "joplin", "forget", "--state-dir", state, "--url", healthy)
	if _, err := os.Stat(filepath.Join(state, identity.FileName)); code != 0 || err == nil || !strings.Contains(stdout, "forgot the Joplin") ||
		!strings.Contains(stdout, "serves the Joplin configured now") {
		t.Fatalf("forget beside a healthy server: %d %q %v", code, stdout, err)
	}
	if _, stderr, code := runCLI(t, "joplin", "forget", "--state-dir", state, "--url", refused); code != 1 || !strings.Contains(stderr, "JOPLIN_AUTH_FAILED") {
		t.Errorf("forget beside a server refused by the new Joplin: %d %q", code, stderr)
	}
	if _, stderr, code := runCLI(t, "joplin"); code != 2 || !strings.Contains(stderr, "forget") {
		t.Errorf("joplin without a subcommand: %d %q", code, stderr)
	}
}

// healthServer answers GET /healthz with status and body; it returns the
// health URL.
func healthServer(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/healthz"
}

// TestOKFOnlyServerIgnoresJoplinHealth: a server without the Joplin
// toolset needs no Joplin token to be healthy.
func TestOKFOnlyServerIgnoresJoplinHealth(t *testing.T) {
	for toolsets, want := range map[string]bool{"okf": false, "joplin": true, "": true} {
		c := &config{JoplinURL: "http://127.0.0.1:1", StateDir: t.TempDir(), Toolsets: toolsets, MaxResource: 1 << 20,
			MaxRequestBytes: 1 << 20, MaxDepth: 64, MaxActive: 4}
		a, err := newApp(c, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if got := a.joplinHealth(c.JoplinTokenFile, c.StateDir) != nil; got != want {
			t.Errorf("toolsets %q: Joplin health check %v, want %v", toolsets, got, want)
		}
		a.close()
	}
}

// TestJoplinHealthSeesThroughTheView: the health check runs as notebridge
// itself (principal.System) on the app's client, whose notebook view
// refuses a request without a principal: a token refused once the
// identity was checked still makes the container unhealthy.
func TestJoplinHealthSeesThroughTheView(t *testing.T) {
	_, srv, tf := healthJoplin(t, "the-right-token-0123456789")
	c := &config{JoplinURL: srv.URL, JoplinTokenFile: tf, StateDir: t.TempDir(), Toolsets: "joplin", MaxResource: 1 << 20,
		MaxRequestBytes: 1 << 20, MaxDepth: 64, MaxActive: 4}
	a, err := newApp(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	h := newJoplinHealth(a.joplin, tf)
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	h.now = func() time.Time { return now }
	if err := h.Check(context.Background()); err != nil {
		t.Fatalf("healthy Joplin: %v", err)
	}
	os.WriteFile(tf, []byte("a-wrong-token-0123456789"), 0o600)
	now = now.Add(healthEvery)
	if err := h.Check(context.Background()); !domainerr.HasCode(err, domainerr.JoplinAuthFailed) {
		t.Fatalf("refused token through the app's client: %v, want JOPLIN_AUTH_FAILED", err)
	}
}
