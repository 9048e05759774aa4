package okfbridge

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ConceptType is the OKF type of every exported note.
const ConceptType = "Joplin Note"

// exportActor is the generated.by of every exported concept.
const exportActor = "process:notebridge-joplin-export"

// note is a Joplin note with what the export maps.
type note struct {
	ID              string `json:"id"`
	ParentID        string `json:"parent_id"`
	Title           string `json:"title"`
	Body            string `json:"body"`
	SourceURL       string `json:"source_url"`
	Author          string `json:"author"`
	UserCreatedTime int64  `json:"user_created_time"`
	UserUpdatedTime int64  `json:"user_updated_time"`
	UpdatedTime     int64  `json:"updated_time"`
	DeletedTime     int64  `json:"deleted_time"`
	Tags            []string
}

// target is what a Joplin link id resolves to at export.
type target struct {
	concept string // concept path ("dir/id.md") of an exported note
	asset   string // bundle path of a copied resource
	title   string // display title of a note outside the export ("" when hidden)
	outside bool
}

// joplinLink matches a Markdown link or image whose destination is a
// Joplin item (":/<id>", optionally with an anchor).
var joplinLink = regexp.MustCompile(`(!?)\[([^\]\n]*)\]\(:/([0-9a-f]{32})(#[^)\s]*)?\)`)

// The marker that keeps a link to a note outside the export reversible:
// the original link travels base64-encoded in an HTML comment, the
// visible text is the link text and the note's title.
const (
	markOpen  = "<!--joplin-link:"
	markClose = "<!--/joplin-link-->"
)

var marked = regexp.MustCompile(`<!--joplin-link:([A-Za-z0-9+/=]+)-->.*?<!--/joplin-link-->`)

// bundleLink matches links export wrote: to an exported note's concept
// (named by its Joplin id) or to a copied resource under assets/.
var bundleLink = regexp.MustCompile(`\]\(/(?:[^)\s]*/)?([0-9a-f]{32})(?:\.md|\.[A-Za-z0-9]{1,10})?(#[^)\s]*)?\)`)

// renderBody rewrites a note body's Joplin links for the bundle.
func renderBody(body string, targets map[string]target) string {
	return joplinLink.ReplaceAllStringFunc(body, func(m string) string {
		sm := joplinLink.FindStringSubmatch(m)
		t, ok := targets[sm[3]]
		switch {
		case !ok:
			return m // unknown item (a resource not copied): kept as written
		case t.concept != "":
			return sm[1] + "[" + sm[2] + "](/" + t.concept + sm[4] + ")"
		case t.asset != "":
			return sm[1] + "[" + sm[2] + "](/" + t.asset + sm[4] + ")"
		}
		label := "Joplin note outside this bundle"
		if t.title != "" {
			label = "Joplin note: " + oneLine(t.title)
		}
		return markOpen + base64.StdEncoding.EncodeToString([]byte(m)) + "-->" + sm[2] + " (" + label + ")" + markClose
	})
}

// reverseBody turns a concept body back into a Joplin note body: concept
// and asset links become ":/<id>" links, markers their original link.
func reverseBody(body string) string {
	body = marked.ReplaceAllStringFunc(body, func(m string) string {
		raw, err := base64.StdEncoding.DecodeString(marked.FindStringSubmatch(m)[1])
		if err != nil {
			return m
		}
		return string(raw)
	})
	return bundleLink.ReplaceAllString(body, "](:/$1$2)")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// instant formats Joplin's Unix milliseconds as an RFC 3339 UTC instant.
func instant(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// q quotes s as a YAML double-quoted scalar (JSON strings are valid ones).
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// renderConcept is the whole concept file for n. Its bytes depend only on
// the note and the export's link targets, so an unchanged note renders
// the same file and a second export writes nothing.
func renderConcept(n note, targets map[string]target) []byte {
	var b strings.Builder
	b.WriteString("---\ntype: " + ConceptType + "\n")
	title := n.Title
	if strings.TrimSpace(title) == "" {
		title = "Untitled"
	}
	b.WriteString("title: " + q(title) + "\n")
	if len(n.Tags) > 0 {
		tags := append([]string(nil), n.Tags...)
		sort.Strings(tags)
		quoted := make([]string, len(tags))
		for i, t := range tags {
			quoted[i] = q(t)
		}
		b.WriteString("tags: [" + strings.Join(quoted, ", ") + "]\n")
	}
	if n.SourceURL != "" {
		b.WriteString("sources:\n  - id: source\n    resource: " + q(n.SourceURL) + "\n")
	}
	if n.Author != "" {
		b.WriteString("author: " + q(n.Author) + "\n")
	}
	b.WriteString("created: " + instant(n.UserCreatedTime) + "\n")
	b.WriteString("updated: " + instant(n.UserUpdatedTime) + "\n")
	b.WriteString("generated: { by: " + exportActor + ", at: " + instant(n.UserUpdatedTime) + " }\n")
	b.WriteString("joplin_id: " + q(n.ID) + "\n")
	b.WriteString("joplin_notebook_id: " + q(n.ParentID) + "\n")
	b.WriteString("joplin_updated_time: " + strconv.FormatInt(n.UpdatedTime, 10) + "\n")
	b.WriteString("---\n")
	b.WriteString(renderBody(n.Body, targets))
	return []byte(b.String())
}

// renderIndex is the root index.md: the version and one link per concept.
func renderIndex(title string, concepts []indexEntry) []byte {
	var b strings.Builder
	b.WriteString("---\nokf_version: \"0.2\"\n---\n# " + oneLine(title) + "\n\n")
	sort.Slice(concepts, func(i, j int) bool { return concepts[i].path < concepts[j].path })
	for _, c := range concepts {
		b.WriteString("* [" + escapeLinkText(c.title) + "](/" + c.path + ")\n")
	}
	return []byte(b.String())
}

type indexEntry struct{ path, title string }

func escapeLinkText(s string) string {
	s = oneLine(s)
	if s == "" {
		s = "Untitled"
	}
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(s)
}
