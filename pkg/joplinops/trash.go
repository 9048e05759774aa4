package joplinops

import (
	"context"
	"sort"

	"github.com/notebridge/notebridge/pkg/registry"
	"github.com/notebridge/notebridge/pkg/schema"
)

// TrashItem is one trashed note or notebook.
type TrashItem struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	Title       string `json:"title"`
	ParentID    string `json:"parent_id"`
	DeletedTime int64  `json:"deleted_time"`
}

type listTrashIn struct {
	Limit int `json:"limit"`
	Page  int `json:"page"`
}

type listTrashOut struct {
	Items   []TrashItem `json:"items"`
	Page    int         `json:"page"`
	HasMore bool        `json:"has_more"`
	Total   int         `json:"total"`
}

func (o *Ops) listTrash() registry.Operation {
	in := schema.Object("", map[string]any{
		"limit": schema.Default(schema.Integer("", 1, 100), 50),
		"page":  schema.Integer("", 1, MaxPage),
	})
	item := schema.Object("", map[string]any{
		"type":         schema.Enum("Kind.", "note", "notebook"),
		"id":           schema.ID("Id."),
		"title":        schema.String("", 0, 10_000),
		"parent_id":    schema.String("Notebook holding it; empty at the top level.", 0, 32),
		"deleted_time": timeSchema,
	}, "type", "id", "title", "parent_id", "deleted_time")
	out := schema.Object("", map[string]any{
		"items":    schema.Array("Trashed items, most recently trashed first.", item, 100),
		"page":     schema.Integer("This page.", 1, MaxPage),
		"has_more": schema.Bool("Whether a later page holds more items."),
		"total":    schema.Integer("Number of trashed items.", 0, 1<<31),
	}, "items", "page", "has_more", "total")
	return op("list_trash", "List trash", "List trashed notes and notebooks, most recently trashed first.",
		registry.EffectRead, in, out, registry.Func(func(ctx context.Context, in listTrashIn) (listTrashOut, error) {
			if in.Limit == 0 {
				in.Limit = 50
			}
			if in.Page == 0 {
				in.Page = 1
			}
			folders, err := o.allFolders(ctx)
			if err != nil {
				return listTrashOut{}, err
			}
			var items []TrashItem
			for _, f := range folders {
				if f.DeletedTime > 0 {
					items = append(items, TrashItem{Type: "notebook", ID: f.ID, Title: f.Title, ParentID: f.ParentID, DeletedTime: f.DeletedTime})
				}
			}
			err = o.scanNotes(ctx, "id,parent_id,title,deleted_time", func(n apiNote) {
				if n.DeletedTime > 0 {
					items = append(items, TrashItem{Type: "note", ID: n.ID, Title: n.Title, ParentID: n.ParentID, DeletedTime: n.DeletedTime})
				}
			})
			if err != nil {
				return listTrashOut{}, err
			}
			sort.SliceStable(items, func(i, j int) bool {
				if items[i].DeletedTime != items[j].DeletedTime {
					return items[i].DeletedTime > items[j].DeletedTime
				}
				return items[i].ID < items[j].ID
			})
			start, end := pageBounds(in.Page, in.Limit, len(items))
			return listTrashOut{Items: nonNil(items[start:end]), Page: in.Page, HasMore: end < len(items), Total: len(items)}, nil
		}))
}

// trashOut is what trash_note and trash_notebook answer.
type trashOut struct {
	ID             string `json:"id"`
	Trashed        bool   `json:"trashed"`
	AlreadyTrashed bool   `json:"already_trashed"`
}

func trashOutSchema(kind string) schema.S {
	return schema.Object("", map[string]any{
		"id":              schema.ID(kind + " id."),
		"trashed":         schema.Bool("Always true."),
		"already_trashed": schema.Bool("It was already in the trash; nothing was written."),
	}, "id", "trashed", "already_trashed")
}

// moveToTrash sends DELETE path for an item that is not yet trashed. It
// never adds permanent=1: without it Joplin moves the item (for a notebook,
// its whole tree) to the trash.
func (o *Ops) moveToTrash(ctx context.Context, id, path string, deletedTime int64) (trashOut, error) {
	if deletedTime > 0 {
		return trashOut{ID: id, Trashed: true, AlreadyTrashed: true}, nil
	}
	if err := o.c.Write(ctx, "DELETE", path, nil, nil, nil); err != nil {
		return trashOut{}, withObjectID(err, id)
	}
	return trashOut{ID: id, Trashed: true}, nil
}
