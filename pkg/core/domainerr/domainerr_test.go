package domainerr

import (
	"errors"
	"fmt"
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

// TestHasCode: a domain error anywhere in the chain with one of the codes.
func TestHasCode(t *testing.T) {
	err := fmt.Errorf("read note: %w", New(NotFound, "no note"))
	if !HasCode(err, NotFound) || !HasCode(err, InvalidArgument, NotFound) || HasCode(err, InvalidArgument) ||
		HasCode(errors.New("plain"), NotFound) || HasCode(nil, NotFound) {
		t.Error("HasCode")
	}
}
