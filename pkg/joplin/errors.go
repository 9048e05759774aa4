package joplin

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/notebridge/notebridge/pkg/domainerr"
)

// APIError is a non-2xx answer from Joplin. Message is the first line of
// Joplin's error text with paths removed; it is for the bridge's own
// decisions (e.g. recognising a duplicate tag), not for clients. Its
// domain error, reached through errors.As, is what clients see.
type APIError struct {
	Status  int
	Message string
	domain  *domainerr.Error
}

func (e *APIError) Error() string { return e.domain.Error() }

// Unwrap exposes the client-safe domain error.
func (e *APIError) Unwrap() error { return e.domain }

var pathLike = regexp.MustCompile(`(/[^\s:()'"]+)+`)

// SafeFirstLine returns the first line of s with anything path-like removed,
// truncated to 200 bytes.
func SafeFirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	line = pathLike.ReplaceAllString(line, "…")
	if len(line) > 200 {
		line = line[:200]
	}
	return strings.TrimSpace(line)
}

func statusError(status int, body []byte) error {
	var payload struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &payload)
	e := &APIError{Status: status, Message: SafeFirstLine(payload.Error)}
	switch {
	case status == 401 || status == 403:
		e.domain = domainerr.New(domainerr.JoplinAuthFailed, "Joplin refused the API token; check the token file")
	case status == 404:
		e.domain = domainerr.New(domainerr.NotFound, "the object does not exist in Joplin")
	default:
		e.domain = domainerr.New(domainerr.JoplinError, "Joplin rejected the request (HTTP %d)", status).
			WithDetails(map[string]any{"status": status})
	}
	return e
}

// IsStatus reports whether err is a Joplin answer with the given status.
func IsStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}

// tokenFile reads the API token from a file, re-reading it when its size or
// modification time changes so rotation needs no restart.
type tokenFile struct {
	path string
	mu   sync.Mutex
	stat os.FileInfo
	tok  string
}

func (t *tokenFile) read() (string, error) {
	if t.path == "" {
		return "", domainerr.New(domainerr.JoplinAuthFailed, "no Joplin token file is configured (--joplin-token-file)")
	}
	fi, err := os.Stat(t.path)
	if err != nil {
		return "", domainerr.New(domainerr.JoplinAuthFailed, "the Joplin token file cannot be read")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stat != nil && os.SameFile(t.stat, fi) && t.stat.ModTime().Equal(fi.ModTime()) && t.stat.Size() == fi.Size() {
		return t.tok, nil
	}
	b, err := os.ReadFile(t.path)
	if err != nil {
		return "", domainerr.New(domainerr.JoplinAuthFailed, "the Joplin token file cannot be read")
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", domainerr.New(domainerr.JoplinAuthFailed, "the Joplin token file is empty")
	}
	t.stat, t.tok = fi, tok
	return tok, nil
}
