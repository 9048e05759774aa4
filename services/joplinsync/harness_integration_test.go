//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
)

// The real components of the sync tests: a WebDAV server (Debian's rclone,
// from the host, in a container of the Joplin image), the bundled Joplin
// (the compose-built image: supervisor + Data API), a second Joplin CLI
// profile playing the person's other device (a container of the same
// image), and notebridge itself (`notebridge mcp stdio`, built from this
// module) in front of the bundled Joplin.

const (
	davUser  = "dav"
	davPass  = "dav-secret-pass-1"
	apiToken = "syncIntegrationToken0123456789"
	// uid 1000 runs Joplin in the image; the files it reads or writes on
	// the host are given to it.
	imageUID = 1000
)

func joplinImage() string {
	if img := os.Getenv("NOTEBRIDGE_JOPLIN_IMAGE"); img != "" {
		return img
	}
	return "notebridge/joplin:3.5.1"
}

// engine makes testcontainers use the local engine's published ports (see
// pkg/joplin/joplintc) and checks the image is there.
func engine(t *testing.T) {
	t.Helper()
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
		if h := os.Getenv("DOCKER_HOST"); h == "" || strings.HasPrefix(h, "unix://") {
			os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
		}
	}
	if out, err := exec.Command("docker", "image", "inspect", joplinImage()).CombinedOutput(); err != nil {
		t.Fatalf("image %s: %v: %s (build it: docker compose build joplin)", joplinImage(), err, out)
	}
}

func newNetwork(t *testing.T) *testcontainers.DockerNetwork {
	t.Helper()
	nw, err := network.New(context.Background())
	if err != nil {
		t.Fatalf("network: %v", err)
	}
	t.Cleanup(func() { _ = nw.Remove(context.Background()) })
	return nw
}

// ownedDir makes a host directory for uid 1000 in the containers.
func ownedDir(t *testing.T, mode os.FileMode) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, imageUID, imageUID); err != nil {
		t.Skipf("cannot give %s to uid %d (run as root): %v", dir, imageUID, err)
	}
	return dir
}

func run(t *testing.T, name string, opts ...testcontainers.ContainerCustomizer) *testcontainers.DockerContainer {
	t.Helper()
	c, err := testcontainers.Run(context.Background(), joplinImage(), opts...)
	if c != nil {
		t.Cleanup(func() {
			if t.Failed() {
				dumpLogs(t, name, c)
			}
			_ = c.Terminate(context.Background())
		})
	}
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	return c
}

func dumpLogs(t *testing.T, name string, c *testcontainers.DockerContainer) {
	r, err := c.Logs(context.Background())
	if err != nil {
		return
	}
	b, _ := io.ReadAll(r)
	if len(b) > 20000 {
		b = b[len(b)-20000:]
	}
	t.Logf("--- %s logs:\n%s", name, b)
}

func binds(paths ...string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
		hc.Binds = append(hc.Binds, paths...)
	})
}

// webDAV is an rclone WebDAV server on the test network (alias "webdav",
// port 8080) serving a host directory, with basic auth.
type webDAV struct {
	C   *testcontainers.DockerContainer
	Dir string // the served directory on the host
}

// startWebDAV serves a new directory whose collections (the sync targets'
// folders) exist before the server starts: rclone caches listings.
func startWebDAV(t *testing.T, nw *testcontainers.DockerNetwork, collections ...string) *webDAV {
	t.Helper()
	rclone, err := exec.LookPath("rclone")
	if err != nil {
		t.Fatalf("rclone not found (apt-get install rclone): %v", err)
	}
	rclone, _ = filepath.EvalSymlinks(rclone)
	dir := t.TempDir()
	for _, c := range collections {
		if err := os.MkdirAll(filepath.Join(dir, c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := run(t, "webdav",
		testcontainers.WithEntrypoint("/usr/local/bin/rclone"),
		testcontainers.WithCmd("serve", "webdav", "/dav", "--addr", ":8080"),
		testcontainers.WithEnv(map[string]string{"RCLONE_USER": davUser, "RCLONE_PASS": davPass}),
		testcontainers.WithConfigModifier(func(c *container.Config) { c.User = "0:0" }),
		binds(rclone+":/usr/local/bin/rclone:ro", dir+":/dav"),
		network.WithNetwork([]string{"webdav"}, nw),
		testcontainers.WithExposedPorts("8080/tcp"),
		testcontainers.WithWaitStrategyAndDeadline(time.Minute, wait.ForHTTP("/").WithPort("8080/tcp").
			WithStatusCodeMatcher(func(s int) bool { return s == http.StatusUnauthorized })),
	)
	return &webDAV{C: c, Dir: dir}
}

// Contains reports whether any file under the served directory holds s.
func (w *webDAV) Contains(t *testing.T, s string) bool {
	t.Helper()
	return len(filesWith(w.Dir, s, "")) > 0
}

// filesWith lists the files under dir whose name ends with suffix and
// whose content holds s.
func filesWith(dir, s, suffix string) []string {
	var found []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, suffix) {
			if b, rerr := os.ReadFile(p); rerr == nil && bytes.Contains(b, []byte(s)) {
				found = append(found, p)
			}
		}
		return nil
	})
	return found
}

// bundled is the bundled Joplin container with its secrets and sync state
// directories on the host.
type bundled struct {
	C        *testcontainers.DockerContainer
	StateDir string
	URL      string // the Data API through the published port
}

// startBundled runs the Joplin image as compose does: token, sync settings
// from env, secrets (0600, uid 1000) at /secrets, the sync state at /sync.
func startBundled(t *testing.T, nw *testcontainers.DockerNetwork, env map[string]string, secrets map[string]string, extraBinds ...string) *bundled {
	t.Helper()
	secretsDir := ownedDir(t, 0o700)
	for name, v := range secrets {
		p := filepath.Join(secretsDir, name)
		if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, imageUID, imageUID); err != nil {
			t.Fatal(err)
		}
	}
	state := ownedDir(t, 0o700)
	e := map[string]string{"JOPLIN_TOKEN": apiToken, "NOTEBRIDGE_SYNC_DEBUG": "1", "NOTEBRIDGE_SYNC_STATE_DIR": "/sync", "NOTEBRIDGE_SECRETS_DIR": "/secrets"}
	for k, v := range env {
		e[k] = v
	}
	c := run(t, "bundled joplin",
		testcontainers.WithEnv(e),
		binds(append([]string{secretsDir + ":/secrets:ro", state + ":/sync"}, extraBinds...)...),
		network.WithNetwork([]string{"joplin"}, nw),
		testcontainers.WithExposedPorts("41184/tcp"),
		testcontainers.WithWaitStrategyAndDeadline(3*time.Minute, wait.ForHTTP("/ping").WithPort("41184/tcp").
			WithStartupTimeout(3*time.Minute).WithPollInterval(200*time.Millisecond)),
	)
	ep, err := c.PortEndpoint(context.Background(), "41184/tcp", "http")
	if err != nil {
		t.Fatal(err)
	}
	return &bundled{C: c, StateDir: state, URL: ep}
}

// Status reads status.json (the zero Status while there is none).
func (b *bundled) Status(t *testing.T) Status {
	t.Helper()
	var s Status
	raw, err := os.ReadFile(filepath.Join(b.StateDir, statusName))
	if err == nil {
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("status.json does not parse: %v\n%s", err, raw)
		}
	}
	return s
}

// WaitStatus polls status.json until cond holds.
func (b *bundled) WaitStatus(t *testing.T, timeout time.Duration, what string, cond func(Status) bool) Status {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := b.Status(t)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("status: %s not reached within %s; last: %+v (error %+v)", what, timeout, s, s.LastError)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitSyncs waits until completed_syncs exceeds n.
func (b *bundled) WaitSyncs(t *testing.T, n int64, timeout time.Duration) Status {
	t.Helper()
	return b.WaitStatus(t, timeout, "a completed sync", func(s Status) bool { return s.CompletedSyncs > n })
}

// Request touches the sync request file as the bridge does after a write.
func (b *bundled) Request(t *testing.T) {
	t.Helper()
	p := filepath.Join(b.StateDir, requestName)
	now := time.Now()
	if err := os.WriteFile(p, []byte(now.UTC().Format(time.RFC3339)), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, now, now)
}

// API calls the bundled Joplin's Data API directly.
func (b *bundled) API(t *testing.T, path string, out any) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	resp, err := http.Get(b.URL + path + sep + "token=" + apiToken)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// device is the person's other device: a Joplin CLI profile in a container
// of the same image, driven with `joplin --profile P batch FILE`.
type device struct {
	C       *testcontainers.DockerContainer
	profile string
}

const deviceProfile = "/home/node/device"

func startDevice(t *testing.T, nw *testcontainers.DockerNetwork, settings map[string]any, extraBinds ...string) *device {
	t.Helper()
	c := run(t, "device",
		// A shell that ends on SIGTERM (sleep as PID 1 would not).
		testcontainers.WithEntrypoint("sh", "-c", "trap 'exit 0' TERM; sleep infinity & wait"),
		binds(extraBinds...),
		network.WithNetwork([]string{"device"}, nw),
	)
	d := &device{C: c, profile: deviceProfile}
	b, _ := json.Marshal(settings)
	d.put(t, "/home/node/device-settings.json", b)
	d.exec(t, "joplin", "--profile", d.profile, "config", "--import-file", "/home/node/device-settings.json")
	return d
}

func (d *device) put(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := d.C.CopyToContainer(context.Background(), content, path, 0o644); err != nil {
		t.Fatalf("copy %s: %v", path, err)
	}
}

func (d *device) exec(t *testing.T, cmd ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, r, err := d.C.Exec(ctx, cmd, tcexec.Multiplexed(), tcexec.WithUser("node"))
	if err != nil {
		t.Fatalf("device %v: %v", cmd, err)
	}
	out, _ := io.ReadAll(r)
	if code != 0 {
		t.Fatalf("device %v: exit %d: %s", cmd, code, out)
	}
	return string(out)
}

// Batch runs commands in one Joplin process on the device.
func (d *device) Batch(t *testing.T, cmds ...string) string {
	t.Helper()
	d.put(t, "/home/node/batch.txt", []byte(strings.Join(cmds, "\n")+"\n"))
	return d.exec(t, "joplin", "--profile", d.profile, "batch", "/home/node/batch.txt")
}

// Sync syncs the device and fails the test when the sync reports an error.
func (d *device) Sync(t *testing.T, also ...string) string {
	t.Helper()
	out := d.Batch(t, append([]string{"sync"}, also...)...)
	if strings.Contains(out, "Last error:") {
		t.Fatalf("device sync failed:\n%s", out)
	}
	return out
}

// bridge is notebridge (`mcp stdio`) in front of the bundled Joplin.
type bridge struct {
	call mcptest.CallFunc
}

var notebridgeBin string

// startBridge runs notebridge against the bundled Joplin; extra flags go
// to `notebridge mcp stdio` (e.g. --sync-state-dir).
func startBridge(t *testing.T, b *bundled, extra ...string) *bridge {
	t.Helper()
	if notebridgeBin == "" {
		notebridgeBin = mcptest.BuildBinary(t, mcptest.ModuleRoot(t))
		// BuildBinary's directory belongs to this test; keep a copy for the
		// others.
		keep := filepath.Join(os.TempDir(), "joplinsync-itest-notebridge")
		if raw, err := os.ReadFile(notebridgeBin); err == nil && os.WriteFile(keep, raw, 0o700) == nil {
			notebridgeBin = keep
		}
	}
	tok := filepath.Join(t.TempDir(), "joplin-token")
	if err := os.WriteFile(tok, []byte(apiToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--joplin-url", b.URL, "--joplin-token-file", tok, "--state-dir", t.TempDir()}, extra...)
	c := mcptest.Binary(t, notebridgeBin, args...)
	return &bridge{call: mcptest.Caller(t, c)}
}

// Call calls a tool and fails the test on a domain error.
func (br *bridge) Call(t *testing.T, tool string, args any, out any) {
	t.Helper()
	raw, derr := br.Try(tool, args)
	if derr != nil {
		t.Fatalf("%s: %s: %s", tool, derr.Code, derr.Message)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
}

func (br *bridge) Try(tool string, args any) (json.RawMessage, *domainerr.Error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return br.call(ctx, tool, args)
}

// Found reports whether notebridge's search finds a note with this id.
func (br *bridge) Found(t *testing.T, query, id string) bool {
	t.Helper()
	var res struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	br.Call(t, "search", map[string]any{"query": query}, &res)
	for _, it := range res.Items {
		if it.ID == id {
			return true
		}
	}
	return false
}

// note is what get_note answers (the parts the tests read).
type note struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Body       string `json:"body"`
	NotebookID string `json:"notebook_id"`
}

// webdavSettings configures a Joplin profile for the test WebDAV server.
func webdavSettings(collection string) map[string]any {
	return map[string]any{"sync.target": 6, "sync.6.path": "http://webdav:8080/" + collection,
		"sync.6.username": davUser, "sync.6.password": davPass}
}

// webdavEnv configures the bundled Joplin for the test WebDAV server, as
// .env does (docs/sync.md).
func webdavEnv(collection string, interval time.Duration) map[string]string {
	return map[string]string{"NOTEBRIDGE_SYNC_TARGET": "webdav", "NOTEBRIDGE_SYNC_URL": "http://webdav:8080/" + collection,
		"NOTEBRIDGE_SYNC_USER": davUser, "NOTEBRIDGE_SYNC_INTERVAL": interval.String()}
}
