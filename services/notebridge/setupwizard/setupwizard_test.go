package setupwizard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const password = "correct horse battery"

// webdav answers PROPFIND on /dav/joplin with 207 for user "me" and the
// password, 401 otherwise, 404 elsewhere.
func webdav(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "PROPFIND" || r.URL.Path != "/dav/joplin" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if u, p, ok := r.BasicAuth(); !ok || u != "me" || p != password {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusMultiStatus)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// resolver knows notes.example.org only.
func resolver(_ context.Context, host string) ([]string, error) {
	if host == "notes.example.org" {
		return []string{"192.0.2.10"}, nil
	}
	return nil, errors.New("no such host")
}

// script is a Prompter answering from a list, recording the questions.
type script struct {
	answers []string
	asked   []string
}

func (s *script) next(q string) (string, error) {
	s.asked = append(s.asked, q)
	if len(s.answers) == 0 {
		return "", errors.New("the script ran out of answers at: " + q)
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a, nil
}
func (s *script) Ask(q, _ string) (string, error) { return s.next(q) }
func (s *script) Secret(q string) (string, error) { return s.next(q) }

func newConfig(t *testing.T, interactive bool, p Prompter) (Config, *strings.Builder) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	out := &strings.Builder{}
	return Config{EnvPath: filepath.Join(dir, ".env"), SecretsDir: secrets, Owner: [2]int{-1, -1}, Interactive: interactive,
		Prompt: p, Out: out, Resolve: resolver, HTTP: http.DefaultClient}, out
}

func readPrivate(t *testing.T, path string) string {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %04o, want 0600", path, st.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	return string(b)
}

func TestScriptedInstallWritesEnvAndSecrets(t *testing.T) {
	dav := webdav(t)
	cfg, out := newConfig(t, false, nil)
	err := Run(context.Background(), cfg, Answers{Reach: "domain", Domain: "notes.example.org", SyncTarget: "webdav",
		SyncURL: dav.URL + "/dav/joplin", SyncUser: "me", SyncPassword: password, E2EE: "no", Meaning: "on"})
	if err != nil {
		t.Fatal(err)
	}
	env := readPrivate(t, cfg.EnvPath)
	for _, want := range []string{"COMPOSE_PROFILES=bundled-joplin,meaning\n", "NOTEBRIDGE_DOMAIN=notes.example.org\n", "NOTEBRIDGE_PUBLISH_MCP=on\n",
		"NOTEBRIDGE_OAUTH=true\n", "NOTEBRIDGE_SYNC_TARGET=webdav\n", "NOTEBRIDGE_SYNC_URL=" + dav.URL + "/dav/joplin\n", "NOTEBRIDGE_SYNC_USER=me\n"} {
		if !strings.Contains(env, want) {
			t.Errorf(".env lacks %q:\n%s", want, env)
		}
	}
	if strings.Contains(env, password) {
		t.Error("the sync password is in .env")
	}
	if got := readPrivate(t, filepath.Join(cfg.SecretsDir, "sync-password")); got != password+"\n" {
		t.Errorf("sync-password secret: %q", got)
	}
	if s := out.String(); !strings.Contains(s, "https://notes.example.org/mcp") || !strings.Contains(s, "secrets show owner-passphrase") || strings.Contains(s, password) {
		t.Errorf("next steps:\n%s", s)
	}
}

// TestRefusedAnswersWriteNothing: a refused sync login and a domain that
// does not resolve end a scripted install with their code, and nothing is
// written.
func TestRefusedAnswersWriteNothing(t *testing.T) {
	dav := webdav(t)
	for name, c := range map[string]struct {
		a    Answers
		code string
	}{
		"refused login":  {Answers{Reach: "local", SyncTarget: "webdav", SyncURL: dav.URL + "/dav/joplin", SyncUser: "me", SyncPassword: "wrong"}, CodeSyncAuthFailed},
		"missing folder": {Answers{Reach: "local", SyncTarget: "webdav", SyncURL: dav.URL + "/nope", SyncUser: "me", SyncPassword: password}, CodeSyncBadURL},
		"target down":    {Answers{Reach: "local", SyncTarget: "webdav", SyncURL: "http://127.0.0.1:1/dav", SyncUser: "me", SyncPassword: password}, CodeSyncUnreachable},
		"no resolve":     {Answers{Reach: "domain", Domain: "nowhere.example.net", SyncTarget: "none"}, CodeDomainUnresolved},
		"bad reach":      {Answers{Reach: "ftp"}, CodeBadAnswer},
	} {
		cfg, out := newConfig(t, false, nil)
		err := Run(context.Background(), cfg, c.a)
		var p *Problem
		if !errors.As(err, &p) || p.Code != c.code {
			t.Errorf("%s: %v, want %s", name, err, c.code)
		}
		if _, err := os.Stat(cfg.EnvPath); !os.IsNotExist(err) {
			t.Errorf("%s: .env written", name)
		}
		if _, err := os.Stat(filepath.Join(cfg.SecretsDir, "sync-password")); !os.IsNotExist(err) {
			t.Errorf("%s: a secret written", name)
		}
		if strings.Contains(out.String()+err.Error(), password) {
			t.Errorf("%s: the password is shown", name)
		}
	}
}

// TestWrongAnswersAreAskedAgain: interactive, each refused answer is
// reported with its code and asked again.
func TestWrongAnswersAreAskedAgain(t *testing.T) {
	dav := webdav(t)
	p := &script{answers: []string{
		"ftp", "domain", // reached by
		"nowhere.example.net", "notes.example.org", // the public DNS name
		"webdav", dav.URL + "/dav/joplin", "me", "wrong", // the sync login, refused
		dav.URL + "/dav/joplin", "me", password, // again
		"yes", "the master password", "off",
	}}
	cfg, out := newConfig(t, true, p)
	if err := Run(context.Background(), cfg, Answers{}); err != nil {
		t.Fatalf("%v\nasked: %q", err, p.asked)
	}
	for _, code := range []string{CodeBadAnswer, CodeDomainUnresolved, CodeSyncAuthFailed} {
		if !strings.Contains(out.String(), code) {
			t.Errorf("output does not report %s:\n%s", code, out)
		}
	}
	if len(p.answers) != 0 {
		t.Errorf("answers left: %q", p.answers)
	}
	if got := readPrivate(t, filepath.Join(cfg.SecretsDir, "e2ee-master-password")); got != "the master password\n" {
		t.Errorf("e2ee secret: %q", got)
	}
	if env := readPrivate(t, cfg.EnvPath); !strings.Contains(env, "NOTEBRIDGE_DOMAIN=notes.example.org\n") {
		t.Errorf(".env:\n%s", env)
	}
}

// TestRunAgainChangesOneAnswer: a second run keeps every line it is not
// asked to change, comments included, and the stored sync password.
func TestRunAgainChangesOneAnswer(t *testing.T) {
	dav := webdav(t)
	cfg, _ := newConfig(t, false, nil)
	before := "# my notes\nCOMPOSE_PROFILES=bundled-joplin\n#NOTEBRIDGE_TOOLS=core\nNOTEBRIDGE_DOMAIN=notes.example.org\nNOTEBRIDGE_ACTIVITY_MAX_FILES=9\n"
	if err := os.WriteFile(cfg.EnvPath, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	first := Answers{Reach: "domain", SyncTarget: "webdav", SyncURL: dav.URL + "/dav/joplin", SyncUser: "me", SyncPassword: password, E2EE: "no", Meaning: "off"}
	if err := Run(context.Background(), cfg, first); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), cfg, Answers{Meaning: "on"}); err != nil {
		t.Fatal(err)
	}
	env := readPrivate(t, cfg.EnvPath)
	for _, want := range []string{"# my notes\n", "#NOTEBRIDGE_TOOLS=core\n", "NOTEBRIDGE_ACTIVITY_MAX_FILES=9\n", "COMPOSE_PROFILES=bundled-joplin,meaning\n",
		"NOTEBRIDGE_DOMAIN=notes.example.org\n", "NOTEBRIDGE_SYNC_TARGET=webdav\n", "NOTEBRIDGE_SYNC_USER=me\n"} {
		if !strings.Contains(env, want) {
			t.Errorf(".env lacks %q:\n%s", want, env)
		}
	}
	if got := readPrivate(t, filepath.Join(cfg.SecretsDir, "sync-password")); got != password+"\n" {
		t.Errorf("the stored password changed: %q", got)
	}
}

func TestTunnelAnswers(t *testing.T) {
	cfg, out := newConfig(t, false, nil)
	err := Run(context.Background(), cfg, Answers{Reach: "cloudflare", Domain: "notes.example.com", CloudflareToken: "eyJhIjoi-token", SyncTarget: "none", Meaning: "off"})
	if err != nil {
		t.Fatal(err)
	}
	env := readPrivate(t, cfg.EnvPath)
	for _, want := range []string{"COMPOSE_PROFILES=bundled-joplin,cloudflare\n", "NOTEBRIDGE_DOMAIN=notes.example.com\n", "NOTEBRIDGE_CLOUDFLARE_TUNNEL_TOKEN=eyJhIjoi-token\n",
		"NOTEBRIDGE_HTTPS_PORT=127.0.0.1:8443\n", "NOTEBRIDGE_OAUTH=true\n"} {
		if !strings.Contains(env, want) {
			t.Errorf(".env lacks %q:\n%s", want, env)
		}
	}
	if strings.Contains(out.String(), "eyJhIjoi-token") {
		t.Error("the tunnel token is printed")
	}
	// Back to a domain: the tunnel's local-only ports go, or Caddy would
	// not be reachable.
	if err := Run(context.Background(), cfg, Answers{Reach: "domain", Domain: "notes.example.org"}); err != nil {
		t.Fatal(err)
	}
	if env := readPrivate(t, cfg.EnvPath); !strings.Contains(env, "#NOTEBRIDGE_HTTPS_PORT=127.0.0.1:8443\n") || strings.Contains(env, "\nNOTEBRIDGE_HTTPS_PORT=") ||
		!strings.Contains(env, "COMPOSE_PROFILES=bundled-joplin\n") {
		t.Errorf("after switching to a domain:\n%s", env)
	}
	cfg, _ = newConfig(t, false, nil)
	var p *Problem
	if err := Run(context.Background(), cfg, Answers{Reach: "cloudflare", Domain: "notes.example.com", SyncTarget: "none"}); !errors.As(err, &p) || p.Code != CodeBadAnswer {
		t.Errorf("Cloudflare without a token: %v", err)
	}
}

// TestJoplinServerLogin: Joplin Server (and Cloud) logins are tried with a
// session, as the bundled Joplin signs in.
func TestJoplinServerLogin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Email, Password string }
		if r.Method != http.MethodPost || r.URL.Path != "/api/sessions" || json.NewDecoder(r.Body).Decode(&body) != nil {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if body.Email != "me@example.org" || body.Password != password {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Write([]byte(`{"id":"session"}`))
	}))
	t.Cleanup(srv.Close)
	for pw, want := range map[string]string{password: "", "wrong": CodeSyncAuthFailed} {
		err := CheckSync(context.Background(), http.DefaultClient, "joplin-server", srv.URL, "me@example.org", pw)
		var p *Problem
		got := ""
		if errors.As(err, &p) {
			got = p.Code
		} else if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("password %q: %v, want %q", pw, err, want)
		}
	}
}
