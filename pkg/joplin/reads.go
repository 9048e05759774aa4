package joplin

import (
	"context"
	"net/url"
)

// Folder is a notebook as the Data API encodes it.
type Folder struct {
	ID          string `json:"id"`
	ParentID    string `json:"parent_id"`
	Title       string `json:"title"`
	CreatedTime int64  `json:"created_time"`
	UpdatedTime int64  `json:"updated_time"`
	DeletedTime int64  `json:"deleted_time"`
}

// Tag is a tag as the Data API encodes it.
type Tag struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Resource is a resource's metadata as the Data API encodes it.
type Resource struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Mime        string `json:"mime"`
	Filename    string `json:"filename"`
	Size        int64  `json:"size"`
	CreatedTime int64  `json:"created_time"`
	UpdatedTime int64  `json:"updated_time"`
}

// The fields the typed reads ask Joplin for (ResourceFields also serves
// the resource lists).
const (
	folderFields   = "id,parent_id,title,created_time,updated_time,deleted_time"
	tagFields      = "id,title"
	ResourceFields = "id,title,mime,filename,size,created_time,updated_time"
)

// Note reads note id (trashed or not) with the given fields; the others
// stay zero. A missing note is a NOT_FOUND domain error, as every read.
func (c *Client) Note(ctx context.Context, id, fields string) (Note, error) {
	var n Note
	err := c.Get(ctx, "/notes/"+url.PathEscape(id), url.Values{"fields": {fields}}, &n)
	return n, err
}

// Folder reads notebook id, trashed or not.
func (c *Client) Folder(ctx context.Context, id string) (Folder, error) {
	var f Folder
	err := c.Get(ctx, "/folders/"+url.PathEscape(id), url.Values{"fields": {folderFields}}, &f)
	return f, err
}

// Tag reads tag id.
func (c *Client) Tag(ctx context.Context, id string) (Tag, error) {
	var t Tag
	err := c.Get(ctx, "/tags/"+url.PathEscape(id), url.Values{"fields": {tagFields}}, &t)
	return t, err
}

// Resource reads the metadata of resource id.
func (c *Client) Resource(ctx context.Context, id string) (Resource, error) {
	var r Resource
	err := c.Get(ctx, "/resources/"+url.PathEscape(id), url.Values{"fields": {ResourceFields}}, &r)
	return r, err
}

// ResourceFile downloads the bytes of resource id.
func (c *Client) ResourceFile(ctx context.Context, id string) ([]byte, error) {
	return c.GetRaw(ctx, "/resources/"+url.PathEscape(id)+"/file")
}
