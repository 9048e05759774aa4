package joplinindex

import (
	"database/sql"
	"os"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestTypeCorruptVectorIsRepaired: a stored vector row of the wrong type
// (a text scale) or size, which SQLite does not see as damage, is handled
// as a damaged file is: the index is kept as .bad (0600), the vectors are
// embedded again, joplin_status says what happened, and the provider is
// not blamed. Before, search by meaning paused for good, blaming it.
func TestTypeCorruptVectorIsRepaired(t *testing.T) {
	for name, damage := range map[string]string{
		"text scale":   `UPDATE embeddings SET scale = 'not a number' WHERE hash IN (SELECT hash FROM embeddings LIMIT 1)`,
		"short vector": `UPDATE embeddings SET vec = x'0102' WHERE hash IN (SELECT hash FROM embeddings LIMIT 1)`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			p := newProvider(t)
			e.seedNotes(t, "one", "guitar", "two", "piano")
			x := e.startMeaning(t, p, "m", nil)
			e.wait(t, "meaning ready")
			x.Close()
			db, err := sql.Open("sqlite", e.path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(damage); err != nil {
				t.Fatal(err)
			}
			db.Close()

			x = e.startMeaning(t, p, "m", nil)
			e.wait(t, "meaning repaired")
			e.wait(t, "meaning ready")
			st := x.Status().Meaning
			if st.State != MeaningReady || st.Done != st.Chunks || st.FailedRequests != 0 || !strings.Contains(st.Repaired, "damaged") {
				t.Errorf("status: %+v", st)
			}
			if fi, err := os.Stat(e.path + ".bad"); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the damaged index is not kept privately: %v %v", fi, err)
			}
		})
	}
}
