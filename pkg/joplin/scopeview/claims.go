package scopeview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/internal/atomicfile"
)

// ClaimsFile is the file in the state directory that keeps claimed tags.
const ClaimsFile = "scope-tag-claims.json"

// KeepClaimsIn makes the view keep the tags scopes claimed in dir (the
// state directory, 0700; the file 0600: it holds tag titles), and reads
// those kept there. A damaged file is an error; the view then starts with
// none (a claimed tag is then hidden again: the safe side).
func (v *View) KeepClaimsIn(dir string) error {
	path := filepath.Join(dir, ClaimsFile)
	claims := map[string]map[string]string{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = nil
	case err != nil:
		return fmt.Errorf("scopeview: read the claimed tags: %w", err)
	case json.Unmarshal(b, &claims) != nil:
		claims = map[string]map[string]string{}
		err = fmt.Errorf("scopeview: %s is damaged; tags claimed before are hidden again", path)
	}
	v.mu.Lock()
	v.claims, v.claimsPath = claims, path
	v.mu.Unlock()
	return err
}

// Claim records that ctx's caller created the tag id, titled title, by
// reusing a tag it could not see (Joplin keeps one tag per title). From
// then on, callers of its scope see that tag as the fresh tag they made:
// visible, titled title, holding only the notes they see. An error means
// the claim could not be kept: the create must fail (it wrote nothing).
func (v *View) Claim(ctx context.Context, id, title string) error {
	sc, limited, err := scopeOf(ctx)
	if err != nil || !limited {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.claims == nil {
		v.claims = map[string]map[string]string{}
	}
	if v.claims[sc.Key()] == nil {
		v.claims[sc.Key()] = map[string]string{}
	}
	v.claims[sc.Key()][id] = title
	if v.claimsPath == "" {
		return nil
	}
	b, err := json.Marshal(v.claims)
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(v.claimsPath), 0o700); err == nil {
			err = atomicfile.Write(v.claimsPath, b, time.Time{})
		}
	}
	if err != nil {
		delete(v.claims[sc.Key()], id)
		return fmt.Errorf("scopeview: keep the claimed tag: %w", err)
	}
	return nil
}

// claimed returns the title sc's callers gave tag id, when they claimed it.
func (v *View) claimed(sc notebookscope.Scope, id string) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	title, ok := v.claims[sc.Key()][id]
	return title, ok
}
