package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecretsInitCreatesKeepsAndImports(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets")
	out, err := exec.Command(binPath, "secrets", "init", "--dir", dir).CombinedOutput()
	if err != nil || strings.Count(string(out), "created") != 5 {
		t.Fatalf("first run: %s %v", out, err)
	}
	tokens := map[string]string{}
	for _, name := range []string{"joplin-token", "mcp-token", "actions-token"} {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", name, fi, err)
		}
		b, _ := os.ReadFile(p)
		tokens[name] = strings.TrimSpace(string(b))
		if strings.Contains(string(out), tokens[name]) {
			t.Fatal("a token was printed")
		}
	}
	if tokens["mcp-token"] == tokens["actions-token"] || tokens["mcp-token"] == tokens["joplin-token"] {
		t.Fatal("tokens are not independent")
	}
	src := filepath.Join(t.TempDir(), "desktop")
	os.WriteFile(src, []byte("desktop-token-123\n"), 0o600)
	out, err = exec.Command(binPath, "secrets", "init", "--dir", dir, "--joplin-token-from", src).CombinedOutput()
	if err != nil || strings.Count(string(out), "kept") != 4 || !strings.Contains(string(out), "imported") {
		t.Fatalf("second run: %s %v", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "joplin-token")); strings.TrimSpace(string(b)) != "desktop-token-123" {
		t.Fatalf("import: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "mcp-token")); strings.TrimSpace(string(b)) != tokens["mcp-token"] {
		t.Fatal("an existing token was replaced")
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("secrets directory mode %v", fi.Mode().Perm())
	}
	shown, err := exec.Command(binPath, "secrets", "show", "actions-token", "--dir", dir).Output()
	if err != nil || strings.TrimSpace(string(shown)) != tokens["actions-token"] {
		t.Fatalf("secrets show: %v", err)
	}
	if err := exec.Command(binPath, "secrets", "show", "../etc/passwd", "--dir", dir).Run(); err == nil {
		t.Fatal("secrets show accepted an arbitrary name")
	}
}
