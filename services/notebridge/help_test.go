package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelpDescribesBothToolsets: --help names the service's two toolsets,
// where each is served, and the --toolsets flag.
func TestHelpDescribesBothToolsets(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "help"} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{arg}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", arg, code, stderr.String())
		}
		out := stdout.String()
		for _, want := range []string{"Joplin notes", "OKF knowledge bundles", "--toolsets", "\n  joplin ", "\n  okf ", "--okf-roots", "never over GPT Actions"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: help lacks %q:\n%s", arg, want, out)
			}
		}
	}
}
