package oauthserver

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ory/fosite"

	"github.com/notebridge/notebridge/pkg/internal/atomicfile"
)

// secretSource is the token-signing secret as the file holds it now: it
// is re-read when the file was replaced (notebridge oauth rotate-secret in
// another process), so a rotation takes effect on the next request.
type secretSource struct {
	path   string
	mu     sync.Mutex
	seen   os.FileInfo
	secret []byte
}

// get returns the current secret; a file that cannot be read or is not 32
// bytes fails every token operation (closed).
func (src *secretSource) get() ([]byte, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	fi, err := os.Stat(src.path)
	if err != nil {
		return nil, fmt.Errorf("oauth token secret: %w", err)
	}
	if src.seen != nil && os.SameFile(src.seen, fi) && src.seen.ModTime().Equal(fi.ModTime()) {
		return src.secret, nil
	}
	b, err := loadSecret(src.path)
	if err != nil {
		return nil, err
	}
	src.seen, src.secret = fi, b
	return b, nil
}

// rotatingConfig is fosite's configuration with the global secret read
// from a secretSource on every use.
type rotatingConfig struct {
	*fosite.Config
	secret *secretSource
}

// GetGlobalSecret implements fosite.GlobalSecretProvider.
func (c rotatingConfig) GetGlobalSecret(context.Context) ([]byte, error) { return c.secret.get() }

// RotateSecret replaces the token-signing secret of the authorization
// server and forgets every code and token: every token issued so far is
// invalid at once, also in a server that is running (it re-reads both
// files on its next request). Clients stay registered; each needs the
// owner's consent again.
func (o *Operator) RotateSecret() error {
	s := o.store
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("oauth token secret: %w", err)
	}
	// The secret first: should the state not be written, the old tokens
	// no longer verify anyway.
	if err := atomicfile.Write(secretPath(o.stateDir), b, time.Time{}); err != nil {
		return fmt.Errorf("write oauth token secret: %w", err)
	}
	for _, m := range s.st.tokenMaps() {
		clear(m)
	}
	clear(s.st.Grants)
	return s.commit()
}
