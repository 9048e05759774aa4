// Package joplin is a typed client for the Joplin Data API. It keeps one
// kept-alive HTTP connection pool, never prints request URLs (they carry the
// token), never forwards Joplin's stack traces, and classifies failures into
// domain errors: unreachable, auth, not found, upstream error, or a write
// whose outcome is unknown.
package joplin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// Config configures a Client.
type Config struct {
	// BaseURL is the Data API origin, e.g. http://127.0.0.1:41184.
	BaseURL string
	// TokenFile holds the API token. It is re-read when it changes.
	TokenFile string
	// RequestTimeout bounds one HTTP exchange.
	RequestTimeout time.Duration
	// AvailabilityWait bounds how long one call waits for an unreachable
	// Joplin before answering JOPLIN_UNAVAILABLE.
	AvailabilityWait time.Duration
	// MaxResponseBytes bounds one response body.
	MaxResponseBytes int64
}

// Defaults for Config's zero fields.
const (
	DefaultBaseURL          = "http://127.0.0.1:41184"
	DefaultRequestTimeout   = 30 * time.Second
	DefaultAvailabilityWait = 5 * time.Second
	DefaultMaxResponseBytes = 64 << 20
)

// Client talks to one Joplin Data API. It is safe for concurrent use.
type Client struct {
	base  *url.URL
	token *tokenFile
	http  *http.Client
	cfg   Config
	guard Guard
	// observers are told of every accepted write (write.go).
	observers []Observer
	// view, when set, narrows every request to what its caller may see
	// (view.go).
	view View
	// breaker fails calls at once while Joplin is known to be down
	// (breaker.go).
	breaker *breaker
	// exchanges are told how each exchange ended (exchange.go).
	exchanges []func(Exchange)
}

// Guard vets the Joplin behind the base URL (pkg/joplin/identity checks that it
// is the one this bridge served before). Check runs before every request
// but /ping, unless the context comes from Unguarded; an error it returns
// is the call's. Lost is told when Joplin was unreachable, so that the
// next Check verifies again.
type Guard interface {
	Check(ctx context.Context) error
	Lost()
}

// SetGuard installs g; call it before the client is used (joplinstack.New
// assembles the service's client in one call).
func (c *Client) SetGuard(g Guard) { c.guard = g }

type unguardedKey struct{}

// Unguarded returns a context whose requests skip the guard: the guard's
// own requests.
func Unguarded(ctx context.Context) context.Context {
	return context.WithValue(ctx, unguardedKey{}, true)
}

// guarded reports whether r, made under ctx, must pass the guard.
func (c *Client) guarded(ctx context.Context, r request) bool {
	return c.guard != nil && r.path != "/ping" && ctx.Value(unguardedKey{}) == nil
}

// New validates cfg and returns a client. It does no network I/O, so a
// bridge can start while Joplin is down.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.AvailabilityWait < 0 {
		cfg.AvailabilityWait = 0
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return nil, errors.New("joplin: base URL must be an http(s) origin without credentials or query")
	}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       60 * time.Second,
		ResponseHeaderTimeout: cfg.RequestTimeout,
	}
	return &Client{
		base:    u,
		token:   &tokenFile{path: cfg.TokenFile},
		http:    &http.Client{Transport: transport, CheckRedirect: noRedirects},
		cfg:     cfg,
		breaker: newBreaker(cfg),
	}, nil
}

// BaseURL is the Data API origin the client talks to, for diagnostics. It
// holds no token: tokens are added per request and never stored in it.
func (c *Client) BaseURL() string { return c.base.String() }

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Endpoint is the base URL in a normal form, so that spellings of one
// address compare equal: scheme and host in lower case, the scheme's
// default port dropped, no trailing slash. It names the Joplin the client
// talks to (say, in a lock file name); it never holds the token.
func (c *Client) Endpoint() string {
	host, port := strings.ToLower(c.base.Hostname()), c.base.Port()
	if c.base.Scheme == "http" && port == "80" || c.base.Scheme == "https" && port == "443" {
		port = ""
	}
	if port != "" || strings.Contains(host, ":") {
		host = net.JoinHostPort(host, port)
		host = strings.TrimSuffix(host, ":")
	}
	return c.base.Scheme + "://" + host + strings.TrimRight(c.base.Path, "/")
}

// NewID returns a fresh Joplin object id (32 lowercase hex characters).
// Creating objects under a client-chosen id makes a lost response checkable.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("joplin: random id: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// request describes one Data API exchange.
type request struct {
	method      string
	path        string
	query       url.Values
	body        []byte
	contentType string
	// parts, when set instead of body, is sent as their concatenation with
	// an exact Content-Length, so large payloads are never copied into one
	// request buffer.
	parts [][]byte
}

func (r request) isWrite() bool { return r.method != http.MethodGet && r.method != http.MethodHead }

// Get reads path into out (which may be nil), retrying while Joplin is
// unreachable for at most the availability wait.
func (c *Client) Get(ctx context.Context, path string, query url.Values, out any) error {
	body, err := c.do(ctx, request{method: http.MethodGet, path: path, query: query})
	if err != nil {
		return err
	}
	return decode(body, out)
}

// GetRaw reads path and returns the body bytes as they came.
func (c *Client) GetRaw(ctx context.Context, path string) ([]byte, error) {
	return c.do(ctx, request{method: http.MethodGet, path: path})
}

// Write sends one mutation with a JSON body and decodes the answer into out.
// It is sent at most once: a connection that fails before the request was
// written is retried within the availability wait; one that fails after is
// a WRITE_OUTCOME_UNKNOWN error.
func (c *Client) Write(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("joplin: encode request: %w", err)
		}
	}
	resp, err := c.do(ctx, request{method: method, path: path, query: query, body: body, contentType: "application/json"})
	if err != nil {
		return err
	}
	return decode(resp, out)
}

// WriteMultipartFile sends one mutation as multipart/form-data holding a
// JSON part "props" and a file part "data" named fileName with content data,
// the form POST and PUT /resources expect. data is streamed from the
// caller's slice, not copied. Like Write, it is sent at most once.
func (c *Client) WriteMultipartFile(ctx context.Context, method, path string, props any, fileName string, data []byte, out any) error {
	propsJSON, err := json.Marshal(props)
	if err != nil {
		return fmt.Errorf("joplin: encode props: %w", err)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.WriteField("props", string(propsJSON)); err != nil {
		return fmt.Errorf("joplin: build multipart body: %w", err)
	}
	if _, err := mw.CreateFormFile("data", fileName); err != nil {
		return fmt.Errorf("joplin: build multipart body: %w", err)
	}
	head := bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := mw.Close(); err != nil {
		return fmt.Errorf("joplin: build multipart body: %w", err)
	}
	resp, err := c.do(ctx, request{
		method: method, path: path, parts: [][]byte{head, data, buf.Bytes()}, contentType: mw.FormDataContentType(),
	})
	if err != nil {
		return err
	}
	return decode(resp, out)
}

// Ping checks that a Joplin Data API answers at the base URL.
func (c *Client) Ping(ctx context.Context) error {
	body, err := c.do(ctx, request{method: http.MethodGet, path: "/ping"})
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(body, []byte("JoplinClipperServer")) {
		return domainerr.New(domainerr.JoplinError, "the service at the configured address is not a Joplin Data API")
	}
	return nil
}

// decode unmarshals a JSON answer into out; a *[]byte out receives the raw
// answer (an empty one is how Joplin says "nothing to do" for some writes).
func decode(body []byte, out any) error {
	if out == nil {
		return nil
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = body
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return domainerr.New(domainerr.JoplinError, "Joplin returned a response that could not be decoded")
	}
	return nil
}

// do runs one exchange with the availability wait. Reads are retried with
// bounded backoff whenever Joplin is unreachable; writes only when the
// request provably never left this process.
func (c *Client) do(ctx context.Context, r request) ([]byte, error) {
	if c.guarded(ctx, r) {
		if err := c.guard.Check(ctx); err != nil {
			return nil, err
		}
	}
	viewed := c.viewed(ctx)
	if viewed {
		if err := c.admit(ctx, &r); err != nil {
			return nil, err
		}
	}
	probe, err := c.breaker.enter()
	if err != nil {
		return nil, err
	}
	if probe {
		defer c.breaker.leave()
	}
	deadline := time.Now().Add(c.cfg.AvailabilityWait)
	backoff := 50 * time.Millisecond
	for {
		body, sent, err := c.once(ctx, r)
		var unreachable *unreachableError
		if err == nil || (sent && !errors.As(err, &unreachable)) {
			c.breaker.answered() // Joplin answered, if only with an error
		}
		c.exchanged(r.method, err)
		if err == nil {
			if r.isWrite() {
				c.wrote(ctx, r, body)
			} else if viewed {
				return c.narrow(ctx, r, body)
			}
			return body, nil
		}
		if !errors.As(err, &unreachable) {
			return nil, err
		}
		if c.guard != nil && ctx.Err() == nil {
			c.guard.Lost()
		}
		if r.isWrite() && sent {
			return nil, domainerr.New(domainerr.WriteOutcomeUnknown,
				"the write was sent to Joplin but no answer arrived; it may or may not have been applied")
		}
		if err := ctx.Err(); err != nil {
			// The caller gave up (a notifications/cancelled, a closed
			// connection): that says nothing about Joplin, so it is no
			// outage. The executor reports context errors as CANCELLED.
			return nil, fmt.Errorf("joplin: request abandoned by the caller: %w", err)
		}
		if probe || time.Now().Add(backoff).After(deadline) {
			c.breaker.down()
			return nil, domainerr.Retryable(domainerr.JoplinUnavailable, "Joplin is not reachable (%s)", unreachable.kind)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Second)
	}
}

// unreachableError marks a failure to exchange with Joplin at all.
type unreachableError struct{ kind string }

func (e *unreachableError) Error() string { return "joplin unreachable: " + e.kind }

// once performs a single HTTP exchange. sent reports whether the request was
// fully written to the connection.
func (c *Client) once(ctx context.Context, r request) (body []byte, sent bool, err error) {
	token, err := c.token.read()
	if err != nil && r.path != "/ping" {
		return nil, false, err
	}
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + r.path
	q := url.Values{}
	for k, v := range r.query {
		q[k] = v
	}
	if r.path != "/ping" {
		q.Set("token", token)
	}
	u.RawQuery = q.Encode()

	actx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	// Set by the transport's writer goroutine, read here after Do. Only a
	// write needs to know whether it was sent (do decides on it), so a read
	// carries no trace.
	var wrote atomic.Bool
	if r.isWrite() {
		actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{
			WroteRequest: func(info httptrace.WroteRequestInfo) { wrote.Store(info.Err == nil) },
		})
	}
	var rdr io.Reader
	var partsLen int64
	switch {
	case r.body != nil:
		rdr = bytes.NewReader(r.body)
	case r.parts != nil:
		readers := make([]io.Reader, len(r.parts))
		for i, p := range r.parts {
			readers[i] = bytes.NewReader(p)
			partsLen += int64(len(p))
		}
		rdr = io.MultiReader(readers...)
	}
	req, err := http.NewRequestWithContext(actx, r.method, u.String(), rdr)
	if err != nil {
		return nil, false, errors.New("joplin: cannot build request")
	}
	if r.parts != nil {
		req.ContentLength = partsLen
	}
	if r.contentType != "" && rdr != nil {
		req.Header.Set("Content-Type", r.contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// Never wrap err: *url.Error embeds the URL, and the URL the token.
		return nil, wrote.Load(), &unreachableError{kind: transportKind(err)}
	}
	defer resp.Body.Close()
	body, tooLarge, err := readBody(resp, c.cfg.MaxResponseBytes)
	if err != nil {
		return nil, true, &unreachableError{kind: "connection lost while reading the answer"}
	}
	if tooLarge {
		return nil, true, domainerr.New(domainerr.JoplinError, "Joplin's answer exceeds %d bytes", c.cfg.MaxResponseBytes)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return body, true, nil
	}
	return nil, true, statusError(resp.StatusCode, body, r.isWrite())
}

// readBody reads a response body of at most max bytes. A body whose
// length is announced is read into one buffer of exactly that size, so a
// large download is not copied as the buffer grows (io.ReadAll allocates
// about twice the body); others are read with io.ReadAll.
func readBody(resp *http.Response, max int64) (body []byte, tooLarge bool, err error) {
	n := resp.ContentLength
	if n > max {
		return nil, true, nil
	}
	if n >= 0 && resp.Request != nil && resp.Request.Method != http.MethodHead {
		body = make([]byte, n)
		if _, err := io.ReadFull(resp.Body, body); err != nil {
			return nil, false, err
		}
		return body, false, nil
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, false, err
	}
	return body, int64(len(body)) > max, nil
}

func transportKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return "connection refused"
	}
	return "connection failed"
}
