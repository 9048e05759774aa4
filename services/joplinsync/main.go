// Command joplinsync runs in the bundled Joplin container: it owns the one
// long-lived Joplin CLI process (`joplin batch --continue-on-failure -`),
// starts the Data API in it, and syncs the profile with the person's sync
// target at start, every interval, and shortly after the bridge writes,
// reporting each attempt in the sync state directory's status.json
// (docs/sync.md). It also stores sync secrets without echoing them and
// runs the one-time authorisation of Dropbox and OneDrive.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `joplinsync: the sync supervisor of the bundled Joplin (docs/sync.md)

Usage:
  joplinsync run [--profile DIR] [--port N]
        start Joplin's Data API on 127.0.0.1:N (api.port) and sync the profile
        with NOTEBRIDGE_SYNC_TARGET; status in $NOTEBRIDGE_SYNC_STATE_DIR/status.json
  joplinsync check
        validate the sync settings and secrets; print the configuration (no secrets)
  joplinsync secret set NAME [--dir DIR]
        store the secret NAME (sync-password, e2ee-master-password) in DIR
        (default /secrets), 0600, read from the terminal without echo or from stdin
  joplinsync authorize-sync [--profile DIR]
        one-time authorisation of the dropbox or onedrive target (interactive;
        stop the joplin service first)

Environment: NOTEBRIDGE_SYNC_TARGET, NOTEBRIDGE_SYNC_URL, NOTEBRIDGE_SYNC_USER,
NOTEBRIDGE_SYNC_PATH, NOTEBRIDGE_SYNC_S3_BUCKET, NOTEBRIDGE_SYNC_S3_REGION,
NOTEBRIDGE_SYNC_S3_PATH_STYLE, NOTEBRIDGE_SYNC_INTERVAL (seconds or 5m),
NOTEBRIDGE_SECRETS_DIR (default /secrets), NOTEBRIDGE_SYNC_STATE_DIR (default /sync).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := dispatch(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "joplinsync: %v\n", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	switch args[0] {
	case "run":
		return runSupervisor(ctx, args[1:], stderr)
	case "check":
		return runCheck(stdout)
	case "secret":
		if len(args) < 2 || args[1] != "set" {
			return errUsage
		}
		return runSecretSet(args[2:], stdin, stdout, stderr)
	case "authorize-sync":
		return runAuthorize(ctx, args[1:], stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return errUsage
}

// envOr returns the environment variable's value, or def when unset.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// secretsHome is NOTEBRIDGE_SECRETS_DIR, /secrets by default.
func secretsHome() string { return envOr(envSecretsDir, "/secrets") }

// defaultProfile is JOPLIN_PROFILE, /data/profile by default.
func defaultProfile() string { return envOr("JOPLIN_PROFILE", "/data/profile") }

// loadConfig loads the configuration from the environment and the
// secrets directory.
func loadConfig() (Config, error) { return LoadConfig(os.Getenv, secretsHome()) }

// runCheck validates the configuration as the supervisor would load it.
func runCheck(stdout io.Writer) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, cfg.String())
	return err
}
