package joplinops

import (
	"context"

	"github.com/notebridge/notebridge/pkg/joplin/scopeview"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
)

// problem is one entry of details.problems: where in the input, and why.
type problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// postTag creates a tag titled title; the caller holds the create lock and
// checked that no tag it can see has the title. For a caller limited to
// some notebooks, a tag it cannot see with that title is reused
// (invisibleTag).
func (o *Ops) postTag(ctx context.Context, title string) (Tag, error) {
	if err := o.mayCreateTag(ctx); err != nil {
		return Tag{}, err
	}
	if reused, ok, err := o.invisibleTag(ctx, title); ok || err != nil {
		return reused, err
	}
	id := joplin.NewID()
	var created Tag
	if err := o.c.Write(ctx, "POST", "/tags", nil, map[string]any{"id": id, "title": title}, &created); err != nil {
		load := func(ctx context.Context) (Tag, error) { return o.loadTag(ctx, id) }
		if created, err = confirmCreate(ctx, err, id, load, func(t Tag) bool {
			return NormalizeTitle(t.Title) == NormalizeTitle(title)
		}); err != nil {
			return Tag{}, o.tagConflict(ctx, err, title, "")
		}
	}
	return created, nil
}

// tagOf returns the id of the tag ref names: tag_id, or the one tag
// titled tag (one request). A title no tag has is NOT_FOUND, or with create
// a new tag (the caller holds the create lock).
func (o *Ops) tagOf(ctx context.Context, ref noteTagRef, create bool) (string, error) {
	bad := func(reason string) error {
		return domainerr.New(domainerr.InvalidArgument, "%s", reason).
			WithDetails(map[string]any{"problems": []problem{{Path: "/tag_id", Reason: reason}}})
	}
	switch {
	case (ref.TagID == "") == (ref.Tag == ""):
		return "", bad("give tag_id or tag (a title), not both")
	case ref.TagID != "":
		return ref.TagID, nil
	case NormalizeTitle(ref.Tag) == "":
		return "", bad("the tag title is blank")
	}
	if create && o.tagSurelyNew(ctx, ref.Tag) {
		return o.ensureTag(ctx, ref.Tag)
	}
	matches, err := o.tagsTitled(ctx, ref.Tag, "")
	if err != nil {
		return "", err
	}
	switch {
	case len(matches) == 1:
		return matches[0].ID, nil
	case len(matches) > 1:
		return "", bad("several tags have this title; give tag_id (list_tags)")
	case !create:
		return "", domainerr.New(domainerr.NotFound, "no tag has this title; pass create: true to make it").
			WithDetails(map[string]any{"missing": "tag"})
	}
	created, err := o.postTag(ctx, ref.Tag)
	return created.ID, err
}

// tagSurelyNew reports whether the search index, for a caller that sees
// the whole Joplin, holds no tag titled title: a create then skips the
// title lookup, Joplin itself refusing a duplicate title (ensureTag), so a
// tag made elsewhere since the index's last check costs two more requests
// and is never duplicated. It is false whenever the index cannot say, and
// for a caller limited to some notebooks (whose lookup also decides what
// it may see).
func (o *Ops) tagSurelyNew(ctx context.Context, title string) bool {
	if o.index == nil || scopeview.Limited(ctx) {
		return false
	}
	tags, ok := o.index.KnownTags(ctx)
	if !ok {
		return false
	}
	want := NormalizeTitle(title)
	for _, t := range tags {
		if NormalizeTitle(t.Title) == want {
			return false
		}
	}
	return true
}

// ensureTag creates a tag titled title, or returns the one tag Joplin says
// already has it; the caller holds the create lock.
func (o *Ops) ensureTag(ctx context.Context, title string) (string, error) {
	created, err := o.postTag(ctx, title)
	if err == nil {
		return created.ID, nil
	}
	if de, ok := domainerr.As(err); ok && de.Code == domainerr.TagAlreadyExists {
		if matches, _ := de.Details["matches"].([]match); len(matches) == 1 {
			return matches[0].ID, nil
		}
	}
	return "", err
}
