//go:build integration

// Package joplintc starts a real Joplin (the joplin CLI's Data API server)
// in a container with testcontainers-go, behind a local TCP proxy whose
// address stays fixed across container restarts. Integration tests only.
package joplintc

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// ImageEnv names the variable holding a prebuilt Joplin image tag (CI uses
// the one `docker compose build` makes). Without it the image is built from
// deploy/joplin/Dockerfile, which needs node:20-bookworm-slim (a registry,
// or deploy/offline/seed-base-images.sh).
const ImageEnv = "NOTEBRIDGE_JOPLIN_IMAGE"

// Token is the API token the test container is configured with.
const Token = "notebridgeIntegrationToken0123456789"

// Joplin is a running Joplin container plus the proxy in front of it.
type Joplin struct {
	C         *testcontainers.DockerContainer
	Proxy     *Proxy
	TokenFile string
}

// Start runs a fresh Joplin container and waits until /ping answers.
func Start(t *testing.T, moduleRoot string) *Joplin {
	t.Helper()
	ctx := context.Background()
	localEngineHost()
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithEnv(map[string]string{"JOPLIN_TOKEN": Token}),
		testcontainers.WithExposedPorts("41184/tcp"),
		testcontainers.WithWaitStrategyAndDeadline(3*time.Minute, wait.ForHTTP("/ping").WithPort("41184/tcp").
			WithStartupTimeout(3*time.Minute).WithPollInterval(200*time.Millisecond)),
	}
	image := os.Getenv(ImageEnv)
	if image == "" {
		opts = append(opts, testcontainers.WithDockerfile(testcontainers.FromDockerfile{
			Context: moduleRoot, Dockerfile: filepath.Join("deploy", "joplin", "Dockerfile"), KeepImage: true,
		}))
	}
	c, err := testcontainers.Run(ctx, image, opts...)
	if c != nil {
		t.Cleanup(func() { _ = c.Terminate(context.Background()) })
	}
	if err != nil {
		t.Fatalf("start Joplin container: %v", err)
	}
	tokenFile := filepath.Join(t.TempDir(), "joplin-token")
	if err := os.WriteFile(tokenFile, []byte(Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	j := &Joplin{C: c, TokenFile: tokenFile}
	j.Proxy = NewProxy(t, j.endpoint(t))
	return j
}

// localEngineHost makes testcontainers reach mapped ports on 127.0.0.1 when
// the engine is local. Otherwise, on a machine that has /.dockerenv (such
// as a CI sandbox), it believes it runs inside a container and dials the
// default gateway instead, where nothing answers.
func localEngineHost() {
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") != "" {
		return
	}
	if h := os.Getenv("DOCKER_HOST"); h == "" || strings.HasPrefix(h, "unix://") {
		os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
	}
}

// URL is the stable Data API origin (the proxy) to hand to the bridge.
func (j *Joplin) URL() string { return "http://" + j.Proxy.Addr() }

func (j *Joplin) endpoint(t *testing.T) string {
	t.Helper()
	ep, err := j.C.PortEndpoint(context.Background(), "41184/tcp", "")
	if err != nil {
		t.Fatalf("Joplin endpoint: %v", err)
	}
	return ep
}

// Stop stops the container; the proxy then refuses connections.
func (j *Joplin) Stop(t *testing.T) {
	t.Helper()
	timeout := 10 * time.Second
	if err := j.C.Stop(context.Background(), &timeout); err != nil {
		t.Fatalf("stop Joplin: %v", err)
	}
	j.Proxy.SetUpstream("")
}

// StartAgain starts the stopped container, waits for /ping, and points the
// proxy at its new mapped port.
func (j *Joplin) StartAgain(t *testing.T) {
	t.Helper()
	if err := j.C.Start(context.Background()); err != nil {
		t.Fatalf("start Joplin: %v", err)
	}
	j.Proxy.SetUpstream(j.endpoint(t))
}

// Restart restarts Joplin, which rebuilds its search index (the CLI server
// indexes only at start). It first waits for Joplin's change log to settle:
// Joplin records an item change asynchronously after answering the write,
// and a stop before that record is saved leaves the note out of the index
// for good.
func (j *Joplin) Restart(t *testing.T) {
	t.Helper()
	j.waitChangesSaved(t)
	j.Stop(t)
	j.StartAgain(t)
}

// waitChangesSaved polls /events (without a cursor it answers the latest
// change id) until the id has not moved for a second, for at most 15 s.
func (j *Joplin) waitChangesSaved(t *testing.T) {
	t.Helper()
	latest := func() string {
		resp, err := http.Get(j.URL() + "/events?token=" + Token)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		var body struct {
			Cursor json.RawMessage `json:"cursor"` // a string or a number across versions
		}
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
			return ""
		}
		return string(body.Cursor)
	}
	prev, stableSince := latest(), time.Now()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		cur := latest()
		if cur != prev || cur == "" {
			prev, stableSince = cur, time.Now()
			continue
		}
		if time.Since(stableSince) >= time.Second {
			return
		}
	}
}
