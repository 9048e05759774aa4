package joplinops_test

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

// onlyTeam is the second credential's scope: it reads and writes Team,
// and everything of the leak matrix's world lies outside it.
var onlyTeam = notebookscope.New(notebookscope.Only("Team"), notebookscope.Only("Team"))

// team is what the second credential sees.
type team struct{ nb, note, tag, res, rev string }

func seedTeam(t testing.TB, h *scopedHarness) team {
	t.Helper()
	var tm team
	tm.nb = h.ownerID(t, "create_notebook", map[string]any{"title": "Team"})
	tm.res = h.ownerID(t, "create_resource", map[string]any{"data_base64": base64.StdEncoding.EncodeToString([]byte("team content")), "filename": "team.txt"})
	tm.note = h.ownerID(t, "create_note", map[string]any{"notebook_id": tm.nb, "title": "Team roster", "body": "lemon team [r](:/" + tm.res + ")"})
	tm.tag = h.ownerID(t, "create_tag", map[string]any{"title": "team-tag"})
	h.owner(t, "tag_note", map[string]any{"note_id": tm.note, "tag_id": tm.tag}, nil)
	tm.rev = plantRevision(t, h, tm.note)
	return tm
}

// everyID lists the id of every object Joplin holds, as notebridge itself
// reads them.
func everyID(t testing.TB, h *scopedHarness) []string {
	t.Helper()
	var all []string
	for _, path := range []string{"/notes", "/folders", "/tags", "/resources", "/revisions"} {
		items, err := joplin.ListAll[struct{ ID string }](own, h.c, path, url.Values{"fields": {"id"}, "include_deleted": {"1"}}, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			all = append(all, it.ID)
		}
	}
	return all
}

// outside is a world whose secrets are every id but visible, and titles.
func outside(w world, all, visible, titles []string) world {
	out := world{ids: w.ids}
	for _, id := range all {
		if !slices.Contains(visible, id) {
			out.secrets = append(out.secrets, id)
		}
	}
	out.secrets = append(out.secrets, titles...)
	return out
}

// checkReads runs every read of the leak matrix on every surface as a
// caller limited to sc: no answer may carry a secret of w it did not name.
func checkReads(t *testing.T, label string, h *scopedHarness, sc notebookscope.Scope, w world) {
	t.Helper()
	for _, op := range joplinops.Operations(nil, joplinops.DefaultLimits) {
		if op.Effect != "read" {
			continue
		}
		for i, v := range leakMatrix[op.Name] {
			for _, who := range h.callers(t, sc) {
				if !op.ExposedOn(who.t) {
					continue
				}
				args, _ := json.Marshal(w.expand(v))
				res, derr := who.call(op.Name, mustMap(args))
				answer := []byte(res)
				if derr != nil {
					answer, _ = json.Marshal(derr)
				}
				if l := w.leaks(args, answer); len(l) > 0 {
					t.Errorf("%s: %s #%d over %s leaks %q: %s", label, op.Name, i, who.name, l, answer)
				}
			}
		}
	}
}

// TestLeakMatrixTwoCredentialsAcrossARestart grows the leak matrix (issue
// 31): 150 objects of every kind that neither credential may see are made
// ahead of the visible ones; a credential limited to Work reads the whole
// matrix, the service restarts, a second credential limited to Team (for
// which all of Work lies outside) is its first caller, then the first
// again; then objects are renamed, inside and outside, and both read the
// matrix once more. Every surface, every read: nothing outside leaks.
func TestLeakMatrixTwoCredentialsAcrossARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds a large Joplin")
	}
	_, url, tf := joplinfake.Serve(t, token)
	state := t.TempDir()
	h := newScopedHarnessWith(t, url, tf, joplinindex.MeaningConfig{}, state)
	s := &hiddenSeeder{h: h, rnd: rand.New(rand.NewPCG(31, 150))}
	s.seedAll(t, map[string]int{"folders": 150, "notes": 150, "tags": 150, "resources": 150, "revisions": 150})
	w := seedWorld(t, h)
	tm := seedTeam(t, h)
	all := everyID(t, h)
	titles := []string{"hidden note", "hidden tag"}
	workVisible := []string{w.ids["$work"], w.ids["$inbox"], w.ids["$in"], w.ids["$inboxNote"], w.ids["$inRes"], w.ids["$sharedTag"], w.ids["$inRev"], w.ids["$out"]}
	asWork := outside(w, all, workVisible, append(slices.Clone(w.secrets), append(titles, "Team roster", "team content", "team-tag")...))
	asTeam := outside(w, all, []string{tm.nb, tm.note, tm.tag, tm.res, tm.rev},
		append(slices.Clone(w.secrets), append(titles, "Project plan", "Inbox item", "plan content", "lemon plan", "lemon inbox")...))

	h.buildIndex(t)
	checkReads(t, "Work before the restart", h, scopeOfWorld, asWork)

	h = newScopedHarnessWith(t, url, tf, joplinindex.MeaningConfig{}, state) // a restart
	checkReads(t, "Team, first caller after the restart", h, onlyTeam, asTeam)
	h.buildIndex(t)
	checkReads(t, "Work after the restart", h, scopeOfWorld, asWork)

	// Renames: outside by the owner, inside by each credential.
	h.owner(t, "update_notebook", map[string]any{"id": w.ids["$private"], "title": "Renamed journal"}, nil)
	h.owner(t, "update_tag", map[string]any{"id": w.ids["$secretTag"], "title": "renamed-secret"}, nil)
	h.owner(t, "update_note", map[string]any{"id": w.ids["$out"], "title": "Renamed diagnosis"}, nil)
	work, teamCaller := h.callers(t, scopeOfWorld)[2], h.callers(t, onlyTeam)[3]
	if _, derr := work.call("update_note", map[string]any{"id": w.ids["$inboxNote"], "title": "Inbox renamed"}); derr != nil {
		t.Fatal(derr)
	}
	if _, derr := teamCaller.call("update_note", map[string]any{"id": tm.note, "title": "Roster renamed"}); derr != nil {
		t.Fatal(derr)
	}
	if _, derr := teamCaller.call("create_notebook", map[string]any{"title": "Team sub", "parent_id": tm.nb}); derr != nil {
		t.Fatal(derr)
	}
	renamed := []string{"Renamed journal", "renamed-secret", "Renamed diagnosis"}
	asWork.secrets = append(asWork.secrets, append(renamed, "Roster renamed", "Team sub")...)
	asTeam.secrets = append(asTeam.secrets, append(renamed, "Inbox renamed")...)
	checkReads(t, "Work after the renames", h, scopeOfWorld, asWork)
	checkReads(t, "Team after the renames", h, onlyTeam, asTeam)
	if t.Failed() {
		return
	}
	// The matrix saw the renamed objects: the Team caller lists its own.
	res, derr := teamCaller.call("list_notes", map[string]any{"notebook_id": tm.nb})
	if derr != nil || !strings.Contains(string(res), "Roster renamed") {
		t.Fatalf("Team's own renamed note: %s %v", res, derr)
	}
}
