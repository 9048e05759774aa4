package oauthserver

import (
	"net/http"

	"github.com/ory/fosite"

	"github.com/notebridge/notebridge/pkg/core/notebookscope"
)

// NotebookChooser is a Consent that also asks the owner which notebooks
// the grant may read and write. With a Consent that does not ask, a grant
// covers every notebook.
type NotebookChooser interface {
	// Chosen returns what the owner chose on the form r approved, and the
	// notebooks' names as the owner saw them (for `notebridge oauth
	// grants`).
	Chosen(r *http.Request) (sc notebookscope.Scope, names string)
}

// The session's Extra keys of a grant's notebooks: selections as
// notebookscope settings ("*", or ids joined by commas; "" for none),
// and the names shown to the operator.
const (
	extraRead  = "notebooks_read"
	extraWrite = "notebooks_write"
	extraNames = "notebook_names"
)

// chosenNotebooks is what the consent step r approved.
func (s *Server) chosenNotebooks(r *http.Request) map[string]any {
	sc, names := notebookscope.Everything(), "all notebooks"
	if nc, ok := s.cfg.Consent.(NotebookChooser); ok {
		sc, names = nc.Chosen(r)
	}
	return map[string]any{extraRead: sc.Read.String(), extraWrite: sc.Write.String(), extraNames: names}
}

// grantNotebooks reads a grant's notebooks from its session. A grant
// stored before notebook scopes existed was approved for every notebook
// and keeps them; a stored value that does not parse grants none.
func grantNotebooks(sess fosite.Session) notebookscope.Scope {
	ds, ok := sess.(*fosite.DefaultSession)
	if !ok || ds == nil {
		return notebookscope.Scope{}
	}
	read, hasRead := ds.Extra[extraRead].(string)
	write, hasWrite := ds.Extra[extraWrite].(string)
	if !hasRead && !hasWrite && ds.Extra[extraNames] == nil {
		return notebookscope.Everything()
	}
	return notebookscope.New(selection(read), selection(write))
}

// selection parses a stored selection; "" and anything unparsable are no
// notebook (ParseSelection refuses an empty setting).
func selection(s string) notebookscope.Selection {
	sel, err := notebookscope.ParseSelection(s)
	if err != nil {
		return notebookscope.Selection{}
	}
	return sel
}

// grantNames is what the operator is shown of a grant's notebooks.
func grantNames(sess fosite.DefaultSession) string {
	if n, ok := sess.Extra[extraNames].(string); ok {
		return n
	}
	return "all notebooks"
}
