package revision

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// fixture is one step of testdata/dmp_chain.json, written by the
// diff-match-patch build Joplin 3.5.1 ships (patch_make, then
// JSON.stringify as Revision.createTextPatch does, and patch_toText as the
// legacy format): the texts include non-ASCII and astral characters, so
// UTF-16 positions matter.
type fixture struct {
	TitleDiff  string `json:"title_diff"`
	BodyDiff   string `json:"body_diff"`
	LegacyBody string `json:"legacy_body_diff"`
	Title      string `json:"title"`
	Body       string `json:"body"`
}

func loadChain(t *testing.T) []fixture {
	t.Helper()
	b, err := os.ReadFile("testdata/dmp_chain.json")
	if err != nil {
		t.Fatal(err)
	}
	var fs []fixture
	if err := json.Unmarshal(b, &fs); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestMergeReconstructsEveryRevisionOfARealChain(t *testing.T) {
	fs := loadChain(t)
	var revs []Revision
	for i, f := range fs {
		r := Revision{ID: fmt.Sprintf("r%d", i), TitleDiff: f.TitleDiff, BodyDiff: f.BodyDiff,
			MetadataDiff: fmt.Sprintf(`{"new":{"is_todo":%d},"deleted":[]}`, i%2)}
		if i > 0 {
			r.ParentID = revs[i-1].ID
		}
		revs = append(revs, r)
	}
	// An unrelated revision in the list must not join the chain.
	revs = append(revs, Revision{ID: "other", TitleDiff: `[{"diffs":[[1,"X"]],"start1":0,"start2":0,"length1":0,"length2":1}]`})
	for i, f := range fs {
		chain := Chain(revs[i], revs)
		if len(chain) != i+1 {
			t.Fatalf("revision %d: chain of %d", i, len(chain))
		}
		s, err := Merge(chain)
		if err != nil {
			t.Fatalf("revision %d: %v", i, err)
		}
		if s.Title != f.Title || s.Body != f.Body {
			t.Fatalf("revision %d: got %q / %q, want %q / %q", i, s.Title, s.Body, f.Title, f.Body)
		}
		if s.Metadata["is_todo"] != float64(i%2) {
			t.Fatalf("revision %d: metadata %v", i, s.Metadata)
		}
	}
}

func TestLegacyTextPatchesApply(t *testing.T) {
	body := ""
	for i, f := range loadChain(t) {
		var err error
		if body, err = ApplyText(body, f.LegacyBody); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if body != f.Body {
			t.Fatalf("step %d: got %q, want %q", i, body, f.Body)
		}
	}
}

func TestObjectEncodedDiffsAndMovedHunks(t *testing.T) {
	// Older builds encode a diff as {"0": op, "1": text}; a hunk whose
	// recorded position is off applies where its text occurs once.
	got, err := ApplyText("abc hello xyz", `[{"diffs":[{"0":0,"1":"hello"},{"0":1,"1":" world"}],"start1":0,"start2":0,"length1":5,"length2":11}]`)
	if err != nil || got != "abc hello world xyz" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestBrokenPatchesFailClearly(t *testing.T) {
	for name, p := range map[string]string{
		"no match":   `[{"diffs":[[-1,"absent"]],"start1":0,"start2":0,"length1":6,"length2":0}]`,
		"ambiguous":  `[{"diffs":[[-1,"a"]],"start1":9,"start2":9,"length1":1,"length2":0}]`,
		"not json":   `[{`,
		"bad op":     `[{"diffs":[[2,"a"]],"start2":0}]`,
		"bad legacy": "@@ nonsense\n",
	} {
		if _, err := ApplyText("a a", p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Merge([]Revision{{ID: "x", EncryptionApplied: 1}}); err != ErrEncrypted {
		t.Fatalf("encrypted: %v", err)
	}
}
