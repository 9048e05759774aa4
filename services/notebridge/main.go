// Command notebridge lets AI agents work safely on a person's Joplin notes
// and Open Knowledge Format (OKF) bundles over MCP (stdio and Streamable
// HTTP), and on Joplin over GPT Actions.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `notebridge: safe agent access to Joplin notes and OKF knowledge bundles

Toolsets (--toolsets joplin,okf; default: both):
  joplin    the user's Joplin notes, notebooks, tags and resources through the
            Joplin Data API; served over MCP stdio, MCP HTTP and GPT Actions
  okf       Open Knowledge Format bundles on disk (read, write_concept,
            preview/apply workflows); served over MCP stdio, over MCP HTTP only
            with --okf-roots, never over GPT Actions

Usage:
  notebridge serve          the service: MCP HTTP (:8765) and, when enabled, GPT Actions (:8766)
  notebridge openapi [--origin https://HOST]   print the Actions OpenAPI 3.1 document
                            (origin default: https://$NOTEBRIDGE_DOMAIN)
  notebridge mcp stdio      MCP over stdin/stdout
  notebridge mcp serve      MCP Streamable HTTP (default 127.0.0.1:8765/mcp)
  notebridge capabilities   print transports, protocol versions and operations as JSON
  notebridge journal [show N]  list uncertain writes for the operator, or show one
  notebridge journal receipts | receipt ID   list note-change receipts, or show one (no note text)
  notebridge activity [--since 24h] [--grant ID] [--tool NAME] [--note ID] [--json]
                            print the activity log: every call, who made it, the ids it read or
                            changed (never note text, queries or secrets); newest first
  notebridge backup FILE [--with-index]   archive the state (grants, receipts, activity log,
                            Joplin identity) while the bridge runs; 0600
  notebridge restore FILE [--replace] [--other-joplin]   put a backup's state in place
                            (refused for another Joplin unless told)
  notebridge secrets init [--dir DIR]   create the Joplin, MCP and Actions tokens and the owner passphrase (0600)
  notebridge secrets show NAME [--dir DIR]   print one token (joplin-token, mcp-token, actions-token) or the owner-passphrase
  notebridge oauth clients | grants    list OAuth clients, or grants (client, scopes, created, last used; no tokens)
  notebridge oauth revoke ID | rotate-secret   end a grant or remove a client; or invalidate every token at once
  notebridge joplin forget  accept the Joplin configured now in place of the one the bridge
                            remembers (calls fail with JOPLIN_CHANGED until then)
  notebridge healthcheck    probe /healthz (the container HEALTHCHECK): unhealthy while Joplin
                            refuses the token or is not the Joplin this bridge served
  notebridge setup          ask how the stack is reached, the sync target and its login (checked),
                            E2EE and search by meaning; write .env (0600) and the secrets, print
                            the connector URL and the steps for ChatGPT and Claude
  notebridge doctor         check serve's settings (the same flags and NOTEBRIDGE_ variables), the
                            token files, Joplin's answer, the embedding provider and the domain's
                            DNS; print each problem with its fix; changes nothing
  notebridge version        print the version

Run "notebridge <command> -h" for a command's flags. Every flag --x-y can
also be set with the environment variable NOTEBRIDGE_X_Y.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command and returns the process exit code: 0 on
// success, 2 for a usage or flag error, 1 otherwise.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdin, stdout, stderr)
	var ue usageError
	var fe flagError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &fe):
		return 2 // the flag package has printed the error and the flags
	case errors.As(err, &ue):
		if ue != "" {
			fmt.Fprintf(stderr, "notebridge: %s\n\n", string(ue))
		}
		fmt.Fprint(stderr, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "notebridge: %v\n", err)
		return 1
	}
}

// usageError prints the usage text, after its message when it has one.
type usageError string

func (e usageError) Error() string { return string(e) }

// flagError is a flag parse error the flag package has already printed,
// with the command's flags.
type flagError struct{ err error }

func (e flagError) Error() string { return e.err.Error() }
func (e flagError) Unwrap() error { return e.err }

func unknownCommand(words ...string) error {
	return usageError(fmt.Sprintf("unknown command %q", strings.Join(words, " ")))
}

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError("")
	}
	switch args[0] {
	case "version":
		_, err := fmt.Fprintln(stdout, version)
		return err
	case "capabilities":
		return runCapabilities(args[1:], stdout, stderr)
	case "serve":
		return runServe(ctx, args[1:], stderr)
	case "openapi":
		return runOpenAPI(args[1:], stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, args[1:], stderr)
	case "secrets", "mcp":
		if len(args) < 2 || strings.HasPrefix(args[1], "-") {
			return usageError(fmt.Sprintf("%q needs a subcommand (%s)", args[0], subcommands[args[0]]))
		}
		switch args[0] + " " + args[1] {
		case "secrets init":
			return runSecretsInit(args[2:], stdout, stderr)
		case "secrets show":
			return runSecretsShow(args[2:], stdout, stderr)
		case "mcp stdio":
			return runStdio(ctx, args[2:], stdin, stdout, stderr)
		case "mcp serve":
			return runMCPServe(ctx, args[2:], stderr)
		}
		return unknownCommand(args[0], args[1])
	case "journal":
		return runJournal(args[1:], stdout, stderr)
	case "activity":
		return runActivity(args[1:], stdout, stderr)
	case "backup":
		return runBackup(ctx, args[1:], stdout, stderr)
	case "restore":
		return runRestore(ctx, args[1:], stdin, stdout, stderr)
	case "joplin":
		return runJoplin(ctx, args[1:], stdout, stderr)
	case "oauth":
		return runOAuth(args[1:], stdout, stderr)
	case "setup":
		return runSetup(ctx, args[1:], stdin, stdout, stderr)
	case "doctor":
		return runDoctor(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return unknownCommand(args[0])
}

// subcommands lists the subcommands of the commands that need one.
var subcommands = map[string]string{"secrets": "init or show", "mcp": "stdio or serve"}
