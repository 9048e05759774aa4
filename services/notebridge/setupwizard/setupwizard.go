// Package setupwizard is `notebridge setup`: it asks, in order, how the stack is
// reached (a domain, a tunnel, or this machine only), the bundled Joplin's
// sync target and its login (checked against the target before anything
// is saved), the E2EE master password, and search by meaning; then it
// writes .env (0600) and the secrets, and prints the connector URL and
// the steps for ChatGPT and Claude. Every question has a flag; run again,
// it offers the saved answers as defaults, so one answer can be changed.
package setupwizard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Answers are the answers, from flags or prompts. An empty field is
// asked (or, non-interactive, taken from the existing .env).
type Answers struct {
	Reach           string // domain, cloudflare, tailscale or local
	Domain          string
	CloudflareToken string
	TSHostname      string
	TSAuthKey       string
	SyncTarget      string
	SyncURL         string
	SyncUser        string
	SyncPassword    string
	E2EE            string // yes or no
	E2EEPassword    string
	Meaning         string // on or off
}

// Prompter asks the person; Secret reads without echo.
type Prompter interface {
	Ask(question, def string) (string, error)
	Secret(question string) (string, error)
}

// Config is one run.
type Config struct {
	EnvPath     string
	SecretsDir  string // where the sync and E2EE secrets go ("" prints how to store them)
	Owner       [2]int // uid, gid of the secret files; -1 keeps the current user
	Interactive bool   // false: nothing is asked; a missing answer is an error
	Prompt      Prompter
	Out         io.Writer
	Resolve     Resolver
	HTTP        *http.Client
}

// tunnelPorts are the published ports setup gives Caddy behind a tunnel:
// this machine only.
var tunnelPorts = [][2]string{{"NOTEBRIDGE_HTTPS_PORT", "127.0.0.1:8443"}, {"NOTEBRIDGE_HTTP_PORT", "127.0.0.1:8081"}}

var (
	reaches     = []string{"domain", "cloudflare", "tailscale", "local"}
	syncTargets = []string{"none", "joplin-server", "joplin-cloud", "webdav", "nextcloud", "filesystem", "s3", "dropbox", "onedrive"}
	tunnels     = []string{"cloudflare", "tailscale"}
)

// Run asks what a is missing, checks the answers, and writes .env and the
// secrets. A refused answer is asked again when interactive, else returned
// (a *Problem) with nothing written.
func Run(ctx context.Context, cfg Config, a Answers) error {
	env, err := ReadEnv(cfg.EnvPath)
	if err != nil {
		return err
	}
	s := &session{cfg: cfg, env: env}
	if err := s.reach(ctx, &a); err != nil {
		return err
	}
	if err := s.sync(ctx, &a); err != nil {
		return err
	}
	if err := s.rest(&a); err != nil {
		return err
	}
	s.apply(a)
	if err := s.save(a); err != nil {
		return err
	}
	s.nextSteps(a)
	return nil
}

type session struct {
	cfg Config
	env *EnvFile
}

// ask returns given when set, else the person's answer (def when blank),
// else, non-interactive, def.
func (s *session) ask(given *string, question, def string) error {
	if *given != "" {
		return s.valid(*given)
	}
	if !s.cfg.Interactive {
		*given = def
		return nil
	}
	v, err := s.cfg.Prompt.Ask(question, def)
	if err != nil {
		return err
	}
	if v = strings.TrimSpace(v); v == "" {
		v = def
	}
	*given = v
	return s.valid(v)
}

// secret is ask without echo; blank keeps keep (the saved value).
func (s *session) secret(given *string, question, keep string) error {
	if *given != "" || !s.cfg.Interactive {
		if *given == "" {
			*given = keep
		}
		return s.valid(*given)
	}
	v, err := s.cfg.Prompt.Secret(question)
	if err != nil {
		return err
	}
	if v == "" {
		v = keep
	}
	*given = v
	return s.valid(v)
}

// valid refuses what .env or a secret file cannot hold.
func (s *session) valid(v string) error {
	if strings.ContainsAny(v, "'\n\r") {
		return &Problem{CodeBadAnswer, "answer", "an answer cannot hold a quote or a line break"}
	}
	return nil
}

// choose is ask restricted to options.
func (s *session) choose(given *string, question, def string, options []string) error {
	for {
		if err := s.ask(given, fmt.Sprintf("%s (%s)", question, strings.Join(options, ", ")), def); err != nil {
			return err
		}
		if slices.Contains(options, *given) {
			return nil
		}
		p := &Problem{CodeBadAnswer, question, fmt.Sprintf("%q is not one of %s", *given, strings.Join(options, ", "))}
		if !s.retry(p) {
			return p
		}
		*given = ""
	}
}

// retry reports p and whether to ask again (interactive only).
func (s *session) retry(p *Problem) bool {
	if !s.cfg.Interactive {
		return false
	}
	fmt.Fprintf(s.cfg.Out, "  %s: %s\n", p.Code, p.Message)
	return true
}

// storedSecret is a secret setup stored before ("" when none).
func (s *session) storedSecret(name string) string {
	if s.cfg.SecretsDir == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(s.cfg.SecretsDir, name))
	if err != nil {
		return ""
	}
	return strings.TrimRight(string(b), "\r\n")
}

func (s *session) saved(key string) string {
	v, _ := s.env.Get(key)
	return v
}

func (s *session) profiles() []string {
	v, ok := s.env.Get("COMPOSE_PROFILES")
	if !ok {
		return []string{"bundled-joplin"}
	}
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (s *session) reach(ctx context.Context, a *Answers) error {
	def := "local"
	for _, t := range tunnels {
		if slices.Contains(s.profiles(), t) {
			def = t
		}
	}
	if d := s.saved("NOTEBRIDGE_DOMAIN"); def == "local" && d != "" && d != "localhost" {
		def = "domain"
	}
	fmt.Fprintln(s.cfg.Out, "How do ChatGPT and Claude reach this stack? domain: a DNS name pointing here, port 443 open; cloudflare or tailscale: a tunnel, no open port (docs/tunnels.md); local: this machine only (stdio clients, tests).")
	if err := s.choose(&a.Reach, "Reached by", def, reaches); err != nil {
		return err
	}
	savedDomain := s.saved("NOTEBRIDGE_DOMAIN")
	if savedDomain == "localhost" {
		savedDomain = ""
	}
	switch a.Reach {
	case "local":
		a.Domain = "localhost"
		return nil
	case "cloudflare":
		if err := s.ask(&a.Domain, "The tunnel's public hostname (Cloudflare dashboard, service http://caddy:8080)", savedDomain); err != nil {
			return err
		}
		if err := s.secret(&a.CloudflareToken, "The tunnel's token (hidden; blank keeps the saved one)", s.saved("NOTEBRIDGE_CLOUDFLARE_TUNNEL_TOKEN")); err != nil {
			return err
		}
		if a.CloudflareToken == "" {
			return &Problem{CodeBadAnswer, "NOTEBRIDGE_CLOUDFLARE_TUNNEL_TOKEN", "Cloudflare Tunnel needs the tunnel's token"}
		}
	case "tailscale":
		if err := s.ask(&a.TSHostname, "The Tailscale node's name", or(s.saved("NOTEBRIDGE_TS_HOSTNAME"), "notebridge")); err != nil {
			return err
		}
		if err := s.ask(&a.Domain, "Its full name, <name>.<tailnet>.ts.net", savedDomain); err != nil {
			return err
		}
		if err := s.secret(&a.TSAuthKey, "An auth key for the first start (hidden; blank keeps the saved one or none)", s.saved("NOTEBRIDGE_TS_AUTHKEY")); err != nil {
			return err
		}
	}
	for {
		err := s.ask(&a.Domain, "The public DNS name", savedDomain)
		if err == nil && (a.Domain == "" || a.Domain == "localhost") {
			err = &Problem{CodeBadAnswer, "NOTEBRIDGE_DOMAIN", "a connector needs a public name, not localhost; choose local for this machine only"}
		}
		if err == nil && a.Reach == "domain" {
			err = CheckDomain(ctx, s.cfg.Resolve, a.Domain)
		}
		var p *Problem
		if err == nil || !errors.As(err, &p) || !s.retry(p) {
			return err
		}
		a.Domain = ""
	}
}

func (s *session) sync(ctx context.Context, a *Answers) error {
	fmt.Fprintln(s.cfg.Out, "Where does your Joplin sync? The bundled Joplin syncs with it, so the agent sees the notes on your phone and desktop (docs/sync.md).")
	if err := s.choose(&a.SyncTarget, "Sync target", or(s.saved("NOTEBRIDGE_SYNC_TARGET"), "none"), syncTargets); err != nil {
		return err
	}
	if !checkedTargets[a.SyncTarget] && a.SyncTarget != "s3" {
		return nil
	}
	for {
		question := "Its URL"
		if a.SyncTarget == "joplin-cloud" {
			question = "Its URL (blank: Joplin Cloud's own)"
		}
		if err := s.ask(&a.SyncURL, question, s.saved("NOTEBRIDGE_SYNC_URL")); err != nil {
			return err
		}
		if err := s.ask(&a.SyncUser, "The user name (Joplin Server/Cloud: the email; S3: the access key id)", s.saved("NOTEBRIDGE_SYNC_USER")); err != nil {
			return err
		}
		if err := s.secret(&a.SyncPassword, "The password (hidden; S3: the secret key; blank keeps the stored one)", ""); err != nil {
			return err
		}
		password := a.SyncPassword
		if password == "" {
			password = s.storedSecret("sync-password")
		}
		if password == "" && !s.cfg.Interactive {
			fmt.Fprintln(s.cfg.Out, "  no password given: the login is not checked, and the stored password is kept.")
			return nil
		}
		err := CheckSync(ctx, s.cfg.HTTP, a.SyncTarget, a.SyncURL, a.SyncUser, password)
		var p *Problem
		if err == nil || !errors.As(err, &p) || !s.retry(p) {
			if err == nil && checkedTargets[a.SyncTarget] {
				fmt.Fprintln(s.cfg.Out, "  the target accepted the login.")
			}
			return err
		}
		a.SyncURL, a.SyncUser, a.SyncPassword = "", "", ""
	}
}

func (s *session) rest(a *Answers) error {
	if a.SyncTarget != "none" {
		if err := s.choose(&a.E2EE, "Are the notes end-to-end encrypted in Joplin?", "no", []string{"yes", "no"}); err != nil {
			return err
		}
		if a.E2EE == "yes" {
			if err := s.secret(&a.E2EEPassword, "The E2EE master password (hidden)", ""); err != nil {
				return err
			}
		}
	}
	meaning := "off"
	if slices.Contains(s.profiles(), "meaning") {
		meaning = "on"
	}
	return s.choose(&a.Meaning, "Search by meaning with the bundled embedder (note text stays on this machine)?", meaning, []string{"on", "off"})
}

// apply writes the answers into .env.
func (s *session) apply(a Answers) {
	e := s.env
	var profiles []string
	for _, p := range s.profiles() {
		if p != "meaning" && !slices.Contains(tunnels, p) {
			profiles = append(profiles, p)
		}
	}
	if a.Meaning == "on" {
		profiles = append(profiles, "meaning")
	}
	if slices.Contains(tunnels, a.Reach) {
		profiles = append(profiles, a.Reach)
	}
	e.Set("COMPOSE_PROFILES", strings.Join(profiles, ","))
	e.Set("NOTEBRIDGE_DOMAIN", a.Domain)
	public := a.Reach != "local"
	e.Set("NOTEBRIDGE_PUBLISH_MCP", map[bool]string{true: "on", false: "off"}[public])
	e.Set("NOTEBRIDGE_OAUTH", fmt.Sprint(public))
	switch a.Reach {
	case "cloudflare":
		e.Set("NOTEBRIDGE_CLOUDFLARE_TUNNEL_TOKEN", a.CloudflareToken)
	case "tailscale":
		e.Set("NOTEBRIDGE_TS_HOSTNAME", a.TSHostname)
		if a.TSAuthKey != "" {
			e.Set("NOTEBRIDGE_TS_AUTHKEY", a.TSAuthKey)
		}
	}
	for _, kv := range tunnelPorts {
		v, ok := e.Get(kv[0])
		switch tunnel := slices.Contains(tunnels, a.Reach); {
		case tunnel && !ok:
			// The tunnel needs no open port: Caddy's stay on this machine.
			e.Set(kv[0], kv[1])
		case !tunnel && ok && v == kv[1]:
			// Back to a domain (or local): the ports a tunnel kept local
			// would hide Caddy from the internet.
			e.Unset(kv[0])
		}
	}
	e.Set("NOTEBRIDGE_SYNC_TARGET", a.SyncTarget)
	if a.SyncURL != "" {
		e.Set("NOTEBRIDGE_SYNC_URL", a.SyncURL)
	}
	if a.SyncUser != "" {
		e.Set("NOTEBRIDGE_SYNC_USER", a.SyncUser)
	}
}

// save writes the secrets, then .env (0600; its directory's owner keeps
// owning it when setup runs as root in a container).
func (s *session) save(a Answers) error {
	for name, v := range s.secrets(a) {
		if v == "" || s.cfg.SecretsDir == "" {
			continue
		}
		path := filepath.Join(s.cfg.SecretsDir, name)
		if err := writePrivate(path, []byte(v+"\n")); err != nil {
			return fmt.Errorf("store %s: %w", name, err)
		}
		if err := s.chown(path, s.cfg.Owner[0], s.cfg.Owner[1]); err != nil {
			return err
		}
	}
	if err := writePrivate(s.cfg.EnvPath, s.env.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", s.cfg.EnvPath, err)
	}
	if os.Geteuid() == 0 {
		if st, err := os.Stat(filepath.Dir(s.cfg.EnvPath)); err == nil {
			if uid, gid, ok := ownerOf(st); ok {
				return s.chown(s.cfg.EnvPath, uid, gid)
			}
		}
	}
	return nil
}

// secrets are the answers stored as files of the secrets volume, by name.
func (s *session) secrets(a Answers) map[string]string {
	return map[string]string{"sync-password": a.SyncPassword, "e2ee-master-password": a.E2EEPassword}
}

// writePrivate replaces path with content, mode 0600, all or nothing: a
// temporary file beside it is written, synced and renamed over it.
func writePrivate(path string, content []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".setup-*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // nothing left after the rename
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func (s *session) chown(path string, uid, gid int) error {
	if uid < 0 {
		return nil
	}
	if err := os.Chown(path, uid, gid); err != nil {
		return fmt.Errorf("chown %s: %w", path, err)
	}
	return nil
}

func (s *session) nextSteps(a Answers) {
	out := s.cfg.Out
	fmt.Fprintf(out, "\nWrote %s (mode 0600).\n", s.cfg.EnvPath)
	if s.cfg.SecretsDir == "" {
		for name, v := range s.secrets(a) {
			if v != "" {
				fmt.Fprintf(out, "Store the %s (not saved here): docker compose run --rm sync-secret %s\n", name, name)
			}
		}
	}
	if a.SyncTarget == "dropbox" || a.SyncTarget == "onedrive" {
		fmt.Fprintln(out, "Authorise the sync once the stack runs: docker compose run --rm joplin authorize-sync (docs/sync.md)")
	}
	fmt.Fprintln(out, "Start the stack:  docker compose up -d --wait")
	if a.Reach == "local" {
		fmt.Fprintln(out, "This machine only: connect Claude Desktop, Claude Code or Codex over stdio (docs/quickstarts.md, Without Docker), or GPT Actions once a public name is set.")
		return
	}
	fmt.Fprintf(out, `
Connector URL:    https://%[1]s/mcp
Owner passphrase: docker compose exec bridge notebridge secrets show owner-passphrase
                  (typed on the consent page when a connector asks for access)

ChatGPT:  Settings → Apps → Advanced settings: turn on Developer mode; then
          Create app: name it, MCP server URL https://%[1]s/mcp,
          authentication OAuth; sign in and approve with the owner passphrase.
Claude:   Settings → Connectors → Add custom connector: URL
          https://%[1]s/mcp; Connect, and approve with the owner passphrase.
GPT Actions: import https://%[1]s/openapi.json; Bearer token:
          docker compose exec bridge notebridge secrets show actions-token
`, a.Domain)
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
