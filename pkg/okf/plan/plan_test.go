package plan

import (
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/okf/store"
)

func base() store.Manifest {
	files := []store.FileState{
		{Path: "a.md", SHA: store.SHA256Hex([]byte("a"))},
		{Path: "index.md", SHA: store.SHA256Hex([]byte("i"))},
		{Path: "z/b.md", SHA: store.SHA256Hex([]byte("b"))},
	}
	return store.Manifest{Files: files, Revision: store.RevisionOf(files)}
}

func TestPlanShapeAndDigest(t *testing.T) {
	files := []File{
		{Path: "index.md", Before: []byte("i"), After: []byte("I")},
		{Path: "z/b.md", Before: []byte("b"), After: []byte("B")},
		{Path: "a.md", Before: []byte("a"), After: []byte("a")}, // unchanged: dropped
		{Path: "new.md", After: []byte("n")},
	}
	p := New("k", "sha256:r", base(), []string{"z/b.md", "index.md", "a.md", "z/b.md"}, files)
	if len(p.Files) != 3 || p.Files[len(p.Files)-1].Path != "index.md" {
		t.Fatalf("files %+v: want 3, root index.md last", p.Files)
	}
	if len(p.Reads) != 3 || p.Reads[0].Path != "a.md" {
		t.Fatalf("reads not deduplicated and sorted: %+v", p.Reads)
	}
	want := store.ResultRevision(base(), []store.FileChange{
		{Path: "index.md", Content: []byte("I")}, {Path: "z/b.md", Content: []byte("B")}, {Path: "new.md", Content: []byte("n")},
	})
	if p.ResultRevision != want || p.BaseRevision != base().Revision {
		t.Fatal("revisions wrong")
	}
	again := New("k", "sha256:r", base(), []string{"a.md", "index.md", "z/b.md"}, files)
	if again.Digest != p.Digest {
		t.Fatal("digest is not deterministic")
	}
	// Every bound component moves the digest.
	for name, other := range map[string]*Plan{
		"kind":    New("k2", "sha256:r", base(), []string{"a.md", "index.md", "z/b.md"}, files),
		"request": New("k", "sha256:x", base(), []string{"a.md", "index.md", "z/b.md"}, files),
		"reads":   New("k", "sha256:r", base(), []string{"a.md"}, files),
		"writes":  New("k", "sha256:r", base(), []string{"a.md", "index.md", "z/b.md"}, files[:2]),
		"deletes": New("k", "sha256:r", base(), []string{"a.md", "index.md", "z/b.md"}, append(files[:3:3], File{Path: "a.md", Before: []byte("a")})),
	} {
		if other.Digest == p.Digest {
			t.Errorf("changing %s does not change the digest", name)
		}
	}
	if k1, k2 := IdempotencyKey("k", p.Digest), IdempotencyKey("k2", p.Digest); k1 == k2 || len(k1) != 64 {
		t.Fatal("idempotency keys must be per kind and 64 hex")
	}
	ch := p.Changes()
	if !ch[0].ExpectSet || ch[2].ExpectSHA != store.SHA256Hex([]byte("i")) {
		t.Fatalf("changes must expect the before-content: %+v", ch)
	}
	if !New("k", "r", base(), nil, nil).Noop() {
		t.Fatal("empty plan is not a noop")
	}
}

func TestDiff(t *testing.T) {
	before := []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	after := []byte("1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\neleven\n")
	got := Diff("x.md", before, after)
	for _, want := range []string{"--- a/x.md\n+++ b/x.md\n", "@@ -1,6 +1,6 @@\n", "-3\n+three\n", "+eleven\n"} {
		if !strings.Contains(got, want) {
			t.Fatalf("diff lacks %q:\n%s", want, got)
		}
	}
	if d := Diff("n.md", nil, []byte("a\n")); !strings.Contains(d, "--- /dev/null") || !strings.Contains(d, "@@ -0,0 +1,1 @@") {
		t.Fatalf("new file diff:\n%s", d)
	}
	if d := Diff("n.md", []byte("a"), []byte("b")); !strings.Contains(d, "\\ No newline at end of file") {
		t.Fatalf("missing newline marker:\n%s", d)
	}
	big := strings.Repeat("line\n", 50_000)
	if d := Diff("big.md", nil, []byte(big)); len(d) > MaxDiffBytes+100 || !strings.HasSuffix(d, "... diff truncated\n") {
		t.Fatal("diff not bounded")
	}
}
