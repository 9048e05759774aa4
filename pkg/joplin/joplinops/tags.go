package joplinops

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
)

// Tag is a Joplin tag. Joplin keeps a tag's case and compares titles
// case-insensitively.
type Tag struct {
	ID    string `json:"id" schema:"id"`
	Title string `json:"title" schema:"max=10000"`
}

// MaxTags bounds how many tags the tag operations read.
const MaxTags = 10_000

// allTags lists every tag; more than MaxTags is an error.
func (o *Ops) allTags(ctx context.Context) ([]Tag, error) {
	return joplin.ListAll[Tag](ctx, o.c, "/tags", url.Values{"fields": {"id,title"}}, MaxTags)
}

// tagsTitled lists the tags other than self whose normalized title is
// title's, with one Joplin request in the usual case: a tag search (title
// LIKE, ASCII case-insensitive, not the stale note index) for a pattern that
// matches a superset of them, then the exact comparison here.
func (o *Ops) tagsTitled(ctx context.Context, title, self string) ([]match, error) {
	tags, err := joplin.ListAll[Tag](ctx, o.c, "/search", url.Values{
		"type": {"tag"}, "query": {tagLikePattern(title)}, "fields": {"id,title"},
	}, MaxTags)
	if err != nil {
		return nil, err
	}
	return tagMatches(tags, title, self), nil
}

// tagLikePattern turns a title into a LIKE pattern (Joplin's "*" is "%")
// matched by every title that normalizes like it. Only ASCII letters and
// digits that no other character case-folds to stay literal; anything else
// (spaces, non-ASCII, wildcards, and f i k l s t, which K, ſ, ß and the
// ligatures fold to) becomes "*", and so do both ends, for stored titles
// with surrounding spaces.
func tagLikePattern(title string) string {
	var b strings.Builder
	b.WriteByte('*')
	for _, r := range NormalizeTitle(title) {
		literal := (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') && !strings.ContainsRune("fiklst", r)
		switch {
		case literal:
			b.WriteRune(r)
		case !strings.HasSuffix(b.String(), "*"):
			b.WriteByte('*')
		}
	}
	if !strings.HasSuffix(b.String(), "*") {
		b.WriteByte('*')
	}
	return b.String()
}

// loadTag reads one tag; a missing one is NOT_FOUND with details.missing "tag".
func (o *Ops) loadTag(ctx context.Context, id string) (Tag, error) {
	t, err := o.c.Tag(ctx, id)
	if err != nil {
		return Tag{}, missing(err, "tag", id)
	}
	return Tag(t), nil
}

// tagMatches lists the tags other than self whose normalized title is
// title's.
func tagMatches(tags []Tag, title, self string) []match {
	want := NormalizeTitle(title)
	out := []match{}
	for _, t := range tags {
		if t.ID != self && NormalizeTitle(t.Title) == want {
			out = append(out, match{ID: t.ID})
		}
	}
	return out
}

// lockTagTitle refuses a title that is blank once normalized, then takes
// the create lock, under which create_tag and update_tag check that the
// title is free (tagTitleFree) and write.
func (o *Ops) lockTagTitle(ctx context.Context, title string) (unlock func(), err error) {
	if NormalizeTitle(title) == "" {
		return nil, domainerr.New(domainerr.InvalidArgument, "the title is blank")
	}
	return o.lockCreates(ctx)
}

// tagTitleFree is TAG_ALREADY_EXISTS when a tag other than self has
// title's normalized title.
func (o *Ops) tagTitleFree(ctx context.Context, title, self string) error {
	matches, err := o.tagsTitled(ctx, title, self)
	if err != nil {
		return err
	}
	if len(matches) > 0 {
		return tagExists(matches)
	}
	return nil
}

func tagExists(matches []match) error {
	return alreadyExists(domainerr.TagAlreadyExists, "tag", "update_tag", "", matches)
}

// tagConflict turns Joplin's refusal of a duplicate tag title (HTTP 500,
// "already exists"), which a write racing another Joplin client can meet,
// into TAG_ALREADY_EXISTS listing the tags that now match. Other errors pass
// through.
func (o *Ops) tagConflict(ctx context.Context, err error, title, self string) error {
	var ae *joplin.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusInternalServerError || !strings.Contains(ae.Message, "already exists") {
		return err
	}
	matches, lerr := o.tagsTitled(ctx, title, self)
	if lerr != nil {
		return tagExists([]match{})
	}
	return tagExists(matches)
}

type listTagsOut struct {
	Tags  []Tag `json:"tags" schema:"max=@max_tags"`
	Total int   `json:"total" schema:"min=0,max=@max_tags"`
}

func (o *Ops) listTags() registry.Operation {
	return registry.Define(o.meta("list_tags", "Show all tags", "List every tag, sorted by title.", registry.EffectRead), func(ctx context.Context, _ struct{}) (listTagsOut, error) {
		tags, err := o.allTags(ctx)
		if err != nil {
			return listTagsOut{}, err
		}
		slices.SortFunc(tags, func(a, b Tag) int {
			return cmp.Or(strings.Compare(NormalizeTitle(a.Title), NormalizeTitle(b.Title)), strings.Compare(a.ID, b.ID))
		})
		if tags == nil {
			tags = []Tag{}
		}
		return listTagsOut{Tags: tags, Total: len(tags)}, nil
	})
}

type createTagIn struct {
	Title string `json:"title" schema:"min=1,max=500"`
}

func (o *Ops) createTag() registry.Operation {
	desc := "Create a tag (stored in lower case). An existing title fails with TAG_ALREADY_EXISTS."
	return registry.Define(o.meta("create_tag", "Create a tag", desc, registry.EffectCreate), func(ctx context.Context, in createTagIn) (Tag, error) {
		if err := o.mayCreateTag(ctx); err != nil {
			return Tag{}, err
		}
		unlock, err := o.lockTagTitle(ctx, in.Title)
		if err != nil {
			return Tag{}, err
		}
		defer unlock()
		if err := o.tagTitleFree(ctx, in.Title, ""); err != nil {
			return Tag{}, err
		}
		return o.postTag(ctx, in.Title)
	})
}

// mayCreateTag refuses a caller that may write no notebook, before any
// lookup: whether the title exists outside its scope never shows.
func (o *Ops) mayCreateTag(ctx context.Context) error {
	if o.view == nil {
		return nil
	}
	return o.view.MayCreateShared(ctx)
}

// invisibleTag finds, for a caller limited to some notebooks, a tag titled
// title that it cannot see (Joplin's tags are global: it is on notes of
// other notebooks only). The create reuses it, Joplin keeping one tag per
// title, and answers as a fresh create would (the title as given, trimmed
// as Joplin stores it); the view then shows the caller's scope that tag as
// the fresh, empty tag it made (scopeview's Claim), so nothing of those
// notes, nor the stored spelling, ever shows.
func (o *Ops) invisibleTag(ctx context.Context, title string) (Tag, bool, error) {
	if !scopeview.Limited(ctx) || o.view == nil {
		return Tag{}, false, nil
	}
	all, err := o.tagsTitled(joplin.WholeJoplin(ctx), title, "")
	if err != nil || len(all) == 0 {
		return Tag{}, false, err
	}
	t := Tag{ID: all[0].ID, Title: strings.TrimSpace(title)}
	if err := o.view.Claim(ctx, t.ID, t.Title); err != nil {
		return Tag{}, false, err
	}
	return t, true, nil
}

type updateTagIn struct {
	ID    string `json:"id" schema:"id"`
	Title string `json:"title" schema:"min=1,max=500"`
}

func (o *Ops) updateTag() registry.Operation {
	desc := "Rename a tag (stored in lower case). Another tag's title fails with TAG_ALREADY_EXISTS."
	return registry.Define(o.meta("update_tag", "Rename a tag", desc, registry.EffectUpdate), func(ctx context.Context, in updateTagIn) (Tag, error) {
		unlock, err := o.lockTagTitle(ctx, in.Title)
		if err != nil {
			return Tag{}, err
		}
		defer unlock()
		if _, err := o.loadTag(ctx, in.ID); err != nil {
			return Tag{}, err
		}
		if err := o.tagTitleFree(ctx, in.Title, in.ID); err != nil {
			return Tag{}, err
		}
		var updated Tag
		if err := o.c.Write(ctx, "PUT", "/tags/"+in.ID, nil, map[string]any{"title": in.Title}, &updated); err != nil {
			return Tag{}, withObjectID(o.tagConflict(ctx, err, in.Title, in.ID), in.ID)
		}
		return updated, nil
	})
}

type tagIDIn struct {
	ID string `json:"id" schema:"id"`
}

type deleteTagOut struct {
	ID      string `json:"id" schema:"id"`
	Deleted bool   `json:"deleted"`
}

func (o *Ops) deleteTag() registry.Operation {
	desc := "Delete a tag permanently (Joplin has no trash for tags) and remove it from every note; the notes are kept."
	return registry.Define(o.meta("delete_tag", "Delete a tag", desc, registry.EffectDeletePermanent), func(ctx context.Context, in tagIDIn) (deleteTagOut, error) {
		if _, err := o.loadTag(ctx, in.ID); err != nil {
			return deleteTagOut{}, err
		}
		if err := o.c.Write(ctx, "DELETE", "/tags/"+in.ID, nil, nil, nil); err != nil {
			return deleteTagOut{}, withObjectID(missing(err, "tag", in.ID), in.ID)
		}
		return deleteTagOut{ID: in.ID, Deleted: true}, nil
	})
}

// noteTagRef names a note and a tag, by id or by title.
type noteTagRef struct {
	NoteID string `json:"note_id" schema:"id"`
	TagID  string `json:"tag_id,omitempty" schema:"pattern=optional_id"`
	Tag    string `json:"tag,omitempty" jsonschema:"A tag title, instead of tag_id." schema:"max=500"`
}

// noteTagIn is what tag_note takes: create makes a tag titled tag when
// there is none.
type noteTagIn struct {
	noteTagRef
	Create bool `json:"create,omitempty"`
}

// noteHasTag checks that the note and the tag exist (NOT_FOUND naming the
// missing one in details.missing) and reports whether the note has the tag.
func (o *Ops) noteHasTag(ctx context.Context, in noteTagRef) (bool, error) {
	if _, err := o.loadNote(ctx, in.NoteID, "id"); err != nil {
		return false, err
	}
	if _, err := o.loadTag(ctx, in.TagID); err != nil {
		return false, err
	}
	tags, err := joplin.ListAll[Tag](ctx, o.c, "/notes/"+in.NoteID+"/tags", url.Values{"fields": {"id"}}, MaxTags)
	if err != nil {
		return false, err
	}
	for _, t := range tags {
		if t.ID == in.TagID {
			return true, nil
		}
	}
	return false, nil
}

type tagNoteOut struct {
	NoteID        string `json:"note_id" schema:"id"`
	TagID         string `json:"tag_id" schema:"id"`
	AlreadyTagged bool   `json:"already_tagged"`
}

func (o *Ops) tagNote() registry.Operation {
	desc := "Add a tag (tag_id, or tag title; create: true makes a missing one) to a note; a no-op when the note has it."
	return registry.Define(o.meta("tag_note", "Add a tag to a note", desc, registry.EffectUpdate), o.doTagNote)
}

// doTagNote costs two Joplin requests: the note must exist (Joplin would
// tag a missing one), and the write, which Joplin answers with 404 for a
// missing tag and with an empty answer when the note already has the tag
// (Tag.addNote checks hasNote first).
func (o *Ops) doTagNote(ctx context.Context, in noteTagIn) (tagNoteOut, error) {
	if in.Tag != "" && in.Create {
		unlock, err := o.lockCreates(ctx)
		if err != nil {
			return tagNoteOut{}, err
		}
		defer unlock()
	}
	var err error
	if in.TagID, err = o.tagOf(ctx, in.noteTagRef, in.Create); err != nil {
		return tagNoteOut{}, err
	}
	if _, err := o.loadNote(ctx, in.NoteID, "id"); err != nil {
		return tagNoteOut{}, err
	}
	var answer []byte
	if err := o.c.Write(ctx, "POST", "/tags/"+in.TagID+"/notes", nil, map[string]any{"id": in.NoteID}, &answer); err != nil {
		return tagNoteOut{}, withObjectID(missing(err, "tag", in.TagID), in.NoteID)
	}
	answer = bytes.TrimSpace(answer)
	already := len(answer) == 0 || string(answer) == "null"
	return tagNoteOut{NoteID: in.NoteID, TagID: in.TagID, AlreadyTagged: already}, nil
}

type untagNoteOut struct {
	NoteID          string `json:"note_id" schema:"id"`
	TagID           string `json:"tag_id" schema:"id"`
	AlreadyUntagged bool   `json:"already_untagged"`
}

func (o *Ops) untagNote() registry.Operation {
	desc := "Remove a tag (tag_id, or tag title) from a note; a no-op when the note lacks it."
	return registry.Define(o.meta("untag_note", "Remove a tag from a note", desc, registry.EffectUpdate), func(ctx context.Context, in noteTagRef) (untagNoteOut, error) {
		var err error
		if in.TagID, err = o.tagOf(ctx, in, false); err != nil {
			return untagNoteOut{}, err
		}
		has, err := o.noteHasTag(ctx, in)
		if err != nil {
			return untagNoteOut{}, err
		}
		res := untagNoteOut{NoteID: in.NoteID, TagID: in.TagID, AlreadyUntagged: !has}
		if !has {
			return res, nil
		}
		if err := o.c.Write(ctx, "DELETE", "/tags/"+in.TagID+"/notes/"+in.NoteID, nil, nil, nil); err != nil {
			return untagNoteOut{}, withObjectID(missing(err, "tag", in.TagID), in.NoteID)
		}
		return res, nil
	})
}
