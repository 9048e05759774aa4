package joplinops

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/notebridge/notebridge/pkg/domainerr"
	"github.com/notebridge/notebridge/pkg/registry"
	"github.com/notebridge/notebridge/pkg/schema"
)

// Resource is a Joplin resource's metadata, as Joplin encodes it and as the
// resource operations return it.
type Resource struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Mime        string `json:"mime"`
	Filename    string `json:"filename"`
	Size        int64  `json:"size"`
	CreatedTime int64  `json:"created_time"`
	UpdatedTime int64  `json:"updated_time"`
}

const resourceFields = "id,title,mime,filename,size,created_time,updated_time"

// resourceProps are the schema properties of Resource.
func resourceProps() map[string]any {
	return map[string]any{
		"id":           schema.ID(""),
		"title":        schema.String("", 0, 10_000),
		"mime":         schema.String("MIME type.", 0, 255),
		"filename":     schema.String("File name; may be empty.", 0, 10_000),
		"size":         schema.Integer("Size in bytes; -1 when Joplin does not know it.", -1, 1<<53),
		"created_time": timeSchema,
		"updated_time": timeSchema,
	}
}

var resourceRequired = []string{"id", "title", "mime", "filename", "size", "created_time", "updated_time"}

// resourceSchema is the Resource schema plus extra properties, of which
// those named in required are required.
func resourceSchema(extra map[string]any, required ...string) schema.S {
	props := resourceProps()
	for k, v := range extra {
		props[k] = v
	}
	return schema.Object("A resource (a file attached to notes).", props, append(append([]string(nil), resourceRequired...), required...)...)
}

// loadResource reads one resource's metadata; a missing one is NOT_FOUND
// with details.missing "resource".
func (o *Ops) loadResource(ctx context.Context, id string) (Resource, error) {
	var r Resource
	if err := o.c.Get(ctx, "/resources/"+id, url.Values{"fields": {resourceFields}}, &r); err != nil {
		return Resource{}, missing(err, "resource", id)
	}
	return r, nil
}

// tooLarge is the RESOURCE_TOO_LARGE error for content of size bytes.
func tooLarge(size, limit int64) *domainerr.Error {
	return domainerr.New(domainerr.ResourceTooLarge, "the resource content is %d bytes; the limit is %d bytes", size, limit).
		WithDetails(map[string]any{"size": size, "max_bytes": limit})
}

// content downloads r's bytes, refusing before the download when its
// recorded size exceeds the limit, and after it when the actual size does.
func (o *Ops) content(ctx context.Context, r Resource) ([]byte, error) {
	if r.Size > o.limits.MaxResourceBytes {
		return nil, tooLarge(r.Size, o.limits.MaxResourceBytes)
	}
	data, err := o.c.GetRaw(ctx, "/resources/"+r.ID+"/file")
	if err != nil {
		return nil, missing(err, "resource", r.ID)
	}
	if int64(len(data)) > o.limits.MaxResourceBytes {
		return nil, tooLarge(int64(len(data)), o.limits.MaxResourceBytes)
	}
	return data, nil
}

// sizeText renders a byte count for descriptions.
func sizeText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// MaxResourcePage bounds list_resources pages.
const MaxResourcePage = 10_000

type listResourcesIn struct {
	Limit    int    `json:"limit"`
	Page     int    `json:"page"`
	OrderBy  string `json:"order_by"`
	OrderDir string `json:"order_dir"`
}

type listResourcesOut struct {
	Resources []Resource `json:"resources"`
	Page      int        `json:"page"`
	HasMore   bool       `json:"has_more"`
}

func (o *Ops) listResources() registry.Operation {
	in := schema.Object("", map[string]any{
		"limit":     schema.Default(schema.Integer("", 1, 100), 50),
		"page":      schema.Integer("", 1, MaxResourcePage),
		"order_by":  schema.Default(schema.Enum("", "updated_time", "created_time", "title", "size"), "updated_time"),
		"order_dir": schema.Enum("Default asc for title, else desc.", "asc", "desc"),
	})
	out := schema.Object("", map[string]any{
		"resources": schema.Array("Resources on this page.", resourceSchema(nil), 100),
		"page":      schema.Integer("This page.", 1, MaxResourcePage),
		"has_more":  schema.Bool("Whether a later page holds more resources."),
	}, "resources", "page", "has_more")
	return op("list_resources", "List resources",
		"List resources (files attached to notes) with their metadata, paged and sorted.",
		registry.EffectRead, in, out, registry.Func(o.doListResources))
}

func (o *Ops) doListResources(ctx context.Context, in listResourcesIn) (listResourcesOut, error) {
	limit, page, orderBy := cmp.Or(in.Limit, 50), cmp.Or(in.Page, 1), cmp.Or(in.OrderBy, "updated_time")
	dir := in.OrderDir
	if dir == "" {
		dir = "desc"
		if orderBy == "title" {
			dir = "asc"
		}
	}
	q := url.Values{
		"fields": {resourceFields}, "limit": {strconv.Itoa(limit)}, "page": {strconv.Itoa(page)},
		"order_by": {orderBy}, "order_dir": {map[string]string{"asc": "ASC", "desc": "DESC"}[dir]},
	}
	var p struct {
		Items   []Resource `json:"items"`
		HasMore bool       `json:"has_more"`
	}
	if err := o.c.Get(ctx, "/resources", q, &p); err != nil {
		return listResourcesOut{}, err
	}
	res := listResourcesOut{Resources: nonNil(p.Items), Page: page}
	if p.HasMore {
		// Joplin says has_more for any full page; look at the first item
		// after this page to be exact.
		next := url.Values{"fields": {"id"}, "limit": {"1"}, "page": {strconv.Itoa(page*limit + 1)},
			"order_by": q["order_by"], "order_dir": q["order_dir"]}
		var probe struct {
			Items []struct{} `json:"items"`
		}
		if err := o.c.Get(ctx, "/resources", next, &probe); err != nil {
			return listResourcesOut{}, err
		}
		res.HasMore = len(probe.Items) > 0
	}
	return res, nil
}

type resourceIDIn struct {
	ID string `json:"id"`
}

type getResourceIn struct {
	ID           string `json:"id"`
	IncludeNotes bool   `json:"include_notes"`
}

type getResourceOut struct {
	Resource
	Notes          *[]NoteRef `json:"notes,omitempty"`
	NotesTruncated bool       `json:"notes_truncated,omitempty"`
}

func (o *Ops) getResource() registry.Operation {
	in := schema.Object("", map[string]any{
		"id":            schema.ID(""),
		"include_notes": schema.Bool(""),
	}, "id")
	out := resourceSchema(map[string]any{
		"notes":           schema.Array("Notes linking to the resource, trashed ones flagged (include_notes).", noteRefSchema(), MaxRelations),
		"notes_truncated": schema.Bool("Set when notes was cut at its bound."),
	})
	desc := "Read a resource's metadata by id; include_notes also lists the notes linking to it (scans every note)."
	return op("get_resource", "Get resource", desc, registry.EffectRead, in, out,
		registry.Func(func(ctx context.Context, in getResourceIn) (getResourceOut, error) {
			r, err := o.loadResource(ctx, in.ID)
			if err != nil {
				return getResourceOut{}, err
			}
			res := getResourceOut{Resource: r}
			if !in.IncludeNotes {
				return res, nil
			}
			notes, err := o.notesLinkingTo(ctx, in.ID)
			if err != nil {
				return getResourceOut{}, err
			}
			if len(notes) > MaxRelations {
				notes, res.NotesTruncated = notes[:MaxRelations], true
			}
			res.Notes = &notes
			return res, nil
		}))
}

func (o *Ops) getResourceContent() registry.Operation {
	maxBytes := o.limits.MaxResourceBytes
	out := schema.Object("", map[string]any{
		"id":          schema.ID(""),
		"mime":        schema.String("MIME type.", 0, 255),
		"size":        schema.Integer("Size in bytes.", 0, maxBytes),
		"sha256":      schema.String("SHA-256 of the content, lowercase hex.", 64, 64),
		"data_base64": schema.S{"type": "string", "maxLength": base64.StdEncoding.EncodedLen(int(maxBytes)), "contentEncoding": "base64", "description": "The content, standard padded base64."},
	}, "id", "mime", "size", "sha256", "data_base64")
	desc := fmt.Sprintf("Download a resource's content as base64 with its MIME type, size and SHA-256. Over %s: RESOURCE_TOO_LARGE.", sizeText(maxBytes))
	return op("get_resource_content", "Get resource content", desc, registry.EffectRead,
		schema.Object("", map[string]any{"id": schema.ID("")}, "id"), out,
		registry.Func(func(ctx context.Context, in resourceIDIn) (json.RawMessage, error) {
			r, err := o.loadResource(ctx, in.ID)
			if err != nil {
				return nil, err
			}
			data, err := o.content(ctx, r)
			if err != nil {
				return nil, err
			}
			return contentJSON(r, data)
		}))
}

// contentJSON encodes get_resource_content's result with the base64 text
// written straight into one buffer of the final size, so the payload is
// neither copied again nor re-encoded by the executor.
func contentJSON(r Resource, data []byte) (json.RawMessage, error) {
	sum := sha256.Sum256(data)
	head, err := json.Marshal(struct {
		ID     string `json:"id"`
		Mime   string `json:"mime"`
		Size   int    `json:"size"`
		SHA256 string `json:"sha256"`
	}{r.ID, r.Mime, len(data), hex.EncodeToString(sum[:])})
	if err != nil {
		return nil, fmt.Errorf("encode resource content head: %w", err)
	}
	const key, tail = `,"data_base64":"`, `"}`
	out := make([]byte, 0, len(head)-1+len(key)+base64.StdEncoding.EncodedLen(len(data))+len(tail))
	out = append(append(out, head[:len(head)-1]...), key...)
	out = base64.StdEncoding.AppendEncode(out, data)
	return append(out, tail...), nil
}

type deleteResourceOut struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

func (o *Ops) deleteResource() registry.Operation {
	in := schema.Object("", map[string]any{"id": schema.ID("")}, "id")
	out := schema.Object("", map[string]any{
		"id":      schema.ID(""),
		"deleted": schema.Bool("Always true."),
	}, "id", "deleted")
	desc := "Delete a resource and its file permanently (Joplin has no trash for resources). Links to it are left dangling; find them first with get_resource include_notes."
	return op("delete_resource", "Delete resource", desc, registry.EffectDeletePermanent, in, out,
		registry.Func(func(ctx context.Context, in resourceIDIn) (deleteResourceOut, error) {
			if _, err := o.loadResource(ctx, in.ID); err != nil {
				return deleteResourceOut{}, err
			}
			if err := o.c.Write(ctx, "DELETE", "/resources/"+in.ID, nil, nil, nil); err != nil {
				return deleteResourceOut{}, withObjectID(missing(err, "resource", in.ID), in.ID)
			}
			return deleteResourceOut{ID: in.ID, Deleted: true}, nil
		}))
}
