package okfbridge

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// maxNotes bounds the notes one export or import reads.
const maxNotes = 50_000

const noteFields = "id,parent_id,title,body,source_url,author,user_created_time,user_updated_time,updated_time"

type folder struct {
	ID       string `json:"id"`
	ParentID string `json:"parent_id"`
	Title    string `json:"title"`
}

// notebookSet is the notebooks an export covers, each with its bundle
// directory ("" for the exported notebook itself).
type notebookSet struct {
	root  folder
	dirs  map[string]string
	order []string
}

// readNotebooks resolves the notebook and, when sub is set, every
// notebook below it. Reads go through the caller's scoped view: a
// notebook the caller may not read is NOT_FOUND.
func (o *Ops) readNotebooks(ctx context.Context, id string, sub bool) (notebookSet, error) {
	var root folder
	if err := o.jop.Get(ctx, "/folders/"+id, url.Values{"fields": {"id,parent_id,title"}}, &root); err != nil {
		return notebookSet{}, fmt.Errorf("read notebook: %w", err)
	}
	set := notebookSet{root: root, dirs: map[string]string{root.ID: ""}, order: []string{root.ID}}
	if !sub {
		return set, nil
	}
	all, err := joplin.ListAll[folder](ctx, o.jop, "/folders", url.Values{"fields": {"id,parent_id,title"}}, maxNotes)
	if err != nil {
		return notebookSet{}, fmt.Errorf("list notebooks: %w", err)
	}
	children := map[string][]folder{}
	for _, f := range all {
		children[f.ParentID] = append(children[f.ParentID], f)
	}
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		kids := children[parent]
		sort.Slice(kids, func(i, j int) bool { return kids[i].ID < kids[j].ID })
		used := map[string]bool{}
		for _, k := range kids {
			if _, seen := set.dirs[k.ID]; seen || depth > 16 {
				continue
			}
			name := segment(k.Title, k.ID)
			if used[strings.ToLower(name)] {
				name += "-" + k.ID[:8]
			}
			used[strings.ToLower(name)] = true
			set.dirs[k.ID] = strings.TrimPrefix(set.dirs[parent]+"/"+name, "/")
			set.order = append(set.order, k.ID)
			walk(k.ID, depth+1)
		}
	}
	walk(root.ID, 0)
	return set, nil
}

// segment makes a notebook title a bundle directory name: letters,
// digits, marks and "-_.~+@ " kept, anything else a "-"; fallback the id.
func segment(title, id string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || strings.ContainsRune("-_~+@ ", r):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), " -")
	if s == "" || len(s) > 120 {
		return id
	}
	return s
}

// readNotes lists the notes of every notebook of set, with their tags.
func (o *Ops) readNotes(ctx context.Context, set notebookSet) ([]note, error) {
	var notes []note
	for _, fid := range set.order {
		err := joplin.EachPage(ctx, o.jop, "/folders/"+fid+"/notes", url.Values{"fields": {noteFields}},
			func(_ int, items []note) error {
				notes = append(notes, items...)
				if len(notes) > maxNotes {
					return domainerr.New(domainerr.ResourceLimit, "the notebooks hold more than %d notes", maxNotes).
						WithDetails(map[string]any{"limit": "max_notes", "value": maxNotes})
				}
				return nil
			})
		if err != nil {
			return nil, fmt.Errorf("list notes: %w", err)
		}
	}
	if err := o.attachTags(ctx, notes); err != nil {
		return nil, err
	}
	return notes, nil
}

type tagRow struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// attachTags fills each note's tag titles: one listing of the tags and
// one of each tag's notes, instead of one request per note.
func (o *Ops) attachTags(ctx context.Context, notes []note) error {
	byID := make(map[string]*note, len(notes))
	for i := range notes {
		byID[notes[i].ID] = &notes[i]
	}
	tags, err := joplin.ListAll[tagRow](ctx, o.jop, "/tags", url.Values{"fields": {"id,title"}}, maxNotes)
	if err != nil {
		return fmt.Errorf("list tags: %w", err)
	}
	for _, t := range tags {
		err := joplin.EachPage(ctx, o.jop, "/tags/"+t.ID+"/notes", url.Values{"fields": {"id"}},
			func(_ int, items []tagRow) error {
				for _, it := range items {
					if n, ok := byID[it.ID]; ok {
						n.Tags = append(n.Tags, t.Title)
					}
				}
				return nil
			})
		if err != nil && !joplin.IsStatus(err, 404) {
			return fmt.Errorf("list notes of a tag: %w", err)
		}
	}
	return nil
}

type resourceRow struct {
	ID            string `json:"id"`
	FileExtension string `json:"file_extension"`
	Size          int64  `json:"size"`
}

// resolveLinks finds what each linked id outside the exported notes is:
// a resource (copied as an asset when it fits), or a note left out (its
// title when the caller may read it). assets gets the copied files.
func (o *Ops) resolveLinks(ctx context.Context, notes []note, targets map[string]target, assets map[string][]byte) error {
	for _, n := range notes {
		for _, id := range joplin.LinkedIDs(n.Body) {
			if _, done := targets[id]; done {
				continue
			}
			t, data, err := o.resolveOne(ctx, id)
			if err != nil {
				return err
			}
			targets[id] = t
			if t.asset != "" {
				assets[t.asset] = data
			}
		}
	}
	return nil
}

func (o *Ops) resolveOne(ctx context.Context, id string) (target, []byte, error) {
	var r resourceRow
	err := o.jop.Get(ctx, "/resources/"+id, url.Values{"fields": {"id,file_extension,size"}}, &r)
	switch {
	case err == nil:
		if r.Size > o.maxFileBytes() {
			return target{}, nil, nil // too large to copy: the :/ link is kept
		}
		data, err := o.jop.GetRaw(ctx, "/resources/"+id+"/file")
		if err != nil {
			return target{}, nil, fmt.Errorf("read resource: %w", err)
		}
		if int64(len(data)) > o.maxFileBytes() {
			return target{}, nil, nil
		}
		return target{asset: "assets/" + id + assetExt(r.FileExtension)}, data, nil
	case !domainerr.HasCode(err, domainerr.NotFound):
		return target{}, nil, fmt.Errorf("read resource: %w", err)
	}
	var n note
	if err := o.jop.Get(ctx, "/notes/"+id, url.Values{"fields": {"id,title"}}, &n); err != nil {
		if domainerr.HasCode(err, domainerr.NotFound) {
			return target{outside: true}, nil, nil
		}
		return target{}, nil, fmt.Errorf("read linked note: %w", err)
	}
	return target{outside: true, title: n.Title}, nil, nil
}

func assetExt(ext string) string {
	for _, r := range ext {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return ""
		}
	}
	if ext == "" || len(ext) > 10 {
		return ""
	}
	return "." + ext
}
