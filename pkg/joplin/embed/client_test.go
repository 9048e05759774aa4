package embed_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/joplin/embed"
	"github.com/notebridge/notebridge/pkg/testkit/embedtest"
)

const key = "sk-test-embeddings-key-0123456789"

func newClient(t *testing.T, s *embedtest.Server, cfg embed.Config) *embed.Client {
	t.Helper()
	cfg.BaseURL, cfg.Model = s.BaseURL(), "test-model"
	c, err := embed.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func keyFile(t *testing.T, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, []byte(key+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEmbedOrdersByIndexAndSendsTheKey(t *testing.T) {
	s := embedtest.New()
	defer s.Close()
	s.Key = key
	c := newClient(t, s, embed.Config{KeyFile: keyFile(t, 0o600)})
	vecs, err := c.Embed(context.Background(), []string{"kitchen budget", "guitar lessons"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 2 || len(vecs[0]) != 64 {
		t.Fatalf("got %d vectors of %d", len(vecs), len(vecs[0]))
	}
	// The stub answers in reverse order; the client puts them back.
	for i, text := range []string{"kitchen budget", "guitar lessons"} {
		want := embedtest.Vector(text, 64)
		for j := range want {
			if vecs[i][j] != want[j] {
				t.Fatalf("vector %d is not the embedding of %q", i, text)
			}
		}
	}
	if s.Auth != "Bearer "+key {
		t.Errorf("Authorization %q", s.Auth)
	}
}

func TestProviderFailuresAreTyped(t *testing.T) {
	s := embedtest.New()
	defer s.Close()
	s.Key = key
	c := newClient(t, s, embed.Config{KeyFile: keyFile(t, 0o600)})
	ctx := context.Background()

	s.Set(func(s *embedtest.Server) { s.RateLimit = 1 })
	var rl *embed.RateLimited
	if _, err := c.Embed(ctx, []string{"a"}); !errors.As(err, &rl) {
		t.Errorf("429: %v, want RateLimited", err)
	}
	s.Set(func(s *embedtest.Server) { s.MaxInput = 3 })
	if _, err := c.Embed(ctx, []string{"long text"}); !errors.Is(err, embed.ErrTooLarge) {
		t.Errorf("oversized: %v, want ErrTooLarge", err)
	}
	s.Set(func(s *embedtest.Server) { s.MaxInput, s.Fail = 0, true })
	_, err := c.Embed(ctx, []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("outage: %v", err)
	}
	s.Set(func(s *embedtest.Server) { s.Fail, s.Key = false, "another" })
	_, err = c.Embed(ctx, []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "refused the key") {
		t.Errorf("refused key: %v", err)
	}
}

// TestKeyNeverInErrors: a provider that echoes the key in an error
// answer has it masked.
func TestKeyNeverInErrors(t *testing.T) {
	for _, status := range []int{400, 401, 500} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "bad request for "+r.Header.Get("Authorization"), status)
		}))
		c, err := embed.New(embed.Config{BaseURL: srv.URL, Model: "m", KeyFile: keyFile(t, 0o600)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Embed(context.Background(), []string{"a"}); err == nil || strings.Contains(err.Error(), key) {
			t.Errorf("HTTP %d: %v (the key must not appear)", status, err)
		}
		srv.Close()
	}
}

func TestSlowProviderIsCutByTheTimeout(t *testing.T) {
	s := embedtest.New()
	defer s.Close()
	s.Stall = make(chan struct{})
	defer close(s.Stall)
	c := newClient(t, s, embed.Config{Timeout: 20 * time.Millisecond})
	if _, err := c.Embed(context.Background(), []string{"a"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stalled provider: %v, want a deadline error", err)
	}
}

func TestMalformedAnswers(t *testing.T) {
	for name, body := range map[string]string{
		"not json":         `nope`,
		"too few":          `{"data":[{"index":0,"embedding":[1,2]}]}`,
		"repeated index":   `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`,
		"uneven lengths":   `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`,
		"empty vector":     `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`,
		"index past input": `{"data":[{"index":0,"embedding":[1,2]},{"index":5,"embedding":[1,2]}]}`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) }))
		c, err := embed.New(embed.Config{BaseURL: srv.URL, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Embed(context.Background(), []string{"a", "b"}); !errors.Is(err, embed.ErrBadAnswer) {
			t.Errorf("%s: %v, want ErrBadAnswer", name, err)
		}
		srv.Close()
	}
}

func TestConfigIsChecked(t *testing.T) {
	open := keyFile(t, 0o644)
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	for name, cfg := range map[string]embed.Config{
		"no scheme":       {BaseURL: "localhost:11434/v1", Model: "m"},
		"ftp":             {BaseURL: "ftp://host/v1", Model: "m"},
		"user in URL":     {BaseURL: "http://me:" + key + "@host/v1", Model: "m"},
		"query in URL":    {BaseURL: "http://host/v1?api_key=" + key, Model: "m"},
		"no model":        {BaseURL: "http://host/v1"},
		"open key file":   {BaseURL: "http://host/v1", Model: "m", KeyFile: open},
		"empty key file":  {BaseURL: "http://host/v1", Model: "m", KeyFile: empty},
		"missing keyfile": {BaseURL: "http://host/v1", Model: "m", KeyFile: "/nonexistent/key"},
	} {
		_, err := embed.New(cfg)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), key) {
			t.Errorf("%s: the error shows the key: %v", name, err)
		}
	}
	c, err := embed.New(embed.Config{BaseURL: "http://localhost:11434/v1/", Model: "nomic-embed-text"})
	if err != nil || c.Endpoint() != "http://localhost:11434/v1/embeddings" {
		t.Errorf("endpoint %v %v", c, err)
	}
}
