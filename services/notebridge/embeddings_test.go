package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/joplin/embed"
)

// TestEmbeddingsSettings: search by meaning is off without a URL; a
// model or key file without one, a bad URL, a missing model or an open
// key file stop the start with a message naming the setting, never the key.
func TestEmbeddingsSettings(t *testing.T) {
	dir := t.TempDir()
	private, open := filepath.Join(dir, "key"), filepath.Join(dir, "open-key")
	os.WriteFile(private, []byte("sk-secret-value\n"), 0o600)
	os.WriteFile(open, []byte("sk-secret-value\n"), 0o644)
	log := slog.New(slog.DiscardHandler)
	if m, err := (&config{}).meaning(log); err != nil || m.Provider != nil {
		t.Errorf("default: %v %v, want off", m, err)
	}
	if m, err := (&config{EmbeddingsURL: "http://localhost:11434/v1", EmbeddingsModel: "nomic-embed-text", EmbeddingsKeyFile: private}).meaning(log); err != nil || m.Provider == nil {
		t.Errorf("configured: %v", err)
	}
	for name, c := range map[string]config{
		"model without URL":    {EmbeddingsModel: "m"},
		"key without URL":      {EmbeddingsKeyFile: private},
		"no model":             {EmbeddingsURL: "http://localhost:11434/v1"},
		"not http":             {EmbeddingsURL: "localhost:11434", EmbeddingsModel: "m"},
		"key readable by all":  {EmbeddingsURL: "http://localhost:11434/v1", EmbeddingsModel: "m", EmbeddingsKeyFile: open},
		"key file not present": {EmbeddingsURL: "http://localhost:11434/v1", EmbeddingsModel: "m", EmbeddingsKeyFile: filepath.Join(dir, "none")},
	} {
		_, err := c.meaning(log)
		if err == nil || !strings.Contains(err.Error(), "embeddings") || strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestBundledEmbedderIsUsedWhenItRuns(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	lookups := 0
	resolves := func(found bool) func(context.Context, string) ([]string, error) {
		return func(_ context.Context, host string) ([]string, error) {
			lookups++
			if host != "embedder" {
				t.Errorf("looked up %q, want the bundled URL's host", host)
			}
			if !found {
				return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
			}
			return []string{"172.18.0.5"}, nil
		}
	}
	const bundled = "http://embedder:8090/v1"
	m, err := (&config{EmbeddingsBundledURL: bundled, lookupHost: resolves(true)}).meaning(log)
	if err != nil || m.Provider == nil || m.Provider.Model() != bundledEmbeddingsModel {
		t.Fatalf("profile on: %v %v, want the bundled model", m.Provider, err)
	}
	if p := m.Provider.(*embed.Client); p.Endpoint() != bundled+"/embeddings" {
		t.Errorf("bundled endpoint %s", p.Endpoint())
	}
	if m, err := (&config{EmbeddingsBundledURL: bundled, lookupHost: resolves(false)}).meaning(log); err != nil || m.Provider != nil {
		t.Errorf("profile off: %v %v, want search by meaning off", m.Provider, err)
	}
	// A provider of the person's own wins, and the bundled host is not even
	// looked up.
	before := lookups
	m, err = (&config{EmbeddingsURL: "http://localhost:11434/v1", EmbeddingsModel: "nomic-embed-text", EmbeddingsBundledURL: bundled, lookupHost: resolves(true)}).meaning(log)
	if err != nil || m.Provider.Model() != "nomic-embed-text" || lookups != before {
		t.Errorf("own provider: %v %v (%d lookups)", m.Provider, err, lookups-before)
	}
}
