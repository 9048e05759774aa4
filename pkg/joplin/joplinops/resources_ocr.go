package joplinops

import (
	"context"
	"net/url"
	"strings"
)

// Joplin's desktop app extracts text from image and PDF attachments (OCR)
// and stores it on the resource; the CLI runs no OCR. Reads carry the text
// when Joplin has it, bounded like a note body.

// MaxOCRText bounds the OCR text one answer carries.
const MaxOCRText = MaxInlineBody

// ocrStatuses names Joplin's ResourceOcrStatus values by number.
var ocrStatuses = []string{"todo", "processing", "done", "error"}

// resourceOCR is what Joplin extracted from a resource.
type resourceOCR struct {
	OCRStatus    string `json:"ocr_status,omitempty" jsonschema:"Joplin's text extraction: todo, processing, done or error." schema:"enum=todo|processing|done|error"`
	OCRText      string `json:"ocr_text,omitempty" schema:"max=20000"`
	OCRTruncated bool   `json:"ocr_text_truncated,omitempty"`
}

// loadOCR reads a resource's OCR fields; nothing when Joplin has none.
func (o *Ops) loadOCR(ctx context.Context, id string) (resourceOCR, error) {
	var raw struct {
		OCRText   string `json:"ocr_text"`
		OCRStatus int    `json:"ocr_status"`
	}
	if err := o.c.Get(ctx, "/resources/"+id, url.Values{"fields": {"id,ocr_text,ocr_status"}}, &raw); err != nil {
		return resourceOCR{}, missing(err, "resource", id)
	}
	var out resourceOCR
	if raw.OCRStatus > 0 && raw.OCRStatus < len(ocrStatuses) {
		out.OCRStatus = ocrStatuses[raw.OCRStatus]
	}
	out.OCRText, out.OCRTruncated = cutText(raw.OCRText, MaxOCRText)
	return out, nil
}

// cutText returns s, or its first part of at most max bytes cut at a line
// break (else at a rune) and true.
func cutText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := s[:max]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i+1]
	}
	return strings.ToValidUTF8(cut, ""), true
}
