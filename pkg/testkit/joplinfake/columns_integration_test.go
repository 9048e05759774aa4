//go:build integration

package joplinfake

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/joplintc"
)

// moduleRoot walks up from the working directory to go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if parent := filepath.Dir(dir); parent != dir {
			dir = parent
			continue
		}
		t.Fatal("go.mod not found")
	}
}

// TestFakeColumnsMatchRealJoplin: the fake refuses a field its kind's table
// lacks (HTTP 500, like Joplin's SQLite), so a hermetic test catches a bad
// fields list only if the fake's columns are real Joplin's. Real Joplin must
// accept every column the fake knows, per kind, on the list and search
// routes, and refuse the columns the fake refuses (deleted_time on tags, the
// bug a type:tag search once had).
func TestFakeColumnsMatchRealJoplin(t *testing.T) {
	j := joplintc.Start(t, moduleRoot(t))
	get := func(path string, q url.Values) int {
		t.Helper()
		q.Set("token", joplintc.Token)
		resp, err := http.Get(j.URL() + path + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	searchType := map[*kind]string{noteKind: "note", folderKind: "folder", tagKind: "tag", resourceKind: "resource"}
	for k, typ := range searchType {
		all := strings.Join(k.fields, ",")
		if st := get("/"+k.table, url.Values{"fields": {all}}); st != http.StatusOK {
			t.Errorf("GET /%s with the fake's %d columns: HTTP %d", k.table, len(k.fields), st)
		}
		if st := get("/search", url.Values{"type": {typ}, "query": {"*"}, "fields": {all}}); st != http.StatusOK {
			t.Errorf("search type %s with the fake's columns: HTTP %d", typ, st)
		}
	}
	refused := []struct{ kind, field string }{{"tag", "deleted_time"}, {"tag", "body"}, {"resource", "deleted_time"}, {"folder", "body"}}
	for _, r := range refused {
		for k, typ := range searchType {
			if typ != r.kind {
				continue
			}
			if k.has(r.field) {
				t.Fatalf("the fake's %s has %s", typ, r.field)
			}
			if st := get("/search", url.Values{"type": {typ}, "query": {"*"}, "fields": {"id," + r.field}}); st != http.StatusInternalServerError {
				t.Errorf("real Joplin answered HTTP %d to search type %s with field %s; the fake answers 500", st, typ, r.field)
			}
		}
	}
}
