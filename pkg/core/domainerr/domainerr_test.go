package domainerr

import (
	"os"
	"strings"
	"testing"
)

// TestEveryCodeIsDocumented keeps docs/errors.md in step with the codes.
func TestEveryCodeIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range AllCodes {
		if !strings.Contains(string(doc), "| `"+string(c)+"` |") {
			t.Errorf("code %s has no row in docs/errors.md", c)
		}
	}
}
