package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/identity"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// TestJoplinHealthTellsConfigurationFromOutage: a Joplin that refuses the
// token makes the container unhealthy; a Joplin that does not answer does
// not (the outage is retried); the answer is reused for healthEvery.
func TestJoplinHealthTellsConfigurationFromOutage(t *testing.T) {
	fake := joplinfake.New("the-right-token-0123456789")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	tf := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tf, []byte("a-wrong-token-0123456789"), 0o600)
	c, err := joplin.New(joplin.Config{BaseURL: srv.URL, TokenFile: tf, AvailabilityWait: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := newJoplinHealth(c)
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	h.now = func() time.Time { return now }
	ctx := context.Background()
	if de, ok := domainerr.As(h.Check(ctx)); !ok || de.Code != domainerr.JoplinAuthFailed {
		t.Fatalf("refused token: %v, want JOPLIN_AUTH_FAILED", h.Check(ctx))
	}
	os.WriteFile(tf, []byte("the-right-token-0123456789"), 0o600)
	if h.Check(ctx) == nil {
		t.Error("the answer was not reused within healthEvery")
	}
	now = now.Add(healthEvery)
	if err := h.Check(ctx); err != nil {
		t.Errorf("token fixed: %v", err)
	}
	fake.SetDown(true)
	now = now.Add(healthEvery)
	if err := h.Check(ctx); err != nil {
		t.Errorf("Joplin down is an outage, not a configuration error: %v", err)
	}
}

func TestJoplinForgetCommand(t *testing.T) {
	state := t.TempDir()
	stdout, stderr, code := runCLI(t, "joplin", "forget", "--state-dir", state)
	if code != 0 || !strings.Contains(stdout, "no Joplin identity was recorded") {
		t.Fatalf("nothing to forget: %d %q %q", code, stdout, stderr)
	}
	os.WriteFile(filepath.Join(state, identity.FileName), []byte(`{"schema":1}`), 0o600)
	stdout, _, code = runCLI(t, "joplin", "forget", "--state-dir", state)
	if _, err := os.Stat(filepath.Join(state, identity.FileName)); code != 0 || err == nil || !strings.Contains(stdout, "forgot the Joplin") {
		t.Fatalf("forget: %d %q %v", code, stdout, err)
	}
	if _, stderr, code := runCLI(t, "joplin"); code != 2 || !strings.Contains(stderr, "forget") {
		t.Errorf("joplin without a subcommand: %d %q", code, stderr)
	}
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
		if got := a.joplinHealth() != nil; got != want {
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
	fake := joplinfake.New("the-right-token-0123456789")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	tf := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tf, []byte("the-right-token-0123456789"), 0o600)
	c := &config{JoplinURL: srv.URL, JoplinTokenFile: tf, StateDir: t.TempDir(), Toolsets: "joplin", MaxResource: 1 << 20,
		MaxRequestBytes: 1 << 20, MaxDepth: 64, MaxActive: 4}
	a, err := newApp(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	h := newJoplinHealth(a.joplin)
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
