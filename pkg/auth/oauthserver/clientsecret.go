package oauthserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"

	"golang.org/x/crypto/bcrypt"
)

// Client secrets are 32 random bytes issued at registration. A slow hash
// adds nothing to a secret of that entropy and hands anyone who registers
// a confidential client a CPU lever, so secrets are stored as SHA-256
// digests and compared in constant time. State files written before keep
// bcrypt hashes: those are still accepted, a bounded number at a time
// across the process, and replaced by the digest on their first
// successful check.

// sha256Prefix marks a stored secret digest: "sha256:" and 64 hex digits.
const sha256Prefix = "sha256:"

// errSecretMismatch is the cause fosite wraps into invalid_client.
var errSecretMismatch = errors.New("the client secret does not match")

// hashSecret returns the stored form of a client secret.
func hashSecret(secret []byte) []byte {
	sum := sha256.Sum256(secret)
	return []byte(sha256Prefix + hex.EncodeToString(sum[:]))
}

// isBcrypt reports whether a stored hash is a bcrypt hash ($2a$, $2b$,
// $2y$), as state files before SHA-256 digests hold.
func isBcrypt(hash []byte) bool {
	return len(hash) > 4 && hash[0] == '$' && hash[1] == '2' && (hash[3] == '$' || hash[2] == '$')
}

// secretHasher is fosite's Hasher for client secrets (Config.ClientSecretsHasher).
type secretHasher struct {
	// bcrypt bounds the legacy bcrypt checks running at once.
	bcrypt *Gate
	// migrate replaces a bcrypt hash that has just matched by the digest
	// of the same secret.
	migrate func(old, digest []byte) error
}

// Hash returns the SHA-256 digest form of a secret.
func (h *secretHasher) Hash(_ context.Context, data []byte) ([]byte, error) {
	return hashSecret(data), nil
}

// Compare checks data against a stored digest in constant time, or
// against a legacy bcrypt hash through the gate (ErrBusy when it stays
// full), migrating that hash on success.
func (h *secretHasher) Compare(ctx context.Context, hash, data []byte) error {
	switch {
	case bytes.HasPrefix(hash, []byte(sha256Prefix)):
		want, err := hex.DecodeString(string(hash[len(sha256Prefix):]))
		got := sha256.Sum256(data)
		if err != nil || subtle.ConstantTimeCompare(got[:], want) != 1 {
			return errSecretMismatch
		}
		return nil
	case isBcrypt(hash):
		if err := h.bcrypt.Enter(ctx); err != nil {
			return err
		}
		err := bcrypt.CompareHashAndPassword(hash, data)
		h.bcrypt.Leave()
		if err != nil {
			return errSecretMismatch
		}
		// The secret is right whether or not the new digest reaches the
		// disk; if it does not, a later check migrates it again.
		_ = h.migrate(hash, hashSecret(data))
		return nil
	}
	return errSecretMismatch
}

// replaceSecretHash stores digest in place of the client secret hash old
// and writes the state.
func (s *Store) replaceSecretHash(old, digest []byte) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	for id, c := range s.st.Clients {
		if bytes.Equal(c.SecretHash, old) {
			c.SecretHash = digest
			s.st.Clients[id] = c
			return s.commit()
		}
	}
	return nil
}

// refuseBusy answers 429 with Retry-After when err says a client secret
// check was turned away by the gate, and reports whether it did.
func (s *Server) refuseBusy(w http.ResponseWriter, err error) bool {
	if !errors.Is(err, ErrBusy) {
		return false
	}
	w.Header().Set("Retry-After", strconv.Itoa(s.secrets.bcrypt.RetryAfter()))
	writeJSONError(w, http.StatusTooManyRequests, "slow_down", "too many client secret checks are running; retry later")
	return true
}
