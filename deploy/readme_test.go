package deploy

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docPages are the pages a person reads: README.md and docs/*.md (the
// stack, the quickstarts and the commands moved out of the README live
// in docs/).
func docPages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../README.md"}, docs...)
}

// TestREADMEComposeServicesExist: every `docker compose run|exec|cp|logs`
// line of the README and of docs/ names a service compose.yaml has, so a
// renamed service cannot leave a newcomer's command broken.
func TestREADMEComposeServicesExist(t *testing.T) {
	services := readCompose(t).Services
	takesValue := map[string]bool{"-v": true, "--volume": true, "-e": true, "--env": true, "--entrypoint": true, "-w": true, "--user": true, "-u": true}
	n := 0
	perPage := map[string]int{}
	// A code span's closing backtick ends a command, so prose after it
	// (`… run --rm --service-ports`, after adding …) is no service.
	for _, page := range docPages(t) {
		name := strings.TrimPrefix(page, "../")
		for _, m := range regexp.MustCompile("docker compose (?:--profile \\S+ )*(run|exec|cp|logs)((?: [^\\s|;&)`]+)+)").FindAllStringSubmatch(read(t, page), -1) {
			words := strings.Fields(m[2])
			for i := 0; i < len(words); i++ {
				w := strings.Trim(words[i], "`")
				if strings.HasPrefix(w, "-") {
					if takesValue[w] {
						i++
					}
					continue
				}
				service, _, _ := strings.Cut(w, ":") // cp SERVICE:/path
				service = strings.Trim(service, "`.,")
				if _, ok := services[service]; !ok {
					t.Errorf("%s runs `docker compose %s%s`: compose.yaml has no service %q", name, m[1], m[2], service)
				}
				n++
				perPage[name]++
				break
			}
		}
	}
	// The README's first-time steps and the pages the stack's commands
	// moved to must each be scanned; the whole set holds dozens.
	for _, page := range []string{"README.md", "docs/stack.md", "docs/quickstarts.md", "docs/commands.md"} {
		if perPage[page] == 0 {
			t.Errorf("found no compose command in %s: the scan is broken (per page: %v)", page, perPage)
		}
	}
	if n < 30 {
		t.Errorf("found only %d compose commands in the README and docs/: the scan is broken (per page: %v)", n, perPage)
	}
}
