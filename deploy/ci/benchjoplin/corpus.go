package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The task's corpus (issue 35): notes of about 2 KB each with varied,
// deterministic bodies (the same seed gives the same bodies, so runs
// compare), about 20 tags each linked to a share of them, in a notebook of
// the run's own. One note in twenty mentions the task's search word once,
// so the search answers a full page, the task's note first, as it would
// in a person's Joplin (the issue measured ten hits). Everything made is recorded as it is made and removed at the
// end (corpus.cleanup), so the task can run against a Joplin that already
// holds a person's notes.

// taskQuery is the task's search; the generated words never hold it.
const taskQuery = "gardens"

// taskTag is the tag the task's edit adds (create: true).
const taskTag = "planning"

// corpusSeed seeds the corpus's generator.
const corpusSeed = 35

// corpusWords make the corpus's titles and bodies: no form of the task's
// search word, nor of its tag.
var corpusWords = strings.Fields(`
	account address afternoon agenda album answer apple april archive august
	autumn bakery balance basket battery beach bicycle biscuit blanket board
	boat bookshelf border bottle branch bread breakfast bridge budget cabinet
	cable calendar camera candle canvas carpet castle cellar chapter cheese
	chimney circle city client climate clock coffee collar colour concert
	contract copper corner cottage council courier cousin customer cycle
	dentist desk dinner doctor draft drawer dream editor election engine
	evening fabric factory fence ferry festival field figure finance flight
	floor forest fountain friday furnace gallery garage glass guitar hallway
	harbour harvest heater helmet highway holiday hospital hotel invoice
	island jacket january journal kettle keyboard kitchen ladder lantern
	laptop laundry lecture letter library licence lunch magazine market
	meadow meeting mirror monday morning mountain museum neighbour network
	notebook november ocean office orchard oven painting paper parcel
	passport pattern pencil pepper piano pillow platform pocket portrait
	postcard printer project quarter railway receipt recipe record repair
	report ribbon river roof router saddle salad sample saturday schedule
	school season server shelf shoulder signal sketch station storage street
	studio summer sunday supplier surgery table teacher theatre thursday
	ticket timber tomato tower tractor train tuesday tunnel umbrella valley
	vendor village violin visit wallet warehouse weather wednesday window
	winter workshop
	and but then so because while after before with without from into over
	the a an this that our their its every some each another
	is was will could should might must needs keeps brings takes makes
	finds checks moves sends opens closes waits reads writes fixes asks
	early late quiet busy small large old new cheap careful slow quick warm
	cold bright dark heavy light simple
`)

// corpusTagWords name the corpus's tags (with the run's suffix).
var corpusTagWords = strings.Fields(`projects reading travel recipes work family health money ideas
	meetings books music home archive learning writing photos errands review someday`)

// corpus is what the task's run made in Joplin: it removes exactly that.
type corpus struct {
	r      rest
	run    string
	folder string
	notes  []string
	tags   []string
	links  int
	// taskTagExisted: a tag titled taskTag was there before the run; it is
	// the person's and stays.
	taskTagExisted bool
	// taskTagID is the taskTag the edit created, once found.
	taskTagID string
	// dirs are local directories of the run (the bridge's index, a copy
	// of every note in that Joplin), removed with the rest.
	dirs []string
	once sync.Once
	err  error
}

// withCorpus runs fn with a corpus on the Joplin at joplinURL (its REST
// client is corp.r) whose objects are removed when fn returns, also on an
// error or a signal; a failed removal is fn's error when fn had none.
func withCorpus(joplinURL, tokenFile string, fn func(corp *corpus) error) (err error) {
	r, err := newREST(joplinURL, tokenFile)
	if err != nil {
		return err
	}
	corp := newCorpus(r)
	stopSignals := corp.cleanupOnSignal()
	defer func() {
		stopSignals()
		if cerr := corp.cleanup(); err == nil {
			err = cerr
		}
	}()
	return fn(corp)
}

// newCorpus starts a run: its suffix names the notebook and the tags.
func newCorpus(r rest) *corpus {
	return &corpus{r: r, run: fmt.Sprintf("%06x", time.Now().UnixNano()&0xffffff)}
}

// create POSTs an item and returns its id.
func (c *corpus) create(path string, body map[string]any) (string, error) {
	b, err := c.r.do(http.MethodPost, path, nil, body)
	if err != nil {
		return "", err
	}
	var v struct{ ID string }
	if err := json.Unmarshal(b, &v); err != nil || v.ID == "" {
		return "", fmt.Errorf("POST %s: no id in %.200s", path, b)
	}
	return v.ID, nil
}

// note creates a note in the run's notebook and records it.
func (c *corpus) note(title, body string) (string, error) {
	id, err := c.create("/notes", map[string]any{"parent_id": c.folder, "title": title, "body": body})
	if err == nil {
		c.notes = append(c.notes, id)
	}
	return id, err
}

// seed makes the notebook, count generated notes and the tags, linking
// each of tags tags to a share of the notes (tag k to about 25%·0.85^k of
// them, at least one).
func (c *corpus) seed(count, tags int) error {
	if _, err := c.findTag(taskTag); err == nil {
		c.taskTagExisted = true
	} else if !errors.Is(err, errNoTag) {
		return err
	}
	id, err := c.create("/folders", map[string]any{"title": "notebridge bench " + c.run})
	if err != nil {
		return err
	}
	c.folder = id
	rng := rand.New(rand.NewPCG(corpusSeed, 1))
	for i := range count {
		title, body := corpusNote(rng, i)
		if strings.Contains(strings.ToLower(title+body), "garden") {
			return fmt.Errorf("corpus note %d holds the task's search word", i)
		}
		// One note in twenty mentions the gardens once, as a person's
		// other notes do: the search answers a full page of hits, with
		// the task's note (its title and many mentions) first.
		if i%20 == 7 {
			body += "\n\nAsk at the community gardens about the " + word(rng) + " before the next meeting.\n"
		}
		if _, err := c.note(title, body); err != nil {
			return err
		}
	}
	for k := range tags {
		title := corpusTagWords[k%len(corpusTagWords)] + "-" + c.run
		if k >= len(corpusTagWords) {
			title = fmt.Sprintf("%s-%d-%s", corpusTagWords[k%len(corpusTagWords)], k, c.run)
		}
		tag, err := c.create("/tags", map[string]any{"title": title})
		if err != nil {
			return err
		}
		c.tags = append(c.tags, tag)
		share := 0.25
		for range k {
			share *= 0.85
		}
		linked := 0
		for i, n := range c.notes[:count] {
			if rng.Float64() >= share && (linked > 0 || i < count-1) {
				continue
			}
			if err := c.link(tag, n); err != nil {
				return err
			}
			linked++
		}
	}
	return nil
}

// link tags note with tag.
func (c *corpus) link(tag, note string) error {
	_, err := c.r.do(http.MethodPost, "/tags/"+tag+"/notes", nil, map[string]any{"id": note})
	if err == nil {
		c.links++
	}
	return err
}

// corpusNote is generated note i: a title and a body of about 2 KB in
// sections of prose and lists.
func corpusNote(rng *rand.Rand, i int) (title, body string) {
	title = fmt.Sprintf("%s %s %s", capital(word(rng)), word(rng), []string{"notes", "log", "list", "draft", "summary", "ideas"}[i%6])
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	target := 1800 + rng.IntN(400)
	for b.Len() < target {
		fmt.Fprintf(&b, "## %s %s\n\n", capital(word(rng)), word(rng))
		for range 2 + rng.IntN(3) {
			b.WriteString(sentence(rng))
			b.WriteByte(' ')
		}
		b.WriteString("\n\n")
		if rng.IntN(2) == 0 {
			for range 2 + rng.IntN(4) {
				b.WriteString("- ")
				b.WriteString(strings.TrimSuffix(sentence(rng), "."))
				b.WriteByte('\n')
			}
			b.WriteByte('\n')
		}
	}
	return title, b.String()
}

func word(rng *rand.Rand) string { return corpusWords[rng.IntN(len(corpusWords))] }

func capital(w string) string { return strings.ToUpper(w[:1]) + w[1:] }

func sentence(rng *rand.Rand) string {
	ws := make([]string, 4+rng.IntN(9))
	for i := range ws {
		ws[i] = word(rng)
	}
	ws[0] = capital(ws[0])
	return strings.Join(ws, " ") + "."
}

var errNoTag = errors.New("no such tag")

// findTag returns the id of the tag titled title (Joplin's uniqueness
// ignores case), reading every page of /tags.
func (c *corpus) findTag(title string) (string, error) {
	var found string
	err := c.eachPage("/tags", url.Values{"fields": {"id,title"}}, func(id, t string) {
		if strings.EqualFold(t, title) {
			found = id
		}
	})
	if err == nil && found == "" {
		err = errNoTag
	}
	return found, err
}

// eachPage calls f with each item's id and title of every page of path.
func (c *corpus) eachPage(path string, q url.Values, f func(id, title string)) error {
	for page := 1; ; page++ {
		pq := cloneValues(q)
		pq.Set("limit", "100")
		pq.Set("page", fmt.Sprint(page))
		b, err := c.r.do(http.MethodGet, path, pq, nil)
		if err != nil {
			return err
		}
		var p struct {
			Items   []struct{ ID, Title string }
			HasMore bool `json:"has_more"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return fmt.Errorf("GET %s: %w", path, err)
		}
		for _, it := range p.Items {
			f(it.ID, it.Title)
		}
		if !p.HasMore {
			return nil
		}
	}
}

// noteTaskTag records the taskTag the edit created (nothing when the
// person's was there before).
func (c *corpus) noteTaskTag() {
	if c.taskTagExisted || c.taskTagID != "" {
		return
	}
	if id, err := c.findTag(taskTag); err == nil {
		c.taskTagID = id
	}
}

// cleanupOnSignal removes the corpus when the run is interrupted.
func (c *corpus) cleanupOnSignal() func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-ch; ok {
			fmt.Fprintln(os.Stderr, "benchjoplin: interrupted; removing what the run made")
			c.cleanup()
			os.Exit(1)
		}
	}()
	return func() { signal.Stop(ch); close(ch) }
}

// cleanup removes, once, every note (permanently, the trashed one too),
// the notebook and the tags the run made, including the taskTag the edit
// created, then checks that none of them remains. It prints what it did;
// on a failure it names what is left, for a person to remove.
func (c *corpus) cleanup() error {
	c.once.Do(func() { c.err = c.remove() })
	return c.err
}

func (c *corpus) remove() error {
	for _, d := range c.dirs {
		os.RemoveAll(d)
	}
	c.noteTaskTag()
	tags := append([]string(nil), c.tags...)
	if c.taskTagID != "" {
		tags = append(tags, c.taskTagID)
	}
	var errs []error
	// Notes one by one: deleting a notebook for good leaves the notes
	// already in the trash behind (Folder.delete skips them).
	for _, id := range c.notes {
		if _, err := c.r.do(http.MethodDelete, "/notes/"+id, url.Values{"permanent": {"1"}}, nil); err != nil {
			errs = append(errs, err)
		}
	}
	if c.folder != "" {
		if _, err := c.r.do(http.MethodDelete, "/folders/"+c.folder, url.Values{"permanent": {"1"}}, nil); err != nil {
			errs = append(errs, err)
		}
	}
	for _, id := range tags {
		if _, err := c.r.do(http.MethodDelete, "/tags/"+id, nil, nil); err != nil && !strings.Contains(err.Error(), "HTTP 404") {
			errs = append(errs, err)
		}
	}
	left, err := c.remaining(tags)
	if err != nil {
		errs = append(errs, fmt.Errorf("check: %w", err))
	}
	kept := ""
	if c.taskTagExisted {
		kept = fmt.Sprintf(" (the tag %q was there before the run and stays)", taskTag)
	}
	folders := 0
	if c.folder != "" {
		folders = 1
	}
	if len(errs) == 0 && len(left) == 0 {
		fmt.Printf("cleanup: removed %d notes, %d notebook, %d tags; none remain%s\n", len(c.notes), folders, len(tags), kept)
		return nil
	}
	fmt.Fprintf(os.Stderr, "cleanup: FAILED (%v); still in Joplin, to remove by hand: %s\n", errors.Join(errs...), strings.Join(left, ", "))
	return fmt.Errorf("cleanup failed: %d items remain", len(left))
}

// remaining lists the run's items still in Joplin: each note read by id
// (404 once gone), the notebook and tags looked for in the full lists
// (trashed notebooks included).
func (c *corpus) remaining(tags []string) ([]string, error) {
	var left []string
	for _, id := range c.notes {
		_, err := c.r.do(http.MethodGet, "/notes/"+id, url.Values{"fields": {"id"}}, nil)
		switch {
		case err == nil:
			left = append(left, "note "+id)
		case !strings.Contains(err.Error(), "HTTP 404"):
			return left, err
		}
	}
	mine := map[string]string{c.folder: "notebook"}
	for _, t := range tags {
		mine[t] = "tag"
	}
	for _, list := range []struct {
		path string
		q    url.Values
	}{{"/folders", url.Values{"fields": {"id,title"}, "include_deleted": {"1"}}}, {"/tags", url.Values{"fields": {"id,title"}}}} {
		err := c.eachPage(list.path, list.q, func(id, title string) {
			if kind, ok := mine[id]; ok && id != "" {
				left = append(left, fmt.Sprintf("%s %s (%s)", kind, id, title))
			}
		})
		if err != nil {
			return left, err
		}
	}
	return left, nil
}
