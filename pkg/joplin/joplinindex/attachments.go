package joplinindex

import (
	"context"
	"net/url"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/searchindex"
)

// Notes are searched with the OCR text Joplin's desktop app extracted from
// the resources they link to. Joplin's /events reports no resource
// changes, so the reconciliation pass compares each linked resource's
// stamp (its update time and OCR status) with the index.

// maxAttachmentText bounds the OCR text indexed per resource.
const maxAttachmentText = 100_000

// maxAttachments bounds the resources indexed per note.
const maxAttachments = 100

const ocrFields = "id,ocr_text,ocr_status,updated_time"

// ocrRow is a resource's OCR fields as the Data API returns them.
type ocrRow struct {
	ID          string `json:"id"`
	OCRText     string `json:"ocr_text"`
	OCRStatus   int64  `json:"ocr_status"`
	UpdatedTime int64  `json:"updated_time"`
}

// stamp changes when the resource or its OCR status does.
func (r ocrRow) stamp() int64 { return r.UpdatedTime*4 + r.OCRStatus%4 }

func (r ocrRow) attachment() searchindex.Attachment {
	text := r.OCRText
	if len(text) > maxAttachmentText {
		text = text[:maxAttachmentText]
	}
	return searchindex.Attachment{ID: r.ID, UpdatedTime: r.stamp(), Text: text}
}

// lookupFunc returns the OCR fields of resource id; ok is false when id
// is no resource (a link to a note, or a deleted resource).
type lookupFunc func(ctx context.Context, id string) (r ocrRow, ok bool, err error)

// fetchOCR reads one resource's OCR fields from Joplin.
func (x *Indexer) fetchOCR(ctx context.Context, id string) (ocrRow, bool, error) {
	var r ocrRow
	err := x.c.Get(ctx, "/resources/"+id, url.Values{"fields": {ocrFields}}, &r)
	if domainerr.HasCode(err, domainerr.NotFound) {
		return ocrRow{}, false, nil
	}
	return r, err == nil, err
}

// allOCR lists every resource's OCR fields, for a build.
func (x *Indexer) allOCR(ctx context.Context) (lookupFunc, error) {
	rows, err := joplin.ListAll[ocrRow](ctx, x.c, "/resources", url.Values{"fields": {ocrFields}}, x.cfg.MaxNotes)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]ocrRow, len(rows))
	for _, r := range rows {
		r.OCRText = r.attachment().Text
		byID[r.ID] = r
	}
	return func(_ context.Context, id string) (ocrRow, bool, error) {
		r, ok := byID[id]
		return r, ok, nil
	}, nil
}

// attach fills n's attachments from the resources its body links to.
func attach(ctx context.Context, n *searchindex.Note, lookup lookupFunc) error {
	n.Attachments = nil
	for _, id := range joplin.LinkedIDs(n.Body) {
		if len(n.Attachments) == maxAttachments {
			break
		}
		r, ok, err := lookup(ctx, id)
		if err != nil {
			return err
		}
		if ok {
			n.Attachments = append(n.Attachments, r.attachment())
		}
	}
	return nil
}

// staleAttachments returns the indexed notes linking to a resource whose
// stamp changed since they were indexed.
func (x *Indexer) staleAttachments(ctx context.Context, ix *searchindex.Index) ([]string, error) {
	have, err := ix.AttachmentStamps(ctx)
	if err != nil || len(have) == 0 {
		return nil, err
	}
	rows, err := joplin.ListAll[ocrRow](ctx, x.c, "/resources", url.Values{"fields": {"id,ocr_status,updated_time"}}, x.cfg.MaxNotes)
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, r := range rows {
		if s, ok := have[r.ID]; ok && s != r.stamp() {
			ids, err := ix.NotesLinking(ctx, r.ID)
			if err != nil {
				return nil, err
			}
			stale = append(stale, ids...)
		}
	}
	return stale, nil
}

// resourceSaved re-indexes the notes linking to a resource the bridge
// changed.
func (x *Indexer) resourceSaved(ctx context.Context, id string) {
	ix := x.hookIndex()
	if ix == nil || id == "" {
		return
	}
	ids, err := ix.NotesLinking(ctx, id)
	if err == nil && len(ids) > 0 {
		err = x.refreshNotes(ctx, ix, ids)
	}
	x.logHook("attachments", err)
}
