package notebookscope

import (
	"errors"
	"slices"
	"testing"
)

func TestParseSelection(t *testing.T) {
	for in, want := range map[string]string{"*": "*", "all": "*", " Work/Clients , Home ,Work/Clients": "Work/Clients,Home",
		"0123456789abcdef0123456789abcdef": "0123456789abcdef0123456789abcdef"} {
		got, err := ParseSelection(in)
		if err != nil || got.String() != want {
			t.Errorf("ParseSelection(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", " , ", "Work//Clients", "/Work", "Work,*"} {
		if _, err := ParseSelection(bad); !errors.Is(err, ErrBadSetting) {
			t.Errorf("ParseSelection(%q): %v, want ErrBadSetting", bad, err)
		}
	}
}

// TestResolve: ids and paths name notebooks with everything below them;
// a name matching nothing covers nothing; a cycle does not loop; the zero
// Selection covers nothing.
func TestResolve(t *testing.T) {
	tree := NewTree([]Folder{
		{ID: "w", Title: "Work"}, {ID: "c", ParentID: "w", Title: "Clients"}, {ID: "a", ParentID: "c", Title: "Acme"},
		{ID: "h", Title: "Home"}, {ID: "w2", Title: "Work"}, {ID: "x", ParentID: "y", Title: "X"}, {ID: "y", ParentID: "x", Title: "Y"},
		{ID: "s", ParentID: "w", Title: "a/b"},
	})
	for _, c := range []struct {
		sel  Selection
		want []string
	}{
		{Only("Work/Clients"), []string{"a", "c"}},
		{Only("Work"), []string{"a", "c", "s", "w", "w2"}},
		{Only("c", "Home"), []string{"a", "c", "h"}},
		{Only("Nowhere", "Work/a/b"), []string{}},
		{Only("s"), []string{"s"}},
		{Only("x"), []string{"x", "y"}},
		{Selection{}, []string{}},
	} {
		if got := tree.Resolve(c.sel).IDs(); !slices.Equal(got, c.want) {
			t.Errorf("Resolve(%v) = %v, want %v", c.sel, got, c.want)
		}
	}
	if !tree.Resolve(All()).Has("anything") {
		t.Error("All does not cover every notebook")
	}
	if got := tree.Paths(tree.Resolve(Only("c", "h"))); !slices.Equal(got, []string{"Home", "Work/Clients"}) {
		t.Errorf("Paths = %v", got)
	}
}
