package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// finding is one check of notebridge doctor: its name, and when it found
// a problem, what is wrong and how to fix it.
type finding struct {
	check, problem, fix string
}

// doctorWait bounds each live check (Joplin, the embedding provider, DNS).
const doctorWait = 10 * time.Second

// runDoctor is `notebridge doctor`: it takes serve's settings (flags and
// NOTEBRIDGE_* variables), checks each as serve would, then what serve
// only finds out later (Joplin's answer to the token, the embedding
// provider, the domain's DNS), and prints every check with, for each
// problem, its fix. It makes no token or passphrase and binds no port (at
// most it creates the state directory, as serve would), so it runs beside
// a running bridge
// (docker compose exec bridge notebridge doctor). Exit status 1 when a
// check found a problem.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := &config{}
	if err := parse(doctorFlags(c, stderr), args); err != nil {
		return err
	}
	found := diagnose(ctx, c)
	problems := 0
	for _, f := range found {
		if f.problem == "" {
			fmt.Fprintf(stdout, "ok       %s\n", f.check)
			continue
		}
		problems++
		fmt.Fprintf(stdout, "PROBLEM  %s: %s\n         fix: %s\n", f.check, f.problem, f.fix)
	}
	if problems > 0 {
		return fmt.Errorf("doctor: %d of %d checks found a problem", problems, len(found))
	}
	fmt.Fprintf(stdout, "doctor: all %d checks passed\n", len(found))
	return nil
}

// doctorFlags is serve's flag set, bound to c.
func doctorFlags(c *config, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bindFlags(fs, c, true)
	bindActionsFlags(fs, c)
	bindOAuthFlags(fs, c)
	var hold configHold
	hold.bind(fs, c) // compose passes serve's settings; doctor ignores this one
	return fs
}

// diagnose runs every check on c, in the order serve meets them.
func diagnose(ctx context.Context, c *config) []finding {
	var out []finding
	add := func(check string, err error, fix string) {
		f := finding{check: check}
		if err != nil {
			f.problem, f.fix = errMessage(err), fix
		}
		out = append(out, f)
	}
	add("state directory "+c.StateDir, stateDirProblem(c.StateDir),
		"create it (mode 0700) and give it to the user notebridge runs as, or set --state-dir")
	tokenErr := joplin.CheckTokenFile(c.JoplinTokenFile)
	add("Joplin token file", tokenErr,
		"put the token of Joplin's Web Clipper (Options → Web Clipper) in the file, mode 0600; compose: notebridge secrets init")
	log := slog.New(slog.DiscardHandler)
	a, err := newApp(c, log)
	add("settings", err, "correct the setting named (notebridge serve -h lists every setting and its NOTEBRIDGE_ variable)")
	if a != nil {
		defer a.close()
		if tokenErr == nil {
			jerr := joplinProblem(ctx, a.joplin)
			add("Joplin at "+c.JoplinURL, jerr, joplinFix(jerr, c))
		}
	}
	var actionsErr error
	if c.ActionsEnabled != (c.ActionsTokenFile != "") {
		actionsErr = errors.New("GPT Actions need both --actions-enabled and --actions-token-file; serve refuses only one")
	}
	add("GPT Actions", actionsErr, "set both NOTEBRIDGE_ACTIONS_ENABLED=true and NOTEBRIDGE_ACTIONS_TOKEN_FILE, or neither")
	add("notebook scopes", scopeProblem(c), "name notebooks by id or path, as docs/notebook-scopes.md shows")
	add("credentials", credentialsProblem(c),
		"give the Joplin, MCP and Actions tokens three different files holding three different tokens (notebridge secrets init makes them)")
	_, consoleErr := c.consoleOn()
	add("owner's console", consoleErr, "set NOTEBRIDGE_CONSOLE to on or off (docs/console.md)")
	if c.OAuth {
		originErr := oauthProblem(c)
		add("OAuth public origin", originErr,
			"set NOTEBRIDGE_DOMAIN to the public name ChatGPT and Claude reach (not localhost or an IP; a tunnel's name works, docs/tunnels.md)")
		if originErr == nil && c.Domain != "" && c.ActionsOrigin == "" && os.Getenv(envOrigin) == "" {
			add("DNS of "+c.Domain, dnsProblem(ctx, c, c.Domain),
				"point the name's DNS (an A or AAAA record) at this server, or reach it through a tunnel (docs/tunnels.md)")
		}
	}
	if a != nil {
		if m, err := c.meaning(log); err == nil && m.Provider != nil {
			wait, cancel := context.WithTimeout(ctx, doctorWait)
			_, perr := m.Provider.EmbedQuery(wait, "notebridge doctor")
			cancel()
			add("embedding provider ("+m.Provider.Model()+")", perr,
				"start the embedding server (compose: --profile meaning) or correct NOTEBRIDGE_EMBEDDINGS_URL and NOTEBRIDGE_EMBEDDINGS_MODEL")
		}
	}
	return out
}

// stateDirProblem is what keeps serve from keeping its state in dir: it
// must be a directory it may write, or one it can create.
func stateDirProblem(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil // serve creates it, 0700
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	probe, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return fmt.Errorf("%s cannot be written: %v", dir, errors.Unwrap(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// joplinProblem asks Joplin for one notebook with the token: the request
// serve's health check makes.
func joplinProblem(ctx context.Context, c *joplin.Client) error {
	wait, cancel := context.WithTimeout(principal.With(ctx, principal.System()), doctorWait)
	defer cancel()
	return c.Get(wait, "/folders", url.Values{"limit": {"1"}, "fields": {"id"}}, nil)
}

// joplinFix is the fix for Joplin's refusal err, by its code.
func joplinFix(err error, cfg *config) string {
	de, _ := domainerr.As(err)
	switch {
	case de != nil && de.Code == domainerr.JoplinAuthFailed:
		return "Joplin refuses the token: copy the token from Joplin's Web Clipper options into " + cfg.JoplinTokenFile
	case de != nil && de.Code == domainerr.JoplinChanged:
		return "if you switched to this Joplin on purpose, run notebridge joplin forget; otherwise point NOTEBRIDGE_JOPLIN_URL back at the Joplin you used"
	}
	return "start Joplin (the desktop app with the Web Clipper on, or compose's --profile bundled-joplin) and check NOTEBRIDGE_JOPLIN_URL " +
		"(from a container, a Joplin on the host is http://host.docker.internal:41184)"
}

func scopeProblem(c *config) error {
	for _, s := range [][3]string{
		{"", c.Notebooks, c.WriteNotebooks},
		{"mcp-", c.MCPNotebooks, c.MCPWriteNotebooks},
		{"actions-", c.ActionsNotebooks, c.ActionsWriteNotebooks},
	} {
		if _, err := notebookScope(s[0], s[1], s[2]); err != nil {
			return err
		}
	}
	return nil
}

// credentialsProblem checks that the token files that exist are distinct;
// one serve generates at its first start is no problem.
func credentialsProblem(c *config) error {
	var present []bearer.Credential
	for _, cred := range c.credentials() {
		if cred.Path == "" {
			continue
		}
		if _, err := os.Stat(cred.Path); err == nil {
			present = append(present, cred)
		} else if cred.Name != joplinCred && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s %s: %v", cred.Name, cred.Path, err)
		}
	}
	return bearer.Distinct(present...)
}

func oauthProblem(c *config) error {
	if _, err := oauthOrigin(c); err != nil {
		return err
	}
	if _, err := oauthserver.ParseTrustedProxies(c.TrustedProxies); err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	return nil
}

// dnsProblem is a domain that does not resolve: ChatGPT and Claude could
// not reach it, nor could Caddy get its certificate.
func dnsProblem(ctx context.Context, c *config, domain string) error {
	wait, cancel := context.WithTimeout(ctx, doctorWait)
	defer cancel()
	lookup := c.lookupHost
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	addrs, err := lookup(wait, strings.TrimSuffix(domain, "."))
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("%s does not resolve (%v)", domain, err)
	}
	return nil
}
