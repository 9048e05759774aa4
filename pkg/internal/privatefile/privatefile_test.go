package privatefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	private := filepath.Join(dir, "private")
	if err := os.WriteFile(private, []byte("secret-contents"), 0o600); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "shared")
	if err := os.WriteFile(shared, []byte("secret-contents"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	if err := Check(private); err != nil {
		t.Errorf("private file refused: %v", err)
	}
	for _, path := range []string{shared, link, dir, filepath.Join(dir, "missing")} {
		err := Check(path)
		if err == nil {
			t.Errorf("%s accepted", filepath.Base(path))
			continue
		}
		if strings.Contains(err.Error(), "secret-contents") {
			t.Errorf("%s: the error carries the contents: %v", filepath.Base(path), err)
		}
	}
}
