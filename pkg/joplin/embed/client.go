// Package embed is the client of an embedding provider the person runs:
// any server speaking OpenAI's POST /v1/embeddings (Ollama, llama.cpp's
// server, LM Studio, LocalAI, OpenAI). It sends only the texts it is given
// and the model name, with the key as a bearer token when one is set; the
// key never appears in errors or logs.
package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/internal/privatefile"
)

// Config sets a Client up.
type Config struct {
	// BaseURL is the API's base URL as OpenAI clients take it
	// (http://localhost:11434/v1); /embeddings is appended.
	BaseURL string
	Model   string
	// KeyFile, when set, holds the key sent as a bearer token. It must be
	// private to its owner (mode 0600).
	KeyFile string
	// Timeout bounds one request (default 30 s).
	Timeout time.Duration
	// HTTP is the transport (default: a client of its own).
	HTTP *http.Client
	// QueryPrefix and DocumentPrefix, when not nil, replace the prefixes
	// the table gives Model (KnownPrefixes); "" sends the text as it is.
	QueryPrefix, DocumentPrefix *string
}

// Client calls one provider with one model.
type Client struct {
	endpoint string
	model    string
	key      string
	http     *http.Client
	timeout  time.Duration
	prefixes Prefixes
}

// Errors a caller acts on.
var (
	// ErrTooLarge: the provider refused an input as too long (HTTP 413, or
	// 400 naming the context length or input size).
	ErrTooLarge = errors.New("the embedding provider refused an input as too long")
	// ErrBadAnswer: the answer is not a well-formed embeddings response.
	ErrBadAnswer = errors.New("the embedding provider's answer is malformed")
)

// RateLimited is an HTTP 429 answer; RetryAfter is the provider's wait,
// zero when it named none.
type RateLimited struct{ RetryAfter time.Duration }

func (e *RateLimited) Error() string {
	return "the embedding provider is rate limiting (HTTP 429)"
}

// New checks cfg and returns a client. It reads the key file once.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("embeddings URL: want an http(s) base URL such as http://localhost:11434/v1")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("embeddings URL: give the API's base URL only (no user, query or fragment); put a key in the key file")
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("embeddings model is not set (--embeddings-model)")
	}
	c := &Client{endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/embeddings", model: cfg.Model, http: cfg.HTTP, timeout: cfg.Timeout}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.timeout <= 0 {
		c.timeout = 30 * time.Second
	}
	c.prefixes, _ = KnownPrefixes(cfg.Model)
	if cfg.QueryPrefix != nil {
		c.prefixes.Query = *cfg.QueryPrefix
	}
	if cfg.DocumentPrefix != nil {
		c.prefixes.Document = *cfg.DocumentPrefix
	}
	if cfg.KeyFile != "" {
		if err := privatefile.Check(cfg.KeyFile); err != nil {
			return nil, fmt.Errorf("embeddings key file %s: %w", cfg.KeyFile, err)
		}
		b, err := os.ReadFile(cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("embeddings key file %s cannot be read: %w", cfg.KeyFile, errors.Unwrap(err))
		}
		if c.key = strings.TrimSpace(string(b)); c.key == "" {
			return nil, fmt.Errorf("embeddings key file %s is empty", cfg.KeyFile)
		}
	}
	return c, nil
}

// Model is the model name sent with every request.
func (c *Client) Model() string { return c.model }

// Prefixes are the prefixes put before queries and documents.
func (c *Client) Prefixes() Prefixes { return c.prefixes }

// Endpoint is the URL requests go to.
func (c *Client) Endpoint() string { return c.endpoint }

// maxAnswerBytes bounds a response body: 256 inputs of 4,096 dimensions
// written as JSON numbers stay well under it.
const maxAnswerBytes = 64 << 20

// Embed returns one vector per document text (a passage to be searched),
// in order, each sent after the document prefix. All vectors have the same
// length, or the answer is ErrBadAnswer.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, c.prefixes.Document, texts)
}

// EmbedQuery returns the vector of a search query, sent after the query
// prefix.
func (c *Client) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := c.embed(ctx, c.prefixes.Query, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

// embed sends texts, each after prefix, in one request.
func (c *Client) embed(ctx context.Context, prefix string, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	input := texts
	if prefix != "" {
		input = make([]string, len(texts))
		for i, t := range texts {
			input[i] = prefix + t
		}
	}
	body, err := json.Marshal(struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{c.model, input})
	if err != nil {
		return nil, fmt.Errorf("encode embeddings request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embedding provider %s: %w", c.endpoint, stripURL(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("embedding provider %s: read answer: %w", c.endpoint, stripURL(err))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(resp, raw)
	}
	if len(raw) > maxAnswerBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrBadAnswer, maxAnswerBytes)
	}
	return decode(raw, len(texts))
}

// decode reads an OpenAI embeddings answer, ordering vectors by index.
func decode(raw []byte, n int) ([][]float32, error) {
	var ans struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadAnswer, err)
	}
	if len(ans.Data) != n {
		return nil, fmt.Errorf("%w: %d vectors for %d inputs", ErrBadAnswer, len(ans.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range ans.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("%w: index %d out of range or repeated", ErrBadAnswer, d.Index)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != len(ans.Data[0].Embedding) {
			return nil, fmt.Errorf("%w: vectors of different lengths in one answer", ErrBadAnswer)
		}
		for _, v := range d.Embedding {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("%w: a vector holds NaN or infinity", ErrBadAnswer)
			}
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// statusError turns a non-200 answer into an error: 429 is RateLimited,
// 413 or a 400 about input length is ErrTooLarge, 401 and 403 name the
// key without the provider's message (which may echo it). At most 200
// bytes of the provider's message are kept, the key masked.
func (c *Client) statusError(resp *http.Response, raw []byte) error {
	msg := strings.TrimSpace(string(raw))
	if c.key != "" {
		msg = strings.ReplaceAll(msg, c.key, "[key]")
	}
	if len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "") + "…"
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("the embedding provider refused the key (HTTP %d); check --embeddings-key-file", resp.StatusCode)
	case resp.StatusCode == http.StatusTooManyRequests:
		return &RateLimited{RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	case resp.StatusCode == http.StatusRequestEntityTooLarge:
		return fmt.Errorf("%w: HTTP 413 %s", ErrTooLarge, msg)
	case resp.StatusCode == http.StatusBadRequest && mentionsLength(msg):
		return fmt.Errorf("%w: HTTP 400 %s", ErrTooLarge, msg)
	}
	return fmt.Errorf("embedding provider answered HTTP %d: %s", resp.StatusCode, msg)
}

func mentionsLength(msg string) bool {
	m := strings.ToLower(msg)
	for _, w := range []string{"context length", "too long", "too large", "maximum context", "max_tokens", "token limit", "exceeds"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// retryAfter reads a Retry-After header in seconds (an HTTP date is
// ignored: providers send seconds).
func retryAfter(v string) time.Duration {
	s, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || s < 0 {
		return 0
	}
	return time.Duration(min(s, 3600)) * time.Second
}

// stripURL drops the request URL from a transport error (the endpoint is
// named once by the caller).
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
