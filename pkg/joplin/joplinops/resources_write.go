package joplinops

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// dataSchema is the schema of an uploaded resource's content. Its
// maxLength is a coarse cap at twice the bound, so that content just over
// the bound reaches the handler and gets RESOURCE_TOO_LARGE.

// payload is resource content as it arrives in the arguments: a JSON
// string of standard base64. It is decoded straight from the argument
// bytes, after its decoded size is bounded from its length, so a large
// upload is never also held as a Go string.
type payload struct {
	limit int64 // set before decoding
	set   bool
	data  []byte
}

// UnmarshalJSON decodes the base64 in b, a JSON string.
func (p *payload) UnmarshalJSON(b []byte) error {
	p.set = true
	if len(b) < 2 || b[0] != '"' {
		return invalidData()
	}
	enc := b[1 : len(b)-1]
	if bytes.IndexByte(enc, '\\') >= 0 { // JSON escapes such as \/ or \n
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return invalidData()
		}
		enc = []byte(s)
	}
	n := len(enc) - bytes.Count(enc, []byte("\n")) - bytes.Count(enc, []byte("\r")) // the decoder skips line breaks
	trimmed := bytes.TrimRight(enc, "\r\n")
	pad := min(len(trimmed)-len(bytes.TrimRight(trimmed, "=")), 2)
	if size := int64(n)/4*3 - int64(pad); size > p.limit {
		return tooLarge(size, p.limit)
	}
	data := make([]byte, base64.StdEncoding.DecodedLen(len(enc)))
	k, err := base64.StdEncoding.Strict().Decode(data, enc)
	if err != nil || k == 0 {
		return invalidData()
	}
	p.data = data[:k]
	return nil
}

func invalidData() error {
	return domainerr.New(domainerr.InvalidArgument,
		"data_base64 is not non-empty standard base64 (RFC 4648 alphabet, with padding)").
		WithDetails(map[string]any{"field": "data_base64"})
}

// resourceMatches lists the resources other than self whose normalized
// title is title's and whose content has size bytes and the SHA-256 sum
// returns. Only resources matching on title and size are downloaded and
// hashed, and sum is called only when there is one.
func (o *Ops) resourceMatches(ctx context.Context, title string, size int64, self string, sum func() ([32]byte, error)) ([]match, error) {
	all, err := joplin.ListAll[Resource](ctx, o.c, "/resources", url.Values{"fields": {"id,title,size"}}, o.limits.MaxScan)
	if err != nil {
		return nil, err
	}
	want := NormalizeTitle(title)
	var out []match
	var own *[32]byte
	for _, r := range all {
		if r.ID == self || r.Size != size || NormalizeTitle(r.Title) != want {
			continue
		}
		if own == nil {
			s, err := sum()
			if err != nil {
				return nil, err
			}
			own = &s
		}
		data, err := o.content(ctx, r)
		switch {
		case domainerr.HasCode(err, domainerr.NotFound):
			continue // deleted meanwhile
		case err != nil:
			return nil, err
		case sha256.Sum256(data) == *own:
			out = append(out, match{ID: r.ID})
		}
	}
	return out, nil
}

// sameContent reports whether resource r has the given title and content
// with SHA-256 sum; a failed download counts as not the same.
func (o *Ops) sameContent(ctx context.Context, r Resource, title string, sum [32]byte) bool {
	if r.Title != title {
		return false
	}
	data, err := o.content(ctx, r)
	return err == nil && sha256.Sum256(data) == sum
}

func resourceExists(matches []match) error {
	return alreadyExists(domainerr.ResourceAlreadyExists, "resource", "update_resource", "", matches)
}

type createResourceIn struct {
	Data     payload `json:"data_base64" schema:"desc=@upload,min=4,max=@max_upload_b64,base64"`
	Title    string  `json:"title,omitempty" jsonschema:"Default: the filename." schema:"min=1,max=500"`
	Filename string  `json:"filename,omitempty" jsonschema:"No path; its extension sets the default mime." schema:"min=1,max=255,pattern=file_name"`
	Mime     string  `json:"mime,omitempty" jsonschema:"Default: from filename or content." schema:"max=255,pattern=mime"`
	NoteID   string  `json:"note_id,omitempty" jsonschema:"Append a link to this note's body." schema:"id"`
}

type createResourceOut struct {
	Resource
	SHA256         string `json:"sha256" schema:"min=64,max=64"`
	AttachedToNote string `json:"attached_to_note,omitempty" schema:"id"`
}

func (o *Ops) createResource() registry.Operation {
	desc := "Upload a file as a resource, linked from note_id if given. The same content and title fails with RESOURCE_ALREADY_EXISTS."
	return registry.DefineDecoded(o.meta("create_resource", "Attach a file", desc, registry.EffectCreate), func() createResourceIn { return createResourceIn{Data: payload{limit: o.limits.MaxResourceBytes}} }, o.doCreateResource)
}

func (o *Ops) doCreateResource(ctx context.Context, in createResourceIn) (createResourceOut, error) {
	data := in.Data.data
	mimeType, err := resolveMime(data, in.Mime, in.Filename)
	if err != nil {
		return createResourceOut{}, err
	}
	title, sum := cmp.Or(in.Title, in.Filename), sha256.Sum256(data)

	unlock, err := o.lockCreates(ctx)
	if err != nil {
		return createResourceOut{}, err
	}
	defer unlock()
	if in.NoteID != "" {
		if err := o.liveNote(ctx, in.NoteID); err != nil {
			return createResourceOut{}, err
		}
	}
	matches, err := o.resourceMatches(ctx, title, int64(len(data)), "", func() ([32]byte, error) { return sum, nil })
	if err != nil {
		return createResourceOut{}, err
	}
	if len(matches) > 0 {
		return createResourceOut{}, resourceExists(matches)
	}

	id := joplin.NewID()
	var r Resource
	props := map[string]any{"id": id, "title": title}
	if err := o.c.WriteMultipartFile(ctx, "POST", "/resources", props, uploadName(mimeType, in.Filename), data, &r); err != nil {
		if r, err = confirmCreate(ctx, err, id, func(ctx context.Context) (Resource, error) { return o.loadResource(ctx, id) },
			func(got Resource) bool { return o.sameContent(ctx, got, title, sum) }); err != nil {
			return createResourceOut{}, err
		}
	}
	// Joplin ignores props other than id and title, and maps some types to
	// older aliases: set the filename and fix the mime with a second write.
	meta := map[string]any{}
	if in.Filename != "" {
		meta["filename"] = in.Filename
	}
	if r.Mime != mimeType {
		meta["mime"] = mimeType
	}
	if len(meta) > 0 {
		if err := o.c.Write(ctx, "PUT", "/resources/"+id, nil, meta, &r); err != nil {
			return createResourceOut{}, partialCreate(err, id, "set_metadata", in.NoteID)
		}
	}
	res := createResourceOut{Resource: r, SHA256: hex.EncodeToString(sum[:])}
	if in.NoteID != "" {
		if err := o.attach(ctx, in.NoteID, r); err != nil {
			return createResourceOut{}, partialCreate(err, id, "attach", in.NoteID)
		}
		res.AttachedToNote = in.NoteID
	}
	return res, nil
}

// attach appends a link to resource r to the body of note noteID: an image
// link for images, a plain link otherwise. After a 5xx answer it reads the
// body back to tell an applied write from a refused one.
func (o *Ops) attach(ctx context.Context, noteID string, r Resource) error {
	n, err := o.loadNote(ctx, noteID, "id,body")
	if err != nil {
		return err
	}
	link := "[" + linkText.Replace(cmp.Or(r.Title, r.Filename)) + "](:/" + r.ID + ")"
	if strings.HasPrefix(r.Mime, "image/") {
		link = "!" + link
	}
	sep := "\n\n"
	switch {
	case n.Body == "" || strings.HasSuffix(n.Body, "\n\n"):
		sep = ""
	case strings.HasSuffix(n.Body, "\n"):
		sep = "\n"
	}
	body := n.Body + sep + link
	err = o.c.Write(ctx, "PUT", "/notes/"+noteID, nil, map[string]any{"body": body}, nil)
	ae, answered := joplin.AnsweredServerError(err)
	if !answered {
		return err
	}
	// Joplin has finished with the write: the body it holds now says
	// whether the link was appended.
	now, lerr := o.loadNote(ctx, noteID, "id,body")
	switch {
	case lerr == nil && now.Body == body:
		return nil
	case lerr == nil && now.Body == n.Body:
		return ae.NotApplied()
	}
	return err
}

// linkText escapes a title for use as Markdown link text on one line.
var linkText = strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`, "\r", " ", "\n", " ")

// domainOf returns err's domain error, or a generic JOPLIN_ERROR.
func domainOf(err error) *domainerr.Error {
	if de, ok := domainerr.As(err); ok {
		return de
	}
	return domainerr.New(domainerr.JoplinError, "Joplin failed")
}

// partialCreate reports a create_resource that failed at step
// ("set_metadata" or "attach") after resource id was created. The error is
// non-retryable and says exactly what exists, so the resource is never a
// silent orphan.
func partialCreate(err error, id, step, noteID string) error {
	de := domainOf(err)
	details := map[string]any{"resource_id": id, "created": true, "failed_step": step}
	if noteID != "" {
		details["note_id"] = noteID
	}
	what := "setting its filename and type"
	if step == "attach" {
		what = "appending its link to the note body"
	}
	msg := fmt.Sprintf("resource %s was created, but %s failed (%s)", id, what, de.Message)
	if step == "attach" && de.Code == domainerr.WriteOutcomeUnknown {
		details["attach_outcome_unknown"] = true
		msg += "; the note may or may not link to it: check its body"
	} else {
		details["attached"] = false
		msg += "; no note links to it"
	}
	return domainerr.New(de.Code, "%s. Do not create it again: fix it with update_resource or remove it with delete_resource", msg).
		WithDetails(details)
}

type updateResourceIn struct {
	ID       string  `json:"id" schema:"id"`
	Data     payload `json:"data_base64,omitzero" schema:"desc=@upload,min=4,max=@max_upload_b64,base64"`
	Title    *string `json:"title,omitempty" schema:"min=1,max=500"`
	Filename *string `json:"filename,omitempty" jsonschema:"No path." schema:"min=1,max=255,pattern=file_name"`
	Mime     *string `json:"mime,omitempty" schema:"max=255,pattern=mime"`
}

type updateResourceOut struct {
	Resource
	SHA256 string `json:"sha256,omitempty" schema:"min=64,max=64"`
}

func (o *Ops) updateResource() registry.Operation {
	desc := "Replace a resource's content and/or change its title, filename or mime; links stay valid. Refuses another resource's content and title (RESOURCE_ALREADY_EXISTS)."
	return registry.DefineDecoded(o.meta("update_resource", "Replace an attachment", desc, registry.EffectUpdate), func() updateResourceIn { return updateResourceIn{Data: payload{limit: o.limits.MaxResourceBytes}} }, o.doUpdateResource)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (o *Ops) doUpdateResource(ctx context.Context, in updateResourceIn) (updateResourceOut, error) {
	if !in.Data.set && in.Title == nil && in.Filename == nil && in.Mime == nil {
		return updateResourceOut{}, domainerr.New(domainerr.InvalidArgument, "give data_base64, title, filename or mime")
	}
	data := in.Data.data
	var mimeType string
	if data != nil {
		var err error
		if mimeType, err = resolveMime(data, deref(in.Mime), deref(in.Filename)); err != nil {
			return updateResourceOut{}, err
		}
	}
	unlock, err := o.lockCreates(ctx)
	if err != nil {
		return updateResourceOut{}, err
	}
	defer unlock()
	cur, err := o.loadResource(ctx, in.ID)
	if err != nil {
		return updateResourceOut{}, err
	}
	// The current content, downloaded once when a check needs it.
	var stored []byte
	current := func() ([]byte, error) {
		var err error
		if stored == nil {
			stored, err = o.content(ctx, cur)
		}
		return stored, err
	}
	if data == nil && in.Mime != nil {
		old, err := current()
		if err != nil {
			return updateResourceOut{}, err
		}
		if mimeType, err = resolveMime(old, *in.Mime, ""); err != nil {
			return updateResourceOut{}, err
		}
	}
	if data != nil || in.Title != nil {
		size, content := cur.Size, current
		if data != nil {
			size, content = int64(len(data)), func() ([]byte, error) { return data, nil }
		}
		sum := func() ([32]byte, error) {
			b, err := content()
			return sha256.Sum256(b), err
		}
		matches, err := o.resourceMatches(ctx, cmp.Or(deref(in.Title), cur.Title), size, in.ID, sum)
		if err != nil {
			return updateResourceOut{}, err
		}
		if len(matches) > 0 {
			return updateResourceOut{}, resourceExists(matches)
		}
	}
	return o.writeResourceUpdate(ctx, in, cur, data, mimeType)
}

// writeResourceUpdate sends the checked update: the content (with the
// title) as a multipart PUT, then the other metadata as a JSON PUT.
func (o *Ops) writeResourceUpdate(ctx context.Context, in updateResourceIn, cur Resource, data []byte, mimeType string) (updateResourceOut, error) {
	var res updateResourceOut
	meta := map[string]any{}
	if in.Filename != nil {
		meta["filename"] = *in.Filename
	}
	if data != nil {
		props := map[string]any{}
		if in.Title != nil {
			props["title"] = *in.Title
		}
		var up Resource
		name := uploadName(mimeType, cmp.Or(deref(in.Filename), cur.Filename))
		if err := o.c.WriteMultipartFile(ctx, "PUT", "/resources/"+in.ID, props, name, data, &up); err != nil {
			return updateResourceOut{}, withObjectID(missing(err, "resource", in.ID), in.ID)
		}
		if up.Mime != mimeType {
			meta["mime"] = mimeType
		}
		sum := sha256.Sum256(data)
		res.SHA256 = hex.EncodeToString(sum[:])
	} else {
		if in.Title != nil {
			meta["title"] = *in.Title
		}
		if in.Mime != nil && mimeType != cur.Mime {
			meta["mime"] = mimeType
		}
	}
	if len(meta) > 0 {
		if err := o.c.Write(ctx, "PUT", "/resources/"+in.ID, nil, meta, nil); err != nil {
			if data == nil {
				return updateResourceOut{}, withObjectID(missing(err, "resource", in.ID), in.ID)
			}
			de := domainOf(err)
			return updateResourceOut{}, domainerr.New(de.Code, "the content of resource %s was replaced, but updating its "+
				"filename and type failed (%s); call update_resource again without data_base64 to finish", in.ID, de.Message).
				WithDetails(map[string]any{"resource_id": in.ID, "content_replaced": true, "metadata_updated": false,
					"failed_step": "set_metadata"})
		}
	}
	r, err := o.loadResource(ctx, in.ID)
	if err != nil {
		return updateResourceOut{}, err
	}
	res.Resource = r
	return res, nil
}
