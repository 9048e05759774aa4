package joplin

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// APIError is a non-2xx answer from Joplin. Message is the first line of
// Joplin's error text with paths removed; it is for the bridge's own
// decisions (e.g. recognising a duplicate tag), not for clients. Its
// domain error, reached through errors.As, is what clients see. A 5xx
// answer to a write is WRITE_OUTCOME_UNKNOWN: Joplin can fail after it has
// written (see NotApplied).
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

func statusError(status int, body []byte, write bool) error {
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
	case status >= 500 && write:
		e.domain = domainerr.New(domainerr.WriteOutcomeUnknown,
			"Joplin answered the write with HTTP %d; it may or may not have been applied", status).
			WithDetails(map[string]any{"status": status})
	default:
		e.domain = rejected(status)
	}
	return e
}

func rejected(status int) *domainerr.Error {
	return domainerr.New(domainerr.JoplinError, "Joplin rejected the request (HTTP %d)", status).
		WithDetails(map[string]any{"status": status})
}

// NotApplied returns e as a certain refusal, JOPLIN_ERROR, for a write the
// caller has checked was not applied (say, the object it would have created
// is absent).
func (e *APIError) NotApplied() *APIError {
	return &APIError{Status: e.Status, Message: e.Message, domain: rejected(e.Status)}
}

// AnsweredServerError reports whether err is a 5xx answer from Joplin: unlike
// a lost answer, Joplin has finished handling the request, so what it holds
// now tells whether a write was applied.
func AnsweredServerError(err error) (*APIError, bool) {
	var ae *APIError
	if errors.As(err, &ae) && ae.Status >= 500 {
		return ae, true
	}
	return nil, false
}

// IsStatus reports whether err is a Joplin answer with the given status.
func IsStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}

// Unchanged reports whether two stats of a path show no change between
// them: both absent (nil), or the same file with the same size and
// modification time. The token file is re-read, and the health check asks
// Joplin again, when it is not.
func Unchanged(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
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
	if t.stat != nil && Unchanged(t.stat, fi) {
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
