package mcpadapter

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/notebridge/notebridge/pkg/core/activity"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// Notes and attachments are also MCP resources: resources/list pages
// through the notes, newest first; resources/read serves joplin://note/{id}
// as Markdown with a small metadata header and joplin://resource/{id} as
// the attachment. Every read is an executor call (list_notes, get_note,
// get_resource_content) on the session's transport, so exposure, scope and
// limits are decided there as for a tool call.

// The resource URI templates.
const (
	NoteURITemplate     = "joplin://note/{id}"
	ResourceURITemplate = "joplin://resource/{id}"
	notePrefix          = "joplin://note/"
	resourcePrefix      = "joplin://resource/"
)

// resourcePage is how many notes one resources/list page holds.
const resourcePage = 50

// servesResources reports whether ex's registry exposes on t what the
// note resources are read with.
func servesResources(ex *executor.Executor, t registry.Transport) bool {
	for _, name := range []string{"list_notes", "get_note", "get_resource_content"} {
		op, ok := ex.Registry().Lookup(name)
		if !ok || !op.ExposedOn(t) {
			return false
		}
	}
	return true
}

// noteResources serves the note resources of one server.
type noteResources struct {
	ex *executor.Executor
	t  registry.Transport
	// pages holds each resources/list answer from the request hook, which
	// can fail the request, to the result hook, which fills the answer.
	pages sync.Map // pageKey → []mcp.Resource + cursor
	// callers holds the caller of each registered session (the principal
	// its registering request carried): who a change is told to.
	callers sync.Map // session id → principal.Principal
}

type listed struct {
	resources []mcp.Resource
	next      string
}

// resourceOptions returns the server options the note resources need; add
// them with addResources once the server exists.
func resourceOptions(r *noteResources) []server.ServerOption {
	hooks := &server.Hooks{}
	hooks.AddOnRequestInitialization(r.beforeRequest)
	hooks.AddAfterListResources(r.afterList)
	hooks.AddBeforeReadResource(r.beforeRead)
	hooks.AddOnRegisterSession(func(ctx context.Context, s server.ClientSession) {
		if who, ok := principal.From(ctx); ok {
			r.callers.Store(s.SessionID(), who)
		}
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) { r.callers.Delete(s.SessionID()) })
	hooks.AddOnError(func(ctx context.Context, id any, method mcp.MCPMethod, _ any, _ error) {
		if method == mcp.MethodResourcesList {
			r.pages.Delete(pageKey(ctx, id)) // the result hook will not run
		}
	})
	return []server.ServerOption{server.WithResourceCapabilities(false, true), server.WithHooks(hooks)}
}

func (r *noteResources) addTemplates(s *server.MCPServer) {
	s.AddResourceTemplate(mcp.NewResourceTemplate(NoteURITemplate, "Joplin note",
		mcp.WithTemplateDescription("A note as Markdown with a metadata header."), mcp.WithTemplateMIMEType("text/markdown")), r.served)
	s.AddResourceTemplate(mcp.NewResourceTemplate(ResourceURITemplate, "Joplin attachment",
		mcp.WithTemplateDescription("A file attached to notes, bounded like get_resource_content.")), r.served)
}

func pageKey(ctx context.Context, id any) string {
	sid := ""
	if s := server.ClientSessionFromContext(ctx); s != nil {
		sid = s.SessionID()
	}
	return fmt.Sprintf("%s\x00%v", sid, id)
}

// beforeRequest lists a resources/list page through the executor; its
// error fails the request.
func (r *noteResources) beforeRequest(ctx context.Context, id any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok {
		return nil
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Cursor string `json:"cursor"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Method != string(mcp.MethodResourcesList) {
		return nil
	}
	page, err := r.list(ctx, m.Params.Cursor)
	if err != nil {
		return err
	}
	r.pages.Store(pageKey(ctx, id), page)
	return nil
}

func (r *noteResources) afterList(ctx context.Context, id any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
	v, ok := r.pages.LoadAndDelete(pageKey(ctx, id))
	if !ok || res == nil {
		return
	}
	page := v.(listed)
	res.Resources, res.NextCursor = page.resources, mcp.Cursor(page.next)
}

// list returns one page of notes, newest first, trashed notes left out.
func (r *noteResources) list(ctx context.Context, cursor string) (listed, error) {
	page := 1
	if cursor != "" {
		// mcp-go reads the cursor as base64 before the list hook runs.
		raw, err := base64.StdEncoding.DecodeString(cursor)
		n, perr := strconv.Atoi(strings.TrimPrefix(string(raw), "page:"))
		if err != nil || perr != nil || n < 1 {
			return listed{}, errors.New("INVALID_ARGUMENT: the cursor is not one resources/list gave")
		}
		page = n
	}
	args, _ := json.Marshal(map[string]any{"limit": resourcePage, "page": page, "order_by": "updated_time", "order_dir": "desc"})
	out, derr := r.call(ctx, "list_notes", args)
	if derr != nil {
		return listed{}, callError(derr)
	}
	var res struct {
		Notes []struct {
			ID          string `json:"id"`
			Title       string `json:"title"`
			UpdatedTime int64  `json:"updated_time"`
		} `json:"notes"`
		HasMore bool `json:"has_more"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return listed{}, fmt.Errorf("decode list_notes: %w", err)
	}
	l := listed{resources: make([]mcp.Resource, 0, len(res.Notes))}
	for _, n := range res.Notes {
		rs := mcp.NewResource(notePrefix+n.ID, n.Title, mcp.WithMIMEType("text/markdown"))
		rs.Annotations = &mcp.Annotations{LastModified: time.UnixMilli(n.UpdatedTime).UTC().Format(time.RFC3339)}
		l.resources = append(l.resources, rs)
	}
	if res.HasMore {
		l.next = base64.StdEncoding.EncodeToString([]byte("page:" + strconv.Itoa(page+1)))
	}
	return l, nil
}

// call runs operation name for the caller the transport put in ctx; with
// none the executor refuses, as for a tool call.
func (r *noteResources) call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, *domainerr.Error) {
	who, _ := principal.From(ctx)
	return r.ex.Call(activity.WithSurface(ctx, activity.SurfaceResources), who, r.t, name, args)
}

// callError renders a domain error for a JSON-RPC error message: its code
// first, as the tool results carry it.
func callError(e *domainerr.Error) error {
	return fmt.Errorf("%s: %s", e.Code, e.Message)
}

func notFoundURI() error {
	return fmt.Errorf("%s: %w", domainerr.NotFound, server.ErrResourceNotFound)
}

// readObject reads the object uri names (prefix, then its id) with
// operation name, decoding its result into out. A URI that names nothing,
// or an id the operation refuses or cannot find, is not found.
func (r *noteResources) readObject(ctx context.Context, uri, prefix, name string, args map[string]any, out any) error {
	id, ok := strings.CutPrefix(uri, prefix)
	if !ok || id == "" {
		return notFoundURI()
	}
	args["id"] = id
	raw, _ := json.Marshal(args)
	res, derr := r.call(ctx, name, raw)
	if derr != nil {
		if derr.Code == domainerr.NotFound || derr.Code == domainerr.InvalidArgument {
			return notFoundURI()
		}
		return callError(derr)
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("decode %s: %w", name, err)
	}
	return nil
}

// readKey names the outcome of a read in the request's _meta, from
// beforeRead to served. Only a Go value set by beforeRead is taken: what a
// client sends under this key is JSON, never a *readOutcome.
const readKey = "notebridge/read"

// missingURI is the prefix beforeRead gives the URI of a read that found
// nothing, so that no template matches it.
const missingURI = "NOT_FOUND:"

type readOutcome struct {
	contents []mcp.ResourceContents
	err      error
}

// beforeRead reads the resource before mcp-go picks its handler, since a
// handler's error is always answered as an internal error (-32603). A read
// that finds nothing leaves a URI no template matches, which mcp-go answers
// as resource not found with the code of the session's protocol revision
// (-32002; -32602 from 2026-07-28); any other outcome goes to served.
func (r *noteResources) beforeRead(ctx context.Context, _ any, req *mcp.ReadResourceRequest) {
	contents, err := r.read(ctx, req.Params.URI)
	if errors.Is(err, server.ErrResourceNotFound) {
		req.Params.URI = missingURI + req.Params.URI
		return
	}
	if req.Params.Meta == nil {
		req.Params.Meta = &mcp.Meta{}
	}
	if req.Params.Meta.AdditionalFields == nil {
		req.Params.Meta.AdditionalFields = map[string]any{}
	}
	req.Params.Meta.AdditionalFields[readKey] = &readOutcome{contents, err}
}

// served answers a read with beforeRead's outcome, or reads it when the
// hook did not run.
func (r *noteResources) served(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	if req.Params.Meta != nil {
		if o, ok := req.Params.Meta.AdditionalFields[readKey].(*readOutcome); ok {
			return o.contents, o.err
		}
	}
	return r.read(ctx, req.Params.URI)
}

// read reads the note or attachment uri names.
func (r *noteResources) read(ctx context.Context, uri string) ([]mcp.ResourceContents, error) {
	switch {
	case strings.HasPrefix(uri, notePrefix):
		return r.readNote(ctx, uri)
	case strings.HasPrefix(uri, resourcePrefix):
		return r.readAttachment(ctx, uri)
	}
	return nil, notFoundURI()
}

func (r *noteResources) readNote(ctx context.Context, uri string) ([]mcp.ResourceContents, error) {
	var n struct {
		ID          string `json:"id"`
		Title       string `json:"title"`
		NotebookID  string `json:"notebook_id"`
		Body        string `json:"body"`
		UpdatedTime int64  `json:"updated_time"`
		Trashed     bool   `json:"trashed"`
	}
	if err := r.readObject(ctx, uri, notePrefix, "get_note", map[string]any{"view": "full"}, &n); err != nil {
		return nil, err
	}
	if n.Trashed {
		return nil, notFoundURI()
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/markdown", Text: noteMarkdown(n.ID, n.Title, n.NotebookID, n.UpdatedTime, n.Body)}}, nil
}

// noteMarkdown is a note as a resource: a front-matter header, then the
// body.
func noteMarkdown(id, title, notebook string, updated int64, body string) string {
	t, _ := json.Marshal(title) // a JSON string is a valid YAML scalar
	return fmt.Sprintf("---\ntitle: %s\nid: %s\nnotebook_id: %s\nupdated: %s\nurl: joplin://x-callback-url/openNote?id=%s\n---\n\n%s",
		t, id, notebook, time.UnixMilli(updated).UTC().Format(time.RFC3339), id, body)
}

func (r *noteResources) readAttachment(ctx context.Context, uri string) ([]mcp.ResourceContents, error) {
	var c struct {
		Mime       string `json:"mime"`
		DataBase64 string `json:"data_base64"`
	}
	if err := r.readObject(ctx, uri, resourcePrefix, "get_resource_content", map[string]any{}, &c); err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.BlobResourceContents{URI: uri, MIMEType: c.Mime, Blob: c.DataBase64}}, nil
}

// NotifyResourcesChanged tells the clients of s that may see a change
// that the note resources changed (notifications/resources/list_changed):
// those whose session's caller sees reports true for. A session registered
// without a caller is told nothing. The bridge calls it when a write it
// made changed a note.
func NotifyResourcesChanged(s *Server, sees func(principal.Principal) bool) {
	if s.notes == nil {
		return
	}
	s.notes.callers.Range(func(id, who any) bool {
		if sees(who.(principal.Principal)) {
			_ = s.mcp.SendNotificationToSpecificClient(id.(string), string(mcp.MethodNotificationResourcesListChanged), nil)
		}
		return true
	})
}
