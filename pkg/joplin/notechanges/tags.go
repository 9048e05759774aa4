package notechanges

import (
	"context"
	"slices"
	"strings"

	"github.com/notebridge/notebridge/pkg/joplin/receipts"
)

// newTagPrefix marks, in a plan's tag list, a tag the apply creates: the
// rest is the title the change gave.
const newTagPrefix = "new:"

// resolveTag turns a change's tag target into a tag id, once per plan: an
// id must name a tag; a title names the one tag with that normalized title.
// A missing title is, when create, a tag to make (newTagPrefix + title), and
// otherwise a problem. It returns why the target cannot apply, or "".
func (w *Workflow) resolveTag(ctx context.Context, target string, create bool, seen map[string]string) (id, msg string, err error) {
	if joplinID.MatchString(target) {
		msg, err := w.checkTarget(ctx, "tag", target, seen)
		return target, msg, err
	}
	key := "tagtitle:" + w.j.NormalizeTitle(target)
	found, ok := seen[key]
	if !ok && create && w.j.SurelyNewTag(ctx, target) {
		found, ok = "", true // created at apply, or Joplin names the tag it has
		seen[key] = found
	}
	if !ok {
		matches, err := w.j.TagsTitled(ctx, target)
		if err != nil {
			return "", "", err
		}
		switch len(matches) {
		case 0:
			found = ""
		case 1:
			found = matches[0]
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
// has just found no tag with each title (a tag made elsewhere since is
// the one PostTag returns).
func (w *Workflow) createPlannedTags(ctx context.Context, notes []receipts.Note) error {
	made := map[string]string{}
	for i := range notes {
		tags := notes[i].After.Tags
		for j, t := range tags {
			title, isNew := strings.CutPrefix(t, newTagPrefix)
			if !isNew {
				continue
			}
			id, ok := made[w.j.NormalizeTitle(title)]
			if !ok {
				created, err := w.j.PostTag(ctx, title)
				if err != nil {
					return err
				}
				id = created
				made[w.j.NormalizeTitle(title)] = id
			}
			tags[j] = id
		}
		slices.Sort(tags)
		notes[i].After.Tags = slices.Compact(tags)
	}
	return nil
}
