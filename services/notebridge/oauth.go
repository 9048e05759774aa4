package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/notebridge/notebridge/pkg/auth/consent"
	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
	"github.com/notebridge/notebridge/pkg/auth/resourceserver"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/scope"
	"github.com/notebridge/notebridge/pkg/transport/actions"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// The owner passphrase files: the passphrase itself, for the operator
// (secrets show), and its argon2id hash, which the server reads.
const (
	passphraseName     = "owner-passphrase"
	passphraseHashName = "owner-passphrase.argon2id"
)

// bindOAuthFlags registers the OAuth flags of mcp serve and serve.
func bindOAuthFlags(fs *flag.FlagSet, c *config) {
	fs.BoolVar(&c.OAuth, "oauth", false, "also accept OAuth 2.1 access tokens on /mcp from the built-in authorization server "+
		"(for ChatGPT and Claude connectors); needs a public origin (--domain or "+envOrigin+")")
	fs.StringVar(&c.OwnerPassphraseFile, "owner-passphrase-file", "", "file holding the argon2id hash of the owner passphrase that approves OAuth clients "+
		"(default: "+passphraseHashName+" in the state directory, generated with the passphrase when missing)")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", oauthserver.DefaultTrustedProxies, "comma-separated CIDR prefixes of the reverse proxies whose "+
		"X-Forwarded-For and X-Forwarded-Host the OAuth endpoints believe (rate limits, lockout, host check)")
	fs.StringVar(&c.InternalHosts, "internal-hosts", "", "comma-separated host:port names a reverse proxy sends as Host when it dials this "+
		"listener (e.g. bridge:8765); the OAuth endpoints answer only these, the public origin's host and loopback")
}

// oauthOrigin is the public origin of the MCP endpoint, by the rule of the
// Actions document: --actions-origin (serve), else NOTEBRIDGE_ORIGIN, else
// https://<--domain>.
func oauthOrigin(c *config) (string, error) {
	origin, source := c.ActionsOrigin, "--actions-origin"
	if origin == "" {
		origin, source = os.Getenv(envOrigin), envOrigin
	}
	if origin == "" {
		o, derr := actions.OriginFromDomain(c.Domain)
		if derr != nil {
			return "", fmt.Errorf("--oauth needs the public origin of /mcp: %s", strings.Replace(derr.Message, "GPT Actions need", "OAuth needs", 1))
		}
		return o, nil
	}
	o, err := actions.CheckOrigin(origin)
	if err != nil {
		return "", fmt.Errorf("%s: %w", source, err)
	}
	return o, nil
}

// oauthConfig builds the authorization server, its consent page and the
// resource server for /mcp.
func oauthConfig(c *config, a *app, stderr io.Writer) (*mcpadapter.OAuthConfig, string, error) {
	origin, err := oauthOrigin(c)
	if err != nil {
		return nil, "", err
	}
	hashPath, err := ensurePassphrase(c.OwnerPassphraseFile, c.StateDir, stderr)
	if err != nil {
		return nil, "", err
	}
	hash, err := consent.ReadHashFile(hashPath)
	if err != nil {
		return nil, "", err
	}
	page, err := consent.New(consent.Config{Hash: hash, Notebooks: a.view.Tree, Refused: a.metrics.signInRefused})
	if err != nil {
		return nil, "", err
	}
	proxies, err := oauthserver.ParseTrustedProxies(c.TrustedProxies)
	if err != nil {
		return nil, "", fmt.Errorf("--trusted-proxies: %w", err)
	}
	resource := origin + mcpadapter.Path
	// Only the scopes of the toolsets served over MCP HTTP are offered.
	served := scope.Served(a.exec.Registry().Exposed(registry.MCPHTTP))
	as, err := oauthserver.New(oauthserver.Config{Issuer: origin, Resource: resource, StateDir: c.StateDir, Consent: page, Scopes: served,
		TrustedProxies: proxies, InternalHosts: splitList(c.InternalHosts)})
	if err != nil {
		return nil, "", err
	}
	rs, err := resourceserver.New(resourceserver.Config{Resource: resource, Issuer: origin, Verifier: as, Scopes: served})
	if err != nil {
		return nil, "", err
	}
	routes := as.Routes()
	routes[rs.MetadataPath()] = as.Front(rs.MetadataHandler())
	routes[resourceserver.WellKnownPrefix] = as.Front(rs.MetadataHandler())
	a.log.Info("OAuth 2.1 is on", "resource", resource, "metadata", rs.MetadataURL())
	return &mcpadapter.OAuthConfig{Resource: rs, Routes: routes}, origin, nil
}

// ensurePassphrase returns the hash file to use: path when set, else the
// state directory's, created with a new passphrase when missing.
func ensurePassphrase(path, stateDir string, stderr io.Writer) (string, error) {
	if path != "" {
		return path, nil
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", fmt.Errorf("create state directory: %w", err)
	}
	created, err := writePassphrase(stateDir)
	if err != nil {
		return "", err
	}
	if created {
		fmt.Fprintf(stderr, "notebridge: generated the owner passphrase; print it with: notebridge secrets show %s --dir %s\n", passphraseName, stateDir)
	}
	return filepath.Join(stateDir, passphraseHashName), nil
}

// writePassphrase creates the owner passphrase and its hash in dir (0600)
// unless they exist; a passphrase without a hash gets its hash. It reports
// whether it created the passphrase.
func writePassphrase(dir string) (bool, error) {
	plain, hashPath := filepath.Join(dir, passphraseName), filepath.Join(dir, passphraseHashName)
	created := false
	b, err := os.ReadFile(plain)
	switch {
	case errors.Is(err, os.ErrNotExist):
		p := consent.NewPassphrase()
		if err := writeExclusive(plain, p+"\n"); err != nil {
			return false, err
		}
		b, created = []byte(p), true
		_ = os.Remove(hashPath) // a hash without its passphrase is stale
	case err != nil:
		return false, fmt.Errorf("read %s: %w", plain, errors.Unwrap(err))
	}
	if _, err := os.Stat(hashPath); err == nil {
		return created, nil
	}
	if err := consent.WriteHashFile(hashPath, string(b)); err != nil {
		return false, err
	}
	return created, nil
}

func writeExclusive(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, errors.Unwrap(err))
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
