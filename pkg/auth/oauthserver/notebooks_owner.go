package oauthserver

import (
	"fmt"
	"maps"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
)

// The owner's console changes a grant's notebooks in place: every stored
// code and token of the grant carries them (their session's Extra), and
// the resource server reads them from the access token's record on every
// request, so the change governs the grant's next request, refreshes
// included.

// GrantNotebooks returns the notebooks grant id may read and write.
func (o *Operator) GrantNotebooks(id string) (notebookscope.Scope, error) {
	unlock, err := o.store.lock()
	if err != nil {
		return notebookscope.Scope{}, err
	}
	defer unlock()
	for _, m := range []map[string]tokenRecord{o.store.st.Access, o.store.st.Refresh} {
		for _, r := range m {
			if r.RequestID == id && r.Active {
				return grantNotebooks(&r.Session), nil
			}
		}
	}
	return notebookscope.Scope{}, fmt.Errorf("no live grant %q", id)
}

// SetGrantNotebooks makes sc the notebooks of grant id, names being how
// the owner is shown them. It fails for a grant with no live token.
func (o *Operator) SetGrantNotebooks(id string, sc notebookscope.Scope, names string) error {
	s := o.store
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	found := false
	for _, m := range s.st.tokenMaps() {
		for k, r := range m {
			if r.RequestID != id {
				continue
			}
			extra := maps.Clone(r.Session.Extra)
			if extra == nil {
				extra = map[string]any{}
			}
			extra[extraRead], extra[extraWrite], extra[extraNames] = sc.Read.String(), sc.Write.String(), names
			r.Session.Extra = extra
			m[k] = r
			found = found || r.Active
		}
	}
	if !found {
		return fmt.Errorf("no live grant %q", id)
	}
	return s.commit()
}
