package deploy

import (
	"regexp"
	"strings"
	"testing"
)

// TestREADMEComposeServicesExist: every `docker compose run|exec|cp|logs`
// line of the README names a service compose.yaml has, so a renamed
// service cannot leave a newcomer's command broken.
func TestREADMEComposeServicesExist(t *testing.T) {
	services := readCompose(t).Services
	takesValue := map[string]bool{"-v": true, "--volume": true, "-e": true, "--env": true, "--entrypoint": true, "-w": true, "--user": true, "-u": true}
	n := 0
	for _, m := range regexp.MustCompile(`docker compose (?:--profile \S+ )*(run|exec|cp|logs)((?: [^\s|;&)]+)+)`).FindAllStringSubmatch(read(t, "../README.md"), -1) {
		words := strings.Fields(m[2])
		for i := 0; i < len(words); i++ {
			w := strings.Trim(words[i], "`")
			if strings.HasPrefix(w, "-") {
				if takesValue[w] {
					i++
				}
				continue
			}
			name, _, _ := strings.Cut(w, ":") // cp SERVICE:/path
			name = strings.Trim(name, "`.,")
			if _, ok := services[name]; !ok {
				t.Errorf("the README runs `docker compose %s%s`: compose.yaml has no service %q", m[1], m[2], name)
			}
			n++
			break
		}
	}
	if n < 10 {
		t.Errorf("found only %d compose commands in the README: the scan is broken", n)
	}
}
