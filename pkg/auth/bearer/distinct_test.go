package bearer

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	joplinTok  = "joplin-token-0123456789abcdef"
	mcpTok     = "mcp-token-0123456789abcdef0000"
	actionsTok = "actions-token-0123456789abcdef"
)

func bearerHeader(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

func TestDistinctRefusesSharedFilesAndTokens(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	joplin, mcp, actions := file("joplin", joplinTok), file("mcp", mcpTok+"\n"), file("actions", actionsTok)
	hard := filepath.Join(dir, "hard")
	if err := os.Link(mcp, hard); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dir, "sym")
	if err := os.Symlink(actions, sym); err != nil {
		t.Fatal(err)
	}
	creds := func(j, m, a string) []Credential {
		return []Credential{{"the Joplin token file", j}, {"the MCP bearer token file", m}, {"the Actions bearer token file", a}}
	}
	cases := map[string]struct {
		creds []Credential
		why   string
	}{
		"same path":                       {creds(joplin, mcp, mcp), "are the same file"},
		"same path, spelled differently":  {creds(joplin, mcp, dir+"/./mcp"), "are the same file"},
		"hard link":                       {creds(joplin, mcp, hard), "are the same file"},
		"Joplin token symlinked":          {creds(sym, mcp, actions), "are the same file"},
		"Joplin token file as bearer":     {creds(joplin, joplin, actions), "are the same file"},
		"same token, other whitespace":    {creds(joplin, mcp, file("mcp-copy", "  "+mcpTok+"\r\n")), "hold the same token"},
		"bearer holds the Joplin token":   {creds(joplin, file("joplin-copy", joplinTok), actions), "hold the same token"},
		"Joplin token file not yet there": {creds(filepath.Join(dir, "missing"), mcp, filepath.Join(dir, "missing")), "are the same file"},
	}
	for name, c := range cases {
		err := Distinct(c.creds...)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, tok := range []string{joplinTok, mcpTok, actionsTok} {
			if strings.Contains(err.Error(), tok) {
				t.Errorf("%s: the error shows a token", name)
			}
		}
	}
	if err := Distinct(creds(joplin, mcp, actions)...); err != nil {
		t.Errorf("distinct credentials refused: %v", err)
	}
	if err := Distinct(creds("", mcp, "")...); err != nil {
		t.Errorf("unset credentials compared: %v", err)
	}
	if err := Distinct(creds(file("empty-1", "\n"), mcp, file("empty-2", ""))...); err != nil {
		t.Errorf("two empty files hold no token and must not collide: %v", err)
	}
}

// guarded is an Actions token file that must differ from the MCP and
// Joplin token files, logging into a buffer.
func guarded(t *testing.T) (tf *TokenFile, actions, mcp, joplin string, logs *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	actions, mcp, joplin = filepath.Join(dir, "actions"), filepath.Join(dir, "mcp"), filepath.Join(dir, "joplin")
	for p, tok := range map[string]string{actions: actionsTok, mcp: mcpTok, joplin: joplinTok} {
		if err := os.WriteFile(p, []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base, err := NewTokenFile(actions)
	if err != nil {
		t.Fatal(err)
	}
	logs = &bytes.Buffer{}
	tf = base.DistinctFrom("the Actions bearer token file", slog.New(slog.NewTextHandler(logs, nil)),
		Credential{"the MCP bearer token file", mcp}, Credential{"the Joplin token file", joplin}, Credential{"unset", ""})
	if err := tf.Check(bearerHeader(actionsTok)); err != nil {
		t.Fatalf("distinct credentials: %v", err)
	}
	return tf, actions, mcp, joplin, logs
}

func TestRotationIntoACollisionFailsClosed(t *testing.T) {
	tf, actions, mcp, _, logs := guarded(t)
	if err := os.WriteFile(actions, []byte(mcpTok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]http.Header{"MCP token": bearerHeader(mcpTok), "old token": bearerHeader(actionsTok), "no header": {}} {
		if err := tf.Check(h); !errors.Is(err, ErrCredentialConflict) {
			t.Errorf("%s after rotating to the MCP token: %v", name, err)
		}
	}
	logged := logs.String()
	if strings.Count(logged, "credential conflict") != 1 || !strings.Contains(logged, actions) || !strings.Contains(logged, mcp) ||
		!strings.Contains(logged, "hold the same token") || strings.Contains(logged, mcpTok) {
		t.Errorf("want one log line naming both files and no token, got: %s", logged)
	}
	// Fixing the file restores service at once, and says so.
	next := "actions-rotated-0123456789abcdef"
	if err := os.WriteFile(actions, []byte(next), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tf.Check(bearerHeader(next)); err != nil {
		t.Fatalf("after the fix: %v", err)
	}
	if err := tf.Check(bearerHeader(mcpTok)); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("MCP token after the fix: %v", err)
	}
	if !strings.Contains(logs.String(), "credential conflict fixed") {
		t.Errorf("the fix is not logged: %s", logs.String())
	}
}

func TestPeerRotationIntoACollisionFailsClosed(t *testing.T) {
	tf, _, _, joplin, _ := guarded(t)
	// The Joplin token file is rotated to the Actions token.
	if err := os.WriteFile(joplin, []byte(actionsTok), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tf.Check(bearerHeader(actionsTok)); !errors.Is(err, ErrCredentialConflict) {
		t.Fatalf("Joplin token rotated to the Actions token: %v", err)
	}
}

func TestReplacingTheFileWithALinkToAPeerFailsClosed(t *testing.T) {
	for _, kind := range []string{"hard link", "symlinked peer"} {
		tf, actions, mcp, joplin, logs := guarded(t)
		var err error
		if kind == "hard link" {
			// The Actions file becomes a hard link of the MCP file.
			if err = os.Remove(actions); err == nil {
				err = os.Link(mcp, actions)
			}
		} else {
			// The Joplin token file becomes a symlink to the Actions file.
			if err = os.Remove(joplin); err == nil {
				err = os.Symlink(actions, joplin)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tf.Check(bearerHeader(mcpTok)); !errors.Is(err, ErrCredentialConflict) {
			t.Errorf("%s: %v", kind, err)
		}
		if !strings.Contains(logs.String(), "are the same file") {
			t.Errorf("%s: log: %s", kind, logs.String())
		}
	}
}
