package joplinops

import (
	"context"
	"net/url"
	"reflect"
	"sort"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// apiFolder is a notebook as Joplin encodes it.
type apiFolder struct {
	ID          string `json:"id"`
	ParentID    string `json:"parent_id"`
	Title       string `json:"title"`
	DeletedTime int64  `json:"deleted_time"`
}

// NotebookNode is one notebook in the tree list_notebooks returns.
type NotebookNode struct {
	ID       string         `json:"id" schema:"id"`
	Title    string         `json:"title" schema:"max=10000"`
	Children []NotebookNode `json:"children" schema:"max=@max_notebooks"`
}

// MaxNotebooks bounds the notebook tree.
const MaxNotebooks = 10_000

type listNotebooksIn struct{}

type listNotebooksOut struct {
	Notebooks []NotebookNode `json:"notebooks" schema:"max=@max_notebooks"`
	Total     int            `json:"total" schema:"min=0,max=@max_notebooks"`
}

func (o *Ops) listNotebooks() registry.Operation {
	return registry.Define(withDef(o.meta("list_notebooks", "List notebooks as a tree", "List every notebook not in the trash, as a tree sorted by title.", registry.EffectRead), reflect.TypeFor[NotebookNode](), "notebook"), func(ctx context.Context, _ listNotebooksIn) (listNotebooksOut, error) {
		folders, err := joplin.ListAll[apiFolder](ctx, o.c, "/folders", url.Values{
			"fields": {"id,parent_id,title"}, "order_by": {"title"}, "order_dir": {"ASC"},
		}, MaxNotebooks)
		if err != nil {
			return listNotebooksOut{}, err
		}
		return listNotebooksOut{Notebooks: buildTree(folders), Total: len(folders)}, nil
	})
}

// buildTree arranges folders by parent. A folder whose parent is not in the
// list (for example a trashed parent) is shown at the top level, so nothing
// listed is unreachable.
func buildTree(folders []apiFolder) []NotebookNode {
	present := make(map[string]bool, len(folders))
	for _, f := range folders {
		present[f.ID] = true
	}
	children := map[string][]apiFolder{}
	for _, f := range folders {
		parent := f.ParentID
		if !present[parent] {
			parent = ""
		}
		children[parent] = append(children[parent], f)
	}
	var build func(parent string, seen map[string]bool) []NotebookNode
	build = func(parent string, seen map[string]bool) []NotebookNode {
		kids := children[parent]
		sort.SliceStable(kids, func(i, j int) bool {
			a, b := NormalizeTitle(kids[i].Title), NormalizeTitle(kids[j].Title)
			if a != b {
				return a < b
			}
			return kids[i].ID < kids[j].ID
		})
		out := make([]NotebookNode, 0, len(kids))
		for _, k := range kids {
			if seen[k.ID] {
				continue // a parent cycle in corrupt data; never loop
			}
			seen[k.ID] = true
			out = append(out, NotebookNode{ID: k.ID, Title: k.Title, Children: build(k.ID, seen)})
		}
		return out
	}
	return build("", map[string]bool{})
}
