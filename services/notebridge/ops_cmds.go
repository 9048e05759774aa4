package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
)

// defaultHealthURL is the health URL of the server in the container.
const defaultHealthURL = "http://127.0.0.1:8765/healthz"

// runHealthcheck probes a health URL and exits non-zero unless it answers
// 200: the container HEALTHCHECK, since the runtime image has no shell.
func runHealthcheck(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", defaultHealthURL, "health URL to probe")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := probeHealth(ctx, *url); err != nil {
		// The container's health log shows it (docker inspect, docker
		// compose ps): the reason, where the person looks.
		return fmt.Errorf("healthcheck: %w", err)
	}
	return nil
}

// errNoAnswer is probeHealth's error when nothing answers at the URL.
var errNoAnswer = errors.New("no answer")

// probeHealth asks a health URL once, within 3 s: nil for 200, else the
// status with the code and message its body names.
func probeHealth(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return errNoAnswer
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	var body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&body)
	switch {
	case body.Message != "":
		return fmt.Errorf("status %d (%s): %.500s", resp.StatusCode, body.Code, body.Message)
	case body.Code != "":
		return fmt.Errorf("status %d (%s)", resp.StatusCode, body.Code)
	}
	return fmt.Errorf("status %d", resp.StatusCode)
}

// runSecretsInit creates the three independent tokens (Joplin API, MCP,
// Actions) and the owner passphrase that approves OAuth clients (with its
// argon2id hash) in a directory, each a 0600 file owned by --owner,
// keeping any that already exist. It prints file names, never secrets.
func runSecretsInit(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("secrets init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", secretsDir, "directory to hold the token files")
	owner := fs.String("owner", "", "uid:gid to own the files (default: the current user)")
	importJoplin := fs.String("joplin-token-from", "", "replace joplin-token with the token in this file (your own Joplin's)")
	if err := parse(fs, args); err != nil {
		return err
	}
	uid, gid := -1, -1
	if *owner != "" {
		var err error
		if uid, gid, err = parseOwner(*owner); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", *dir, errors.Unwrap(err))
	}
	// MkdirAll leaves an existing directory (a volume mount point) as it is.
	if err := os.Chmod(*dir, 0o700); err != nil {
		return fmt.Errorf("chmod %s: %w", *dir, errors.Unwrap(err))
	}
	if uid >= 0 {
		if err := os.Chown(*dir, uid, gid); err != nil {
			return fmt.Errorf("chown %s: %w", *dir, errors.Unwrap(err))
		}
	}
	for _, name := range secretNames {
		path := filepath.Join(*dir, name)
		state, err := "", error(nil)
		if name == "joplin-token" && *importJoplin != "" {
			state, err = "imported", bearer.ImportTokenFile(*importJoplin, path)
		} else {
			var created bool
			created, err = writeNewToken(path)
			state = map[bool]string{true: "created", false: "kept"}[created]
		}
		if err != nil {
			return err
		}
		if uid >= 0 {
			if err := os.Chown(path, uid, gid); err != nil {
				return fmt.Errorf("chown %s: %w", path, errors.Unwrap(err))
			}
		}
		fmt.Fprintf(stdout, "%s %s\n", state, path)
	}
	created, err := writePassphrase(*dir)
	if err != nil {
		return err
	}
	for _, name := range []string{passphraseName, passphraseHashName} {
		path := filepath.Join(*dir, name)
		if uid >= 0 {
			if err := os.Chown(path, uid, gid); err != nil {
				return fmt.Errorf("chown %s: %w", path, errors.Unwrap(err))
			}
		}
		fmt.Fprintf(stdout, "%s %s\n", map[bool]string{true: "created", false: "kept"}[created], path)
	}
	return nil
}

// secretsDir is where the container stack keeps its tokens.
const secretsDir = "/secrets"

// secretNames are the three independent tokens.
var secretNames = []string{"joplin-token", "mcp-token", "actions-token"}

// runSecretsShow prints one token, for the operator who asked for it (to
// paste into ChatGPT or an MCP client).
func runSecretsShow(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("secrets show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", secretsDir, "directory holding the token files")
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if shown := append(slices.Clone(secretNames), passphraseName); !slices.Contains(shown, name) {
		return fmt.Errorf("usage: notebridge secrets show {%s} [--dir DIR]", strings.Join(shown, "|"))
	}
	b, err := os.ReadFile(filepath.Join(*dir, name))
	if err != nil {
		return fmt.Errorf("read %s: %w", name, errors.Unwrap(err))
	}
	_, err = fmt.Fprintln(stdout, strings.TrimSpace(string(b)))
	return err
}

// writeNewToken creates path with a fresh random token unless it exists.
// Tokens are URL-safe hex, as the Joplin image requires.
func writeNewToken(path string) (bool, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create %s: %w", path, errors.Unwrap(err))
	}
	if _, err := f.WriteString(hex.EncodeToString(b[:]) + "\n"); err != nil {
		f.Close()
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, f.Close()
}

func parseOwner(s string) (int, int, error) {
	u, g, _ := strings.Cut(s, ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return 0, 0, errors.New("--owner must be uid:gid, e.g. 1000:1000")
	}
	return uid, gid, nil
}
