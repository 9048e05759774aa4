package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/notebridge/notebridge/services/notebridge/setupwizard"
)

// runSetup is `notebridge setup`: the questions of a first install, each
// with a flag for scripted installs (setupwizard).
func runSetup(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("setup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var a setupwizard.Answers
	var cfg setupwizard.Config
	var owner string
	var nonInteractive bool
	secretFiles := map[string]*string{}
	fs.StringVar(&cfg.EnvPath, "env", ".env", "the compose .env file to write (0600)")
	fs.StringVar(&cfg.SecretsDir, "secrets-dir", "", "the secrets directory for the sync and E2EE passwords (compose: /secrets); unset prints how to store them")
	fs.StringVar(&owner, "owner", "", "uid:gid to own the secret files (compose: 1000:1000)")
	fs.BoolVar(&nonInteractive, "non-interactive", false, "ask nothing: every answer from a flag or the existing .env")
	fs.StringVar(&a.Reach, "reach", "", "how connectors reach the stack: domain, cloudflare, tailscale or local")
	fs.StringVar(&a.Domain, "domain", "", "the public DNS name (a domain, or the tunnel's name)")
	fs.StringVar(&a.TSHostname, "ts-hostname", "", "the Tailscale node's name")
	fs.StringVar(&a.SyncTarget, "sync-target", "", "the bundled Joplin's sync target (docs/sync.md), or none")
	fs.StringVar(&a.SyncURL, "sync-url", "", "the sync target's URL")
	fs.StringVar(&a.SyncUser, "sync-user", "", "the sync login's user name")
	fs.StringVar(&a.E2EE, "e2ee", "", "whether the notes are end-to-end encrypted: yes or no")
	fs.StringVar(&a.Meaning, "meaning", "", "search by meaning with the bundled embedder: on or off")
	for name, field := range map[string]*string{"cloudflare-token-file": &a.CloudflareToken, "ts-authkey-file": &a.TSAuthKey,
		"sync-password-file": &a.SyncPassword, "e2ee-password-file": &a.E2EEPassword} {
		secretFiles[name] = field
		fs.Func(name, "a file holding the "+strings.TrimSuffix(name, "-file")+" (never a flag's value: it would show in ps)", func(path string) error {
			b, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("read %s: %w", path, err)
			}
			*field = strings.TrimRight(string(b), "\r\n")
			return nil
		})
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg.Owner = [2]int{-1, -1}
	if owner != "" {
		uid, gid, err := parseOwner(owner)
		if err != nil {
			return err
		}
		cfg.Owner = [2]int{uid, gid}
	}
	cfg.Interactive = !nonInteractive
	cfg.Prompt = newLinePrompter(stdin, stderr)
	cfg.Out = stdout
	cfg.Resolve = setupwizard.DefaultResolver
	cfg.HTTP = &http.Client{Timeout: 15 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return setupwizard.Run(ctx, cfg, a)
}

// linePrompter asks on stderr and reads answers line by line; secrets
// without echo when stdin is a terminal.
type linePrompter struct {
	in   *bufio.Reader
	file *os.File // stdin, when it is a terminal
	out  io.Writer
}

func newLinePrompter(stdin io.Reader, out io.Writer) *linePrompter {
	p := &linePrompter{in: bufio.NewReader(stdin), out: out}
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.file = f
	}
	return p
}

func (p *linePrompter) Ask(question, def string) (string, error) {
	if def != "" {
		fmt.Fprintf(p.out, "%s [%s]: ", question, def)
	} else {
		fmt.Fprintf(p.out, "%s: ", question)
	}
	return p.line()
}

func (p *linePrompter) Secret(question string) (string, error) {
	fmt.Fprintf(p.out, "%s: ", question)
	if p.file == nil {
		return p.line()
	}
	b, err := term.ReadPassword(int(p.file.Fd()))
	fmt.Fprintln(p.out)
	if err != nil {
		return "", fmt.Errorf("read a hidden answer: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

func (p *linePrompter) line() (string, error) {
	s, err := p.in.ReadString('\n')
	if err != nil && (err != io.EOF || s == "") {
		return "", fmt.Errorf("no answer (stdin closed): %w", err)
	}
	return strings.TrimRight(s, "\r\n"), nil
}
