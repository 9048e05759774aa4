package joplinops

import (
	"context"
	"sort"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// TrashItem is one trashed note or notebook.
type TrashItem struct {
	Type        string `json:"type" schema:"enum=note|notebook"`
	ID          string `json:"id" schema:"id"`
	Title       string `json:"title" schema:"max=10000"`
	ParentID    string `json:"parent_id" schema:"max=32"`
	DeletedTime int64  `json:"deleted_time" schema:"min=0,max=9007199254740992"`
}

type listTrashIn struct {
	Limit int `json:"limit,omitempty" schema:"min=1,max=100,default=50"`
	Page  int `json:"page,omitempty" schema:"min=1,max=@max_page"`
}

type listTrashOut struct {
	Items   []TrashItem `json:"items" schema:"max=100"`
	Page    int         `json:"page" schema:"min=1,max=@max_page"`
	HasMore bool        `json:"has_more"`
	Total   int         `json:"total" schema:"min=0,max=2147483648"`
}

func (o *Ops) listTrash() registry.Operation {
	return registry.Define(o.meta("list_trash", "List the trash", "List trashed notes and notebooks, most recently trashed first.", registry.EffectRead), func(ctx context.Context, in listTrashIn) (listTrashOut, error) {
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
		err = o.scanNotes(ctx, "id,parent_id,title,deleted_time", func(n joplin.Note) {
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
	})
}

// trashOut is what trash_note and trash_notebook answer.
type trashOut struct {
	ID             string `json:"id" schema:"id"`
	Trashed        bool   `json:"trashed"`
	AlreadyTrashed bool   `json:"already_trashed"`
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
