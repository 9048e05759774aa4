package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
