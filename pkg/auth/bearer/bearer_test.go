package bearer

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

const tok = "0123456789abcdef0123456789abcdef"

func tokenFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckMatrix(t *testing.T) {
	tf, err := NewTokenFile(tokenFile(t, tok+"\n", 0o600))
	if err != nil {
		t.Fatal(err)
	}
	wrongSameLength := "f123456789abcdef0123456789abcdef"
	cases := map[string][]string{
		"no header":          nil,
		"empty header":       {""},
		"basic scheme":       {"Basic " + tok},
		"lowercase scheme":   {"bearer " + tok},
		"missing space":      {"Bearer" + tok},
		"extra space":        {"Bearer  " + tok},
		"trailing space":     {"Bearer " + tok + " "},
		"leading whitespace": {" Bearer " + tok},
		"tab":                {"Bearer\t" + tok},
		"two headers":        {"Bearer " + tok, "Bearer " + tok},
		"comma joined":       {"Bearer " + tok + ",Bearer " + tok},
		"wrong same length":  {"Bearer " + wrongSameLength},
		"non-ASCII":          {"Bearer " + tok[:31] + "é"},
		"prefix only":        {"Bearer " + tok[:16]},
		"scheme only":        {"Bearer "},
	}
	for name, values := range cases {
		h := http.Header{}
		for _, v := range values {
			h.Add("Authorization", v)
		}
		if err := tf.Check(h); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+tok)
	if err := tf.Check(h); err != nil {
		t.Fatalf("valid token rejected: %v", err)
	}
}

func TestRotationTakesEffectOnNextRequest(t *testing.T) {
	p := tokenFile(t, tok, 0o600)
	tf, err := NewTokenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Authorization": {"Bearer " + tok}}
	if tf.Check(h) != nil {
		t.Fatal("initial token rejected")
	}
	next := "fedcba9876543210fedcba9876543210"
	// Same size, written at once: rotation must not depend on a size change.
	if err := os.WriteFile(p, []byte(next), 0o600); err != nil {
		t.Fatal(err)
	}
	if tf.Check(h) == nil {
		t.Fatal("old token still accepted after rotation")
	}
	if tf.Check(http.Header{"Authorization": {"Bearer " + next}}) != nil {
		t.Fatal("new token rejected after rotation")
	}
}

func TestTokenFileMustBePrivateAndRegular(t *testing.T) {
	if _, err := NewTokenFile(tokenFile(t, tok, 0o644)); err == nil {
		t.Error("world-readable token file accepted")
	}
	if _, err := NewTokenFile(t.TempDir()); err == nil {
		t.Error("directory accepted")
	}
	p := tokenFile(t, tok, 0o600)
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(p, link)
	if _, err := NewTokenFile(link); err == nil {
		t.Error("symlink accepted")
	}
	if _, err := NewTokenFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file accepted")
	}
	empty, _ := NewTokenFile(tokenFile(t, "\n", 0o600))
	if empty.Check(http.Header{"Authorization": {"Bearer x"}}) == nil {
		t.Error("empty token file authenticates")
	}
}
