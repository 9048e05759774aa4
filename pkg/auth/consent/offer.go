package consent

import (
	"crypto/sha256"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// offer is what one consent page offered of the notebook choice: whether
// it asked at all, whether it had a "may change" column, whether the tree
// could be listed (if not, only "All notebooks" was shown), and the
// notebooks it listed. A form is accepted only with boxes its page showed:
// the page's nonce carries the digest of its offer, and the approval is
// checked against the offer rebuilt then, which must have the same digest.
type offer struct {
	ask, canWrite, unavailable bool
	ids                        map[string]bool
}

// offerDigest identifies an offer, so a nonce carries 32 bytes however
// large the tree.
type offerDigest [sha256.Size]byte

// offerOf is the offer of a form's data.
func offerOf(d *formData) offer {
	o := offer{ask: d.AskNotebooks, canWrite: d.CanWrite, unavailable: d.NotebooksUnavailable, ids: map[string]bool{}}
	var walk func([]notebookNode)
	walk = func(ns []notebookNode) {
		for _, n := range ns {
			o.ids[n.ID] = true
			walk(n.Children)
		}
	}
	walk(d.Notebooks)
	return o
}

func (o offer) digest() offerDigest {
	ids := make([]string, 0, len(o.ids))
	for id := range o.ids {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	flags := strconv.FormatBool(o.ask) + "," + strconv.FormatBool(o.canWrite) + "," + strconv.FormatBool(o.unavailable)
	return sha256.Sum256([]byte(flags + "\n" + strings.Join(ids, "\n")))
}

// Refusals of a notebook choice the page did not offer.
const (
	notOffered      = "The notebook choice names a notebook this page did not offer. Reload the page and choose again."
	writeNotOffered = "This application did not ask to change notes: no notebook can be shared with it to change. Reload the page and choose again."
	offerChanged    = "Your notebooks changed since this page was loaded. Check your choice again."
	chooseNotebooks = "Choose the notebooks to share, or all notebooks."
)

// check returns what is wrong with form's notebook choice under o ("" when
// nothing is): every box posted must be one the page showed.
func (o offer) check(form url.Values) string {
	all, read, write := form[fieldAll], form[fieldRead], form[fieldWrite]
	if len(all) > 1 || len(all) == 1 && all[0] != "1" {
		return "The notebook choice is malformed. Reload the page."
	}
	if len(write) > 0 && !o.canWrite {
		return writeNotOffered
	}
	for _, id := range append(slices.Clone(read), write...) {
		if !o.ids[id] {
			return notOffered
		}
	}
	if len(all) == 0 && len(read) == 0 {
		return chooseNotebooks
	}
	return ""
}
