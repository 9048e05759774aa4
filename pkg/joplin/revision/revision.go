// Package revision reconstructs a note as it was at a Joplin revision.
// Joplin's apps store each revision as diff-match-patch patches of the
// title and body against the revision's parent (parent_id), plus a JSON
// metadata patch; a note's state at a revision is every patch of its
// parent chain applied in order to empty texts (Joplin's
// Revision.mergeDiffs). The format is recorded in deploy/joplin/VERIFIED.md.
package revision

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Revision is one revision as the Data API returns it.
type Revision struct {
	ID                string `json:"id"`
	ParentID          string `json:"parent_id"`
	ItemType          int    `json:"item_type"`
	ItemID            string `json:"item_id"`
	ItemUpdatedTime   int64  `json:"item_updated_time"`
	TitleDiff         string `json:"title_diff"`
	BodyDiff          string `json:"body_diff"`
	MetadataDiff      string `json:"metadata_diff"`
	EncryptionApplied int    `json:"encryption_applied"`
	CreatedTime       int64  `json:"created_time"`
}

// ItemTypeNote is Joplin's item type of notes (BaseModel.TYPE_NOTE).
const ItemTypeNote = 1

// Fields are the revision fields the Data API must be asked for.
const Fields = "id,parent_id,item_type,item_id,item_updated_time,title_diff,body_diff,metadata_diff,encryption_applied,created_time"

// State is a note as a revision recorded it.
type State struct {
	Title string
	Body  string
	// Metadata holds the other properties the revision recorded
	// (is_todo, todo_due, …), as Joplin encodes them.
	Metadata map[string]any
}

// ErrEncrypted reports a revision in the chain that is still encrypted.
var ErrEncrypted = errors.New("a revision in the chain is encrypted")

// Chain returns the revisions target is built from, oldest first, ending
// with target: its parent chain among revs (the revisions of one note).
func Chain(target Revision, revs []Revision) []Revision {
	byID := make(map[string]Revision, len(revs))
	for _, r := range revs {
		byID[r.ID] = r
	}
	out := []Revision{target}
	seen := map[string]bool{target.ID: true}
	for p := target.ParentID; p != "" && !seen[p]; {
		r, ok := byID[p]
		if !ok {
			break
		}
		seen[p] = true
		out = append(out, r)
		p = r.ParentID
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Merge applies the patches of chain (oldest first) to empty texts.
func Merge(chain []Revision) (State, error) {
	s := State{Metadata: map[string]any{}}
	for _, r := range chain {
		if r.EncryptionApplied != 0 {
			return State{}, ErrEncrypted
		}
		var err error
		if s.Title, err = ApplyText(s.Title, r.TitleDiff); err != nil {
			return State{}, fmt.Errorf("revision %s title: %w", r.ID, err)
		}
		if s.Body, err = ApplyText(s.Body, r.BodyDiff); err != nil {
			return State{}, fmt.Errorf("revision %s body: %w", r.ID, err)
		}
		if err := applyObject(s.Metadata, r.MetadataDiff); err != nil {
			return State{}, fmt.Errorf("revision %s metadata: %w", r.ID, err)
		}
	}
	return s, nil
}

// patch is one diff-match-patch patch: positions and lengths count UTF-16
// code units, as in JavaScript.
type patch struct {
	Diffs  []diff `json:"diffs"`
	Start2 int    `json:"start2"`
}

// diff is one [op, text] pair: -1 delete, 0 keep, 1 insert. Newer
// diff-match-patch builds encode it as an array, older ones as an object
// with keys "0" and "1"; both are read.
type diff struct {
	Op   int
	Text string
}

func (d *diff) UnmarshalJSON(b []byte) error {
	var arr []json.RawMessage
	if err := json.Unmarshal(b, &arr); err != nil {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			return errors.New("a diff is neither an array nor an object")
		}
		arr = []json.RawMessage{obj["0"], obj["1"]}
	}
	if len(arr) != 2 || arr[0] == nil || arr[1] == nil {
		return errors.New("a diff needs an operation and a text")
	}
	if err := json.Unmarshal(arr[0], &d.Op); err != nil || d.Op < -1 || d.Op > 1 {
		return errors.New("a diff's operation is not -1, 0 or 1")
	}
	return json.Unmarshal(arr[1], &d.Text)
}

// ApplyText applies a patch in either of Joplin's encodings (JSON, or the
// legacy text format starting "@@") to text. Patches Joplin made against
// exactly this text apply at their recorded positions; a hunk found
// elsewhere applies where its context occurs once.
func ApplyText(text, encoded string) (string, error) {
	var ps []patch
	switch {
	case encoded == "" || encoded == "[]":
		return text, nil
	case strings.HasPrefix(encoded, "@@"):
		var err error
		if ps, err = parseLegacy(encoded); err != nil {
			return "", err
		}
	default:
		if err := json.Unmarshal([]byte(encoded), &ps); err != nil {
			return "", fmt.Errorf("patch is not diff-match-patch JSON: %w", err)
		}
	}
	u := utf16.Encode([]rune(text))
	for i, p := range ps {
		var from, to []uint16
		for _, d := range p.Diffs {
			t := utf16.Encode([]rune(d.Text))
			if d.Op <= 0 {
				from = append(from, t...)
			}
			if d.Op >= 0 {
				to = append(to, t...)
			}
		}
		at := locate(u, from, p.Start2)
		if at < 0 {
			return "", fmt.Errorf("hunk %d does not match the text it patches", i+1)
		}
		u = append(u[:at:at], append(to, u[at+len(from):]...)...)
	}
	return string(utf16.Decode(u)), nil
}

// locate finds from in u: at want when it is there, else its only
// occurrence; -1 when neither.
func locate(u, from []uint16, want int) int {
	if want >= 0 && want+len(from) <= len(u) && equal(u[want:want+len(from)], from) {
		return want
	}
	if len(from) == 0 {
		return -1
	}
	found := -1
	for i := 0; i+len(from) <= len(u); i++ {
		if equal(u[i:i+len(from)], from) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

func equal(a, b []uint16) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// parseLegacy reads diff-match-patch's text format (patch_toText): a
// "@@ -a,b +c,d @@" header per hunk, then lines of " ", "-" or "+" and
// URI-encoded text.
func parseLegacy(s string) ([]patch, error) {
	var out []patch
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "@@ ") {
			start, err := legacyStart2(line)
			if err != nil {
				return nil, err
			}
			out = append(out, patch{Start2: start})
			continue
		}
		if len(out) == 0 {
			return nil, errors.New("legacy patch has text before its first header")
		}
		text, err := url.PathUnescape(line[1:])
		if err != nil {
			return nil, errors.New("legacy patch line is not URI-encoded")
		}
		op := map[byte]int{'-': -1, ' ': 0, '+': 1}
		o, ok := op[line[0]]
		if !ok {
			return nil, errors.New("legacy patch line has an unknown mark")
		}
		last := &out[len(out)-1]
		last.Diffs = append(last.Diffs, diff{Op: o, Text: text})
	}
	return out, nil
}

// legacyStart2 reads the 0-based start of the "+c,d" part of a header.
func legacyStart2(h string) (int, error) {
	f := strings.Fields(h)
	if len(f) != 4 || !strings.HasPrefix(f[2], "+") {
		return 0, errors.New("legacy patch header is malformed")
	}
	c, d, _ := strings.Cut(f[2][1:], ",")
	start, err := strconv.Atoi(c)
	if err != nil {
		return 0, errors.New("legacy patch header is malformed")
	}
	if d == "0" {
		return start, nil
	}
	return start - 1, nil
}

// applyObject applies a metadata patch ({"new": {...}, "deleted": [...]}).
func applyObject(m map[string]any, encoded string) error {
	if encoded == "" {
		return nil
	}
	var p struct {
		New     map[string]any `json:"new"`
		Deleted []string       `json:"deleted"`
	}
	if err := json.Unmarshal([]byte(encoded), &p); err != nil {
		return fmt.Errorf("not a metadata patch: %w", err)
	}
	for k, v := range p.New {
		m[k] = v
	}
	for _, k := range p.Deleted {
		delete(m, k)
	}
	return nil
}
