// Package deploy holds the deployment files' tests: compose.yaml, .env,
// .env.example, the README and docs/ must agree.
package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type composeFile struct {
	Services map[string]struct {
		Build       any               `yaml:"build"`
		Image       string            `yaml:"image"`
		PullPolicy  string            `yaml:"pull_policy"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestImagesBuiltHereAreNeverPulled: an image name of this project that
// someone publishes on a registry must never be run instead of the local
// build. Every service that builds has pull_policy build; every other
// service running one of those images has pull_policy never; each image
// is built by one service only (the bridge image was built twice).
func TestImagesBuiltHereAreNeverPulled(t *testing.T) {
	c := readCompose(t)
	builtBy := map[string]string{}
	for name, s := range c.Services {
		if s.Build == nil {
			continue
		}
		if s.PullPolicy != "build" {
			t.Errorf("service %s builds %s but has pull_policy %q, want build", name, s.Image, s.PullPolicy)
		}
		if other, dup := builtBy[s.Image]; dup {
			t.Errorf("services %s and %s both build %s", name, other, s.Image)
		}
		builtBy[s.Image] = name
	}
	for name, s := range c.Services {
		if _, ours := builtBy[s.Image]; ours && s.Build == nil && s.PullPolicy != "never" {
			t.Errorf("service %s runs %s (built by %s) with pull_policy %q, want never", name, s.Image, builtBy[s.Image], s.PullPolicy)
		}
	}
	if builtBy["notebridge/bridge:local"] != "bridge" {
		t.Errorf("the bridge image is built by %q, want the bridge service", builtBy["notebridge/bridge:local"])
	}
}

// TestBridgeReadsTheSyncState: the sync interface (status.json, request)
// is the sync-state volume at /sync, named to the bridge.
func TestBridgeReadsTheSyncState(t *testing.T) {
	c := readCompose(t)
	b := c.Services["bridge"]
	if !slices.Contains(b.Volumes, "sync-state:/sync") || b.Environment["NOTEBRIDGE_SYNC_STATE_DIR"] != "/sync" {
		t.Errorf("bridge volumes %v, NOTEBRIDGE_SYNC_STATE_DIR %q", b.Volumes, b.Environment["NOTEBRIDGE_SYNC_STATE_DIR"])
	}
	if _, ok := c.Volumes["sync-state"]; !ok {
		t.Error("no sync-state volume")
	}
}

// TestEnvExampleListsEverySetting: every variable compose.yaml reads and
// every setting docs/stack.md and docs/quickstarts.md name for the stack
// (once the README's stack section) is in .env.example, and
// everything .env sets is there too.
func TestEnvExampleListsEverySetting(t *testing.T) {
	example := read(t, "../.env.example")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#?([A-Z][A-Z0-9_]+)=`).FindAllStringSubmatch(example, -1) {
		listed[m[1]] = true
	}
	need := map[string]string{}
	for _, m := range regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]+)`).FindAllStringSubmatch(read(t, "../compose.yaml"), -1) {
		need[m[1]] = "compose.yaml"
	}
	// The stack's pages (moved out of the README): docs/stack.md and the
	// quickstarts, up to their stdio section, which runs without compose.
	for _, page := range []string{"docs/stack.md", "docs/quickstarts.md"} {
		stack := read(t, "../"+page)
		if i := strings.Index(stack, "\n## Without Docker"); i >= 0 {
			stack = stack[:i]
		}
		named := regexp.MustCompile("`((?:NOTEBRIDGE|COMPOSE)_[A-Z0-9_]+)").FindAllStringSubmatch(stack, -1)
		if len(named) == 0 {
			t.Errorf("%s names no NOTEBRIDGE_ or COMPOSE_ setting: the scan is broken", page)
		}
		for _, m := range named {
			need[m[1]] = page
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^#?([A-Z][A-Z0-9_]+)=`).FindAllStringSubmatch(read(t, "../.env"), -1) {
		need[m[1]] = ".env"
	}
	for _, v := range []string{"NOTEBRIDGE_OAUTH", "COMPOSE_PROFILES", "NOTEBRIDGE_JOPLIN_URL", "NOTEBRIDGE_SYNC_TARGET"} {
		need[v] = "this test"
	}
	for v, where := range need {
		if !listed[v] && !bridgeOnly[v] {
			t.Errorf("%s (named in %s) is not in .env.example", v, where)
		}
	}
}

// bridgeOnly are variables compose.yaml sets inside a container, which
// are no setting of the stack.
var bridgeOnly = map[string]bool{"NOTEBRIDGE_SYNC_STATE_DIR": true, "NOTEBRIDGE_TRUSTED_PROXIES": true, "NOTEBRIDGE_INTERNAL_HOSTS": true, "NOTEBRIDGE_SECRETS_DIR": true,
	"NOTEBRIDGE_MAX_REQUEST_BYTES": true, "NOTEBRIDGE_OWNER_PASSPHRASE_FILE": true}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBundledEmbedderStaysInside: the profile "meaning"'s embedder is on
// the internal network only (note text never leaves the machine through
// it), bounded in CPU and memory so a full embedding cannot starve the
// bridge, and named to the bridge, which waits for it only when it runs.
func TestBundledEmbedderStaysInside(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Profiles    []string          `yaml:"profiles"`
			Networks    any               `yaml:"networks"` // a list, or a map (caddy)
			CPUs        float64           `yaml:"cpus"`
			MemLimit    string            `yaml:"mem_limit"`
			Ports       []string          `yaml:"ports"`
			Environment map[string]string `yaml:"environment"`
			DependsOn   map[string]struct {
				Required *bool `yaml:"required"`
			} `yaml:"depends_on"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	e, ok := c.Services["embedder"]
	if !ok {
		t.Fatal("compose.yaml has no embedder service")
	}
	if len(e.Profiles) != 1 || e.Profiles[0] != "meaning" {
		t.Errorf("embedder profiles %q, want only meaning (off unless asked for)", e.Profiles)
	}
	if nets, _ := e.Networks.([]any); len(nets) != 1 || nets[0] != "backend" || len(e.Ports) != 0 {
		t.Errorf("embedder networks %q ports %q, want the internal backend network only, nothing published", e.Networks, e.Ports)
	}
	if e.CPUs <= 0 || e.CPUs > 1 || e.MemLimit == "" {
		t.Errorf("embedder cpus %v mem_limit %q, want at most one core and a memory limit", e.CPUs, e.MemLimit)
	}
	b := c.Services["bridge"]
	if b.Environment["NOTEBRIDGE_EMBEDDINGS_BUNDLED_URL"] != "http://embedder:8090/v1" {
		t.Errorf("the bridge is not told the bundled embedder's URL: %q", b.Environment["NOTEBRIDGE_EMBEDDINGS_BUNDLED_URL"])
	}
	if d, ok := b.DependsOn["embedder"]; !ok || d.Required == nil || *d.Required {
		t.Error("the bridge must wait for the embedder only when its profile runs it (depends_on with required: false)")
	}
}
