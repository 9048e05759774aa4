package joplinops

import (
	"context"
	"slices"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/receipts"
)

// newTagPrefix marks, in a plan's tag list, a tag the apply creates: the
// rest is the title the change gave.
const newTagPrefix = "new:"

// resolveTag turns a change's tag target into a tag id, once per plan: an
// id must name a tag; a title names the one tag with that normalized title.
// A missing title is, when create, a tag to make (newTagPrefix + title), and
// otherwise a problem. It returns why the target cannot apply, or "".
func (o *Ops) resolveTag(ctx context.Context, target string, create bool, seen map[string]string) (id, msg string, err error) {
	if joplinID.MatchString(target) {
		msg, err := o.checkTarget(ctx, "tag", target, seen)
		return target, msg, err
	}
	key := "tagtitle:" + NormalizeTitle(target)
	found, ok := seen[key]
	if !ok {
		matches, err := o.tagsTitled(ctx, target, "")
		if err != nil {
			return "", "", err
		}
		switch len(matches) {
		case 0:
			found = ""
		case 1:
			found = matches[0].ID
		default:
			found = "several"
		}
		seen[key] = found
	}
	switch {
	case found == "several":
		return "", "several tags have this title; name one by id (list_tags)", nil
	case found != "":
		return found, "", nil
	case create:
		return newTagPrefix + strings.TrimSpace(target), "", nil
	default:
		return "", "no tag has this title; add create: true to make it", nil
	}
}

// createPlannedTags makes the tags a plan marks new (newTagPrefix) and puts
// their ids in the notes' tag lists. The caller holds the create lock and
// has just found no tag with each title.
func (o *Ops) createPlannedTags(ctx context.Context, notes []receipts.Note) error {
	made := map[string]string{}
	for i := range notes {
		tags := notes[i].After.Tags
		for j, t := range tags {
			title, isNew := strings.CutPrefix(t, newTagPrefix)
			if !isNew {
				continue
			}
			id, ok := made[NormalizeTitle(title)]
			if !ok {
				created, err := o.postTag(ctx, title)
				if err != nil {
					return err
				}
				id = created.ID
				made[NormalizeTitle(title)] = id
			}
			tags[j] = id
		}
		slices.Sort(tags)
		notes[i].After.Tags = slices.Compact(tags)
	}
	return nil
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
