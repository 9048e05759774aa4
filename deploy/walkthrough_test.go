package deploy

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestWalkthroughPlaysTheREADMEConnectorPath: every numbered step of the
// README's connector path that names a `docker compose …` command is one
// deploy/ci/walkthrough.sh plays (stepN="$(readme_step N 'command')"), in the same
// order, and the script plays no step the README lacks; .ci/run walks it
// from a fresh clone, so the README cannot drift from what works.
func TestWalkthroughPlaysTheREADMEConnectorPath(t *testing.T) {
	readme := connectorSteps(t, read(t, "../README.md"))
	if len(readme) < 4 {
		t.Fatalf("found %d docker compose steps in the README's connector path, want at least 4 (build, setup, up, the passphrase): the scan is broken", len(readme))
	}
	var played []string
	for _, m := range regexp.MustCompile(`(?m)^step(\d+)="\$\(readme_step (\d+) '([^']+)'\)"$`).FindAllStringSubmatch(read(t, "ci/walkthrough.sh"), -1) {
		if m[1] != m[2] {
			t.Errorf("walkthrough.sh keeps step %s of the README in step%s", m[2], m[1])
		}
		played = append(played, m[2]+" "+m[3])
	}
	if strings.Join(played, "\n") != strings.Join(readme, "\n") {
		t.Errorf("the walk-through plays\n  %s\nthe README's connector path says\n  %s", strings.Join(played, "\n  "), strings.Join(readme, "\n  "))
	}
}

// connectorSteps returns "N command" for each numbered item of the
// README's "A connector in ChatGPT or Claude" list whose text (its line
// and the indented lines after it, as walkthrough.sh reads it) holds a
// `docker compose …` code span: the first such span.
func connectorSteps(t *testing.T, readme string) []string {
	t.Helper()
	_, path, ok := strings.Cut(readme, "**A connector in ChatGPT or Claude**")
	if !ok {
		t.Fatal("the README has no connector path (**A connector in ChatGPT or Claude**)")
	}
	lines := strings.Split(path, "\n")
	span := regexp.MustCompile("`(docker compose [^`]*)`")
	var out []string
	for i, line := range lines {
		if strings.HasPrefix(line, "**") {
			break
		}
		n := 0
		if _, err := fmt.Sscanf(line, "%d. ", &n); err != nil || !strings.HasPrefix(line, fmt.Sprintf("%d. ", n)) {
			continue
		}
		text := line
		for _, more := range lines[i+1:] {
			if !strings.HasPrefix(more, " ") {
				break
			}
			text += " " + more
		}
		if m := span.FindStringSubmatch(text); m != nil {
			out = append(out, fmt.Sprintf("%d %s", n, m[1]))
		}
	}
	return out
}
