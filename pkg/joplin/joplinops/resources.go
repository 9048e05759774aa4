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

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
)

// Resource is a Joplin resource's metadata, as Joplin encodes it and as the
// resource operations return it.
type Resource struct {
	ID          string `json:"id" schema:"id"`
	Title       string `json:"title" schema:"max=10000"`
	Mime        string `json:"mime" schema:"max=255"`
	Filename    string `json:"filename" schema:"max=10000"`
	Size        int64  `json:"size" schema:"min=-1,max=9007199254740992"`
	CreatedTime int64  `json:"created_time" schema:"min=0,max=9007199254740992"`
	UpdatedTime int64  `json:"updated_time" schema:"min=0,max=9007199254740992"`
}

// loadResource reads one resource's metadata; a missing one is NOT_FOUND.
func (o *Ops) loadResource(ctx context.Context, id string) (Resource, error) {
	r, err := o.c.Resource(ctx, id)
	if err != nil {
		return Resource{}, missing(err, "resource", id)
	}
	return Resource(r), nil
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
	data, err := o.c.ResourceFile(ctx, r.ID)
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
	Limit    int    `json:"limit,omitempty" schema:"min=1,max=100,default=50"`
	Page     int    `json:"page,omitempty" schema:"min=1,max=@max_resource_page"`
	OrderBy  string `json:"order_by,omitempty" schema:"enum=updated_time|created_time|title|size,default=updated_time"`
	OrderDir string `json:"order_dir,omitempty" jsonschema:"Default asc for title, else desc." schema:"enum=asc|desc"`
}

type listResourcesOut struct {
	Resources []Resource `json:"resources" schema:"max=100"`
	Page      int        `json:"page" schema:"min=1,max=@max_resource_page"`
	HasMore   bool       `json:"has_more"`
}

func (o *Ops) listResources() registry.Operation {
	return registry.Define(o.meta("list_resources", "List attachments", "List resources (files attached to notes) with their metadata, paged and sorted.", registry.EffectRead), o.doListResources)
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
		"fields": {joplin.ResourceFields}, "limit": {strconv.Itoa(limit)}, "page": {strconv.Itoa(page)},
		"order_by": {orderBy}, "order_dir": {map[string]string{"asc": "ASC", "desc": "DESC"}[dir]},
	}
	var p struct {
		Items   []Resource `json:"items"`
		HasMore bool       `json:"has_more"`
	}
	if err := o.c.Get(ctx, "/resources", q, &p); err != nil {
		return listResourcesOut{}, err
	}
	res := listResourcesOut{Resources: nonNil(p.Items), Page: page, HasMore: p.HasMore}
	if p.HasMore && !scopeview.Limited(ctx) {
		// Joplin says has_more for any full page; look at the first item
		// after this page to be exact. (Not for a limited caller: its view
		// empties the probe when the next item is hidden, while visible
		// ones may follow; it keeps Joplin's has_more, as every list does.)
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
	ID string `json:"id" schema:"id"`
}

type getResourceIn struct {
	ID           string `json:"id" schema:"id"`
	IncludeNotes bool   `json:"include_notes,omitempty"`
}

type getResourceOut struct {
	Resource
	resourceOCR
	Notes          *[]NoteRef `json:"notes,omitempty" schema:"max=@max_relations"`
	NotesTruncated bool       `json:"notes_truncated,omitempty"`
}

func (o *Ops) getResource() registry.Operation {
	desc := "Read a resource's metadata by id, with the text Joplin extracted from it (OCR) when it has any; include_notes also lists the notes linking to it (scans every note)."
	return registry.Define(o.meta("get_resource", "Read an attachment's details", desc, registry.EffectRead), func(ctx context.Context, in getResourceIn) (getResourceOut, error) {
		r, err := o.loadResource(ctx, in.ID)
		if err != nil {
			return getResourceOut{}, err
		}
		res := getResourceOut{Resource: r}
		if res.resourceOCR, err = o.loadOCR(ctx, in.ID); err != nil {
			return getResourceOut{}, err
		}
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
	})
}

// resourceContent is get_resource_content's result, as contentJSON
// writes it. data_base64 is absent where the transport sends the file as
// an image or audio block of the result instead (MCP).
type resourceContent struct {
	resourceHead
	DataBase64 string `json:"data_base64,omitempty" schema:"max=@max_content_b64,base64"`
}

// resourceHead is what get_resource_content says of the file.
type resourceHead struct {
	ID     string `json:"id" schema:"id"`
	Mime   string `json:"mime" schema:"max=255"`
	Size   int    `json:"size" schema:"min=0,max=@max_resource_bytes"`
	SHA256 string `json:"sha256" schema:"min=64,max=64"`
}

func (o *Ops) getResourceContent() registry.Operation {
	maxBytes := o.limits.MaxResourceBytes
	desc := fmt.Sprintf("Download a resource's content as base64 with its MIME type, size and SHA-256 (over MCP an image or audio file comes as an image or audio block). Over %s: RESOURCE_TOO_LARGE.", sizeText(maxBytes))
	m := o.meta("get_resource_content", "Download an attachment", desc, registry.EffectRead)
	m.Media = true
	return registry.DefineEncoded[resourceIDIn, resourceContent](m,
		func(ctx context.Context, in resourceIDIn) (json.RawMessage, error) {
			r, err := o.loadResource(ctx, in.ID)
			if err != nil {
				return nil, err
			}
			data, err := o.content(ctx, r)
			if err != nil {
				return nil, err
			}
			return contentJSON(r, data)
		})
}

// contentJSON encodes get_resource_content's result with the base64 text
// written straight into one buffer of the final size, so the payload is
// neither copied again nor re-encoded by the executor.
func contentJSON(r Resource, data []byte) (json.RawMessage, error) {
	sum := sha256.Sum256(data)
	head, err := json.Marshal(resourceHead{ID: r.ID, Mime: r.Mime, Size: len(data), SHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		return nil, fmt.Errorf("encode resource content head: %w", err)
	}
	// head ends in }; data_base64 comes last (registry.Operation.Media).
	const field, tail = `,"data_base64":"`, `"}`
	head = head[:len(head)-1]
	out := make([]byte, 0, len(head)+len(field)+base64.StdEncoding.EncodedLen(len(data))+len(tail))
	out = append(append(out, head...), field...)
	out = base64.StdEncoding.AppendEncode(out, data)
	return append(out, tail...), nil
}

type deleteResourceOut struct {
	ID      string `json:"id" schema:"id"`
	Deleted bool   `json:"deleted"`
}

func (o *Ops) deleteResource() registry.Operation {
	desc := "Delete a resource and its file permanently (Joplin has no trash for resources). Links to it are left dangling; find them first with get_resource include_notes."
	return registry.Define(o.meta("delete_resource", "Delete an attachment", desc, registry.EffectDeletePermanent), func(ctx context.Context, in resourceIDIn) (deleteResourceOut, error) {
		if _, err := o.loadResource(ctx, in.ID); err != nil {
			return deleteResourceOut{}, err
		}
		if err := o.c.Write(ctx, "DELETE", "/resources/"+in.ID, nil, nil, nil); err != nil {
			return deleteResourceOut{}, withObjectID(missing(err, "resource", in.ID), in.ID)
		}
		return deleteResourceOut{ID: in.ID, Deleted: true}, nil
	})
}
