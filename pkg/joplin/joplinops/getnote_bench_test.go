package joplinops_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
)

// getNoteFake answers GET /notes/<id> with one note of a 2 KB body, as
// Joplin would, and counts the requests.
func getNoteFake(b *testing.B, requests *int) (*httptest.Server, string) {
	note, _ := json.Marshal(map[string]any{
		"id": benchNoteID, "parent_id": strings.Repeat("b", 32), "title": "A note", "body": strings.Repeat("Some words. ", 170),
		"is_todo": 0, "todo_due": 0, "todo_completed": 0, "created_time": 1700000000000, "updated_time": 1700000000000, "deleted_time": 0,
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*requests++
		w.Header().Set("Content-Type", "application/json")
		w.Write(note)
	}))
	b.Cleanup(srv.Close)
	tok := filepath.Join(b.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("bench-token"), 0o600); err != nil {
		b.Fatal(err)
	}
	return srv, tok
}

const benchNoteID = "0123456789abcdef0123456789abcdef"

// BenchmarkGetNoteOverhead calls get_note through the executor against a
// fake Joplin over HTTP and, interleaved, fetches the same note straight
// from the fake with a kept-alive client (the REST floor). It reports both
// medians, their ratio, and Joplin requests per get_note call.
func BenchmarkGetNoteOverhead(b *testing.B) {
	var requests int
	srv, tok := getNoteFake(b, &requests)
	jc, err := joplin.New(joplin.Config{BaseURL: srv.URL, TokenFile: tok})
	if err != nil {
		b.Fatal(err)
	}
	reg, err := registry.New(joplinops.Operations(jc, joplinops.DefaultLimits)...)
	if err != nil {
		b.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		b.Fatal(err)
	}
	direct := &http.Client{}
	url := srv.URL + "/notes/" + benchNoteID + "?fields=id,parent_id,title,body&token=bench-token"
	args := json.RawMessage(`{"id":"` + benchNoteID + `"}`)
	ctx := context.Background()
	var viaBridge, viaREST []time.Duration
	requests = 0
	for b.Loop() {
		start := time.Now()
		if _, derr := ex.Call(ctx, principal.Stdio(), registry.MCPStdio, "get_note", args); derr != nil {
			b.Fatal(derr)
		}
		viaBridge = append(viaBridge, time.Since(start))
		start = time.Now()
		resp, err := direct.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		var v map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		viaREST = append(viaREST, time.Since(start))
	}
	bridge, rest := median(viaBridge), median(viaREST)
	b.ReportMetric(float64(bridge.Microseconds()), "bridge-median-µs")
	b.ReportMetric(float64(rest.Microseconds()), "rest-median-µs")
	b.ReportMetric(float64(bridge)/float64(rest), "ratio")
	b.ReportMetric(float64(requests-len(viaREST))/float64(len(viaBridge)), "joplin-requests/call")
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}
