package consent

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/internal/privatefile"
)

// The argon2id parameters of new hashes: OWASP's minimum (19 MiB, two
// passes, one lane), so a check costs a small bridge little memory.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
)

// Bounds a stored hash may not exceed, so a tampered file cannot make a
// check allocate without limit.
const (
	maxMemoryKiB = 256 * 1024
	maxTime      = 10
)

// NewPassphrase returns a random passphrase: six groups of five
// characters from an alphabet without look-alikes (about 145 bits).
func NewPassphrase() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, 30)
	_, _ = rand.Read(b)
	var sb strings.Builder
	for i, c := range b {
		if i > 0 && i%5 == 0 {
			sb.WriteByte('-')
		}
		sb.WriteByte(alphabet[int(c)%len(alphabet)])
	}
	return sb.String()
}

// HashPassphrase returns the PHC string of an argon2id hash of p.
func HashPassphrase(p string) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(p), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		enc.EncodeToString(salt), enc.EncodeToString(key))
}

// WriteHashFile writes the hash of passphrase p to path, atomically and
// 0600, as the consent page reads it.
func WriteHashFile(path, p string) error {
	return bearer.WriteSecretFile(path, HashPassphrase(strings.TrimSpace(p)))
}

// Hash is a parsed argon2id passphrase hash.
type Hash struct {
	memory  uint32
	time    uint32
	threads uint8
	salt    []byte
	key     []byte
}

// ReadHashFile reads the owner passphrase hash from path, a file only its
// owner may read. The errors name the file, never its contents.
func ReadHashFile(path string) (Hash, error) {
	if err := privatefile.Check(path); err != nil {
		return Hash{}, fmt.Errorf("owner passphrase hash %s: %w", path, err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return Hash{}, fmt.Errorf("read the owner passphrase hash: %w", errors.Unwrap(err))
	}
	hash, err := ParseHash(string(raw))
	if err != nil {
		return Hash{}, fmt.Errorf("%s: %w", path, err)
	}
	return hash, nil
}

// ParseHash reads a PHC argon2id string as HashPassphrase writes it.
func ParseHash(s string) (Hash, error) {
	bad := errors.New("the owner passphrase hash is not an argon2id hash; run notebridge secrets init")
	parts := strings.Split(strings.TrimSpace(s), "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return Hash{}, bad
	}
	var h Hash
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.memory, &h.time, &h.threads); err != nil {
		return Hash{}, bad
	}
	if h.memory < 8*uint32(h.threads) || h.memory > maxMemoryKiB || h.time < 1 || h.time > maxTime || h.threads < 1 {
		return Hash{}, bad
	}
	var err1, err2 error
	h.salt, err1 = base64.RawStdEncoding.DecodeString(parts[4])
	h.key, err2 = base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(h.salt) < 8 || len(h.key) < 16 || len(h.key) > 64 {
		return Hash{}, bad
	}
	return h, nil
}

// Matches reports, in constant time over the derived keys, whether p is
// the passphrase.
func (h Hash) Matches(p string) bool {
	if len(h.key) == 0 || len(p) > 1024 {
		return false
	}
	got := argon2.IDKey([]byte(p), h.salt, h.time, h.memory, h.threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(got, h.key) == 1
}
