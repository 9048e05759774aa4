package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
)

// The scripted agent task of issue 25 counts what reaches the model: the
// server's instructions and the catalog as clients hand them over (name,
// description, input schema per tool), each call's arguments and each
// answer's text. Joplin requests are counted by the proxy and split into
// the task's own, the identity check of the Joplin served (once per
// process, at its first call), /events polls and the index's light check
// of notebooks and tags (background work, which the idle and start-up
// figures cover). After the last call it waits for the bridge's next
// /events poll and counts what the bridge asked Joplin meanwhile because
// of the task's own writes (issue 35). The corpus is corpus.go's, removed
// at the end.

// taskNoteBody is the note the agent finds, reads and changes.
const taskNoteBody = `# Gardens roadmap

Goals for the community gardens this year, agreed at the January meeting.
The committee reviews this page on the first Monday of each month; add
comments under the season they belong to, not at the end.

## Spring
- Clear the river beds
- Order seeds for the east plots
- Repair the fence along the railway path (quote from Hollis, 240 EUR)
- Test the soil in plots 4 to 9 before anything is planted
- Ask the council about the second water tap

## Summer
- Plant the river beds
- Set up the watering rota
- Open day for the neighbours on the last Saturday of June
- Weekly harvest table at the market, Thursday mornings
- Shade cloth for the seedling bench

## Autumn
- Harvest festival
- Compost the old beds
- Collect and label seeds for next year
- Clean and oil the tools before they go into the shed

## Winter
- Prune the orchard corner and the hedges
- Plan the crop rotation for the east plots
- Write the annual report for the council grant

## Budget
Grant from the council: 1,800 EUR. Membership fees: about 600 EUR.
The fence, the tap and the seeds take most of it; tools and the open day
share what is left. Receipts go in the green folder in the shed.

## Volunteers
- Maria: watering rota and the open day
- Tom: fence, tap, anything with tools
- Aisha: seeds, soil tests, the harvest table
- Ben: accounts and the council report

## Open questions
- Can the school class take over plot 12 for the summer term?
- Do we need insurance for the open day, or does the council's cover it?
- Where does the second compost bay go if the council says no to the tap?

## Notes from the March meeting
Twelve members came. The river beds flooded twice in February, so the
clearing waits until the ground has dried; Tom will check it each week.
The east plots get the new seed order first. The bakery on Mill Street
offered its coffee grounds for the compost, collected on Fridays.
Next meeting: April 7, in the library's back room.
`

// step is one row: a measured call, what the model holds before any call
// (the instructions, the catalog) or the bridge's follow-up.
type step struct {
	name  string
	kind  stepKind
	bytes int
	n     counts
	reqs  []string
}

type stepKind int

const (
	callStep     stepKind = iota
	contextStep           // in the model's context before any call
	followUpStep          // the bridge's own requests after the last call
)

// counts splits a step's Joplin requests.
type counts struct{ task, identity, poll, check int }

// identityCheck is the guard's read of one remembered item (pkg/joplinid).
var identityCheck = regexp.MustCompile(`^GET /(notes|folders|tags|resources)/[0-9a-f]{32}\?fields=id$`)

// callText calls a tool and returns the arguments' bytes and the answer's
// text block.
func (b *bridge) callText(tool, args string) (string, error) {
	line, err := b.rpc("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args))
	if err != nil {
		return "", err
	}
	var resp struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &resp); err != nil || len(resp.Result.Content) != 1 {
		return "", fmt.Errorf("%s: answer %.300s", tool, line)
	}
	return resp.Result.Content[0].Text, nil
}

// catalogBytes is the model-visible catalog: each tool's name,
// description and input schema, compact.
func (b *bridge) catalogBytes() (int, int, error) {
	line, err := b.rpc("tools/list", `{}`)
	if err != nil {
		return 0, 0, err
	}
	var resp struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		return 0, 0, err
	}
	raw, _ := json.Marshal(resp.Result.Tools)
	return len(raw), len(resp.Result.Tools), nil
}

// listReread is a read of the whole notebook or tag list (with each tag's
// notes), which the light check makes when a fingerprint moved.
var listReread = regexp.MustCompile(`^GET /(tags\?fields=id%2Ctitle&|tags/[0-9a-f]{32}/notes\?fields=id&|folders\?fields=id%2Cparent_id%2Ctitle&)`)

// classify splits requests into the task's, the identity check (first
// is the process's first call), the /events polls and the light check
// (GET /folders or /tags, newest one only, and the lists it re-reads
// after it when one moved: a new tag moves the tags').
func classify(reqs []string, first bool) counts {
	var c counts
	checked := false
	for _, r := range reqs {
		switch {
		case strings.HasPrefix(r, "GET /events"):
			c.poll++
		case (strings.HasPrefix(r, "GET /folders?") || strings.HasPrefix(r, "GET /tags?")) && strings.Contains(r, "limit=1&") && strings.Contains(r, "order_by=updated_time"):
			c.check++
			checked = true
		case checked && listReread.MatchString(r):
			c.check++
		case first && identityCheck.MatchString(r):
			c.identity++
		default:
			c.task++
		}
	}
	return c
}

// measure runs one call and records its bytes and requests.
func measure(b *bridge, c *counter, steps *[]step, name, tool, args string) (string, error) {
	n := c.len()
	text, err := b.callText(tool, args)
	if err != nil {
		return "", err
	}
	reqs := c.since(n)
	*steps = append(*steps, step{name: name, bytes: len(args) + len(text), n: classify(reqs, !b.called), reqs: reqs})
	b.called = true
	return text, nil
}

func runTask(joplinURL, tokenFile, bin string, notes int, idle time.Duration, tags int) error {
	return withCorpus(joplinURL, tokenFile, func(corp *corpus) error {
		return playTask(corp, joplinURL, tokenFile, bin, notes, idle, tags)
	})
}

// playTask seeds the task's corpus and plays the task on it.
func playTask(corp *corpus, joplinURL, tokenFile, bin string, notes int, idle time.Duration, tags int) (err error) {
	r := corp.r
	seedStart := time.Now()
	if err := corp.seed(notes, tags); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	target, err := corp.note("Gardens roadmap", taskNoteBody)
	if err != nil {
		return err
	}
	// The task's note carries two of the corpus's tags, as a person's
	// note might.
	for _, k := range []int{0, 3} {
		if err := corp.link(corp.tags[k], target); err != nil {
			return err
		}
	}
	trashed, err := corp.note("Old gardens plan", "Superseded.")
	if err != nil {
		return err
	}
	if _, err := r.do(http.MethodDelete, "/notes/"+trashed, nil, nil); err != nil {
		return err
	}
	seedTook := time.Since(seedStart)
	proxyURL, count, err := startCounter(joplinURL)
	if err != nil {
		return err
	}
	state, err := os.MkdirTemp("", "benchjoplin-state-")
	if err != nil {
		return err
	}
	corp.dirs = append(corp.dirs, state)
	if err := warmIndex(bin, proxyURL, tokenFile, state); err != nil {
		return err
	}
	fmt.Printf("seeded in notebook %q in %.1f s: %d notes of about 2 KB and %d tags (%d links), the task's note (%d bytes) and a trashed note; index built in %s\n\n",
		"notebridge bench "+corp.run, seedTook.Seconds(), notes, len(corp.tags), corp.links, len(taskNoteBody), state)
	if corp.taskTagExisted {
		fmt.Printf("the tag %q was in Joplin before the run: the edit links it, and it stays\n\n", taskTag)
	}

	for _, profile := range []string{"core", "all"} {
		b, err := startBridge(bin, proxyURL, tokenFile, state, "--toolsets", "joplin", "--tools", profile)
		if err != nil {
			return err
		}
		defer b.close()
		steps := []step{{name: "instructions", kind: contextStep, bytes: len(b.instructions)}}
		cat, tools, err := b.catalogBytes()
		if err != nil {
			return err
		}
		steps = append(steps, step{name: fmt.Sprintf("catalog (%d tools)", tools), kind: contextStep, bytes: cat})
		find, replace := "- Plant the river beds\n", "- Plant the river beds and the hedges\n"
		if profile == "all" {
			find, replace = replace, find
		}
		text, err := measure(b, count, &steps, "search", "search", fmt.Sprintf(`{"query":%q}`, taskQuery))
		if err != nil {
			return err
		}
		if !strings.Contains(text, target) {
			return fmt.Errorf("search did not find the task's note among its first hits (other notes with %q rank above it?): %.300s", taskQuery, text)
		}
		text, err = measure(b, count, &steps, "get_note", "get_note", fmt.Sprintf(`{"id":%q}`, target))
		if err != nil {
			return err
		}
		var note struct {
			UpdatedTime int64 `json:"updated_time"`
		}
		json.Unmarshal([]byte(text), &note)
		edit, _ := json.Marshal(map[string]any{"id": target, "updated_time": note.UpdatedTime, "changes": []map[string]any{
			{"op": "replace", "find": find, "text": replace},
			{"op": "tag", "target": taskTag, "create": true},
		}})
		writeStart := count.len()
		_, err = measure(b, count, &steps, "edit_note (one line + tag by title)", "edit_note", string(edit))
		corp.noteTaskTag()
		if err != nil {
			return err
		}
		if _, err := measure(b, count, &steps, "get_note", "get_note", fmt.Sprintf(`{"id":%q}`, target)); err != nil {
			return err
		}
		follow, remark := followUp(count, writeStart, count.len())
		steps = append(steps, follow)
		title := fmt.Sprintf("scripted agent task, --tools %s", profile)
		printSteps(title, steps)
		if remark != "" {
			fmt.Printf("%s\n\n", remark)
		}
		printTotals(profile, steps)
		if profile == "core" {
			var more []step
			if _, err := measure(b, count, &more, "find_tools restore", "find_tools", `{"query":"restore"}`); err != nil {
				return err
			}
			if _, err := measure(b, count, &more, "call_tool restore_note", "call_tool", fmt.Sprintf(`{"name":"restore_note","arguments":{"id":%q}}`, trashed)); err != nil {
				return err
			}
			printSteps("a non-core tool through --tools core: restore a trashed note (catalog as above)", more)
			if err := idleCount(count, idle); err != nil {
				return err
			}
		}
		b.close()
	}
	// The first restart follows the last process's edit (which that
	// process's own poll read: its follow-up row); the second finds
	// nothing changed.
	if err := startupCount(bin, proxyURL, tokenFile, state, count, "right after the last process"); err != nil {
		return err
	}
	if err := startupCount(bin, proxyURL, tokenFile, state, count, "again, nothing changed"); err != nil {
		return err
	}
	fmt.Println()
	return nil
}

// followUpWait bounds the wait for the bridge's poll after the task.
const followUpWait = 90 * time.Second

// followUp waits for the bridge's first /events poll, after the calls
// ended (request end), whose cursor moved past the last poll before the
// task's first write (request writeStart): that poll's cursor was moved by
// the poll that returned the task's changes, after the reads that poll
// made. It returns the requests from end to that poll, and a remark when
// the row may not hold all of them.
func followUp(c *counter, writeStart, end int) (step, string) {
	before := c.since(0)[:writeStart]
	last := ""
	for i := len(before) - 1; i >= 0; i-- {
		if cur, ok := eventsCursor(before[i]); ok {
			last = cur
			break
		}
	}
	remark := ""
	if last == "" {
		remark = "no /events poll before the edit: the row ends at the second poll after the task"
	}
	for _, r := range c.since(writeStart)[:end-writeStart] {
		if cur, ok := eventsCursor(r); ok && last != "" && cur != last {
			remark = "the bridge polled /events before the last call ended: its reads after the task's changes are in the rows above"
		}
	}
	deadline := time.Now().Add(followUpWait)
	polls := 0
	for {
		reqs := c.since(end)
		for i, r := range reqs {
			cur, ok := eventsCursor(r)
			if !ok {
				continue
			}
			polls++
			if (last != "" && cur != last) || (last == "" && polls == 2) {
				reqs = reqs[:i+1]
				return step{name: "after the task (bridge's own follow-up)", kind: followUpStep, n: classify(reqs, false), reqs: reqs}, remark
			}
		}
		polls = 0
		if time.Now().After(deadline) {
			return step{name: "after the task (bridge's own follow-up)", kind: followUpStep, n: classify(reqs, false), reqs: reqs},
				fmt.Sprintf("no /events poll with a moved cursor within %s of the task: the row holds what came meanwhile", followUpWait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// eventsCursor is the cursor of a GET /events request.
func eventsCursor(req string) (string, bool) {
	rest, ok := strings.CutPrefix(req, "GET /events?")
	if !ok {
		return "", false
	}
	q, _ := url.ParseQuery(rest)
	return q.Get("cursor"), true
}

func printSteps(title string, steps []step) {
	fmt.Printf("%s:\n\n| Step | model-visible bytes | Joplin requests | identity check (once per process) | /events polls | light checks (and lists re-read) |\n|---|---:|---:|---:|---:|---:|\n", title)
	var bytes, calls int
	var sum counts
	for _, s := range steps {
		fmt.Printf("| %s | %d | %d | %d | %d | %d |\n", s.name, s.bytes, s.n.task, s.n.identity, s.n.poll, s.n.check)
		bytes += s.bytes
		sum = sum.add(s.n)
		if s.kind == callStep {
			calls++
		}
	}
	fmt.Printf("| **total, %d calls** | **%d** | **%d** | %d | %d | %d |\n\nJoplin requests by step:\n\n", calls, bytes, sum.task, sum.identity, sum.poll, sum.check)
	for _, s := range steps {
		for _, r := range s.reqs {
			fmt.Printf("    %-40s %s\n", s.name, r)
		}
	}
	fmt.Println()
}

func (c counts) add(d counts) counts {
	return counts{c.task + d.task, c.identity + d.identity, c.poll + d.poll, c.check + d.check}
}

// Goals of issue 35 for the task with --tools core.
const (
	goalBytes    = 10_000
	goalRequests = 8
)

// printTotals states the task's model-visible bytes (instructions and
// catalog included), its calls and its Joplin requests (the calls' and
// the bridge's follow-up), against the goal.
func printTotals(profile string, steps []step) {
	var ctx, calls, callBytes, follow int
	var callN, bg counts
	parts := []string{}
	for _, s := range steps {
		switch s.kind {
		case contextStep:
			ctx += s.bytes
			parts = append(parts, fmt.Sprintf("%s %d", s.name, s.bytes))
		case callStep:
			calls++
			callBytes += s.bytes
			callN = callN.add(s.n)
		case followUpStep:
			follow += s.n.task
		}
		bg = bg.add(counts{identity: s.n.identity, poll: s.n.poll, check: s.n.check})
	}
	bytes, reqs := ctx+callBytes, callN.task+follow
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "not met"
	}
	fmt.Printf("totals, --tools %s: %d model-visible bytes (%s, %d calls' arguments and answers %d); %d calls; "+
		"%d Joplin requests (%d by the calls + %d the bridge's follow-up; besides %d identity check, %d /events polls, %d light-check requests). "+
		"Goal ≤ %d bytes: %s; ≤ %d Joplin requests: %s\n\n",
		profile, bytes, strings.Join(parts, ", "), calls, callBytes, calls, reqs, callN.task, follow, bg.identity, bg.poll, bg.check,
		goalBytes, met(bytes <= goalBytes), goalRequests, met(reqs <= goalRequests))
}

// warmIndex builds the search index in state with a first bridge, so the
// measured runs resume it.
func warmIndex(bin, joplinURL, tokenFile, state string) error {
	b, err := startBridge(bin, joplinURL, tokenFile, state)
	if err != nil {
		return err
	}
	defer b.close()
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		text, err := b.callText("search", fmt.Sprintf(`{"query":%q}`, taskQuery))
		if err != nil {
			return err
		}
		if strings.Contains(text, `"index":"ready"`) {
			// Joplin records changes in its change log a moment after it
			// answers: let the seed's last ones land, then have a search
			// catch the index up, so the measured runs start settled.
			time.Sleep(5 * time.Second)
			_, err := b.callText("search", fmt.Sprintf(`{"query":%q}`, taskQuery))
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("the search index was not ready within 10 minutes")
}

// idleCount counts the Joplin requests of the idle bridge, minute by
// minute, after the task.
func idleCount(c *counter, idle time.Duration) error {
	var others []string
	fmt.Printf("idle after the task (--tools core), Joplin requests per minute:\n\n| Minute | requests | of which /events | light checks (and lists re-read) | other |\n|---|---:|---:|---:|---:|\n")
	for m := 1; time.Duration(m)*time.Minute <= idle; m++ {
		start := c.len()
		time.Sleep(time.Minute)
		reqs := c.since(start)
		k := classify(reqs, false)
		fmt.Printf("| %d | %d | %d | %d | %d |\n", m, len(reqs), k.poll, k.check, k.task)
		for _, r := range reqs {
			if !strings.HasPrefix(r, "GET /events") {
				others = append(others, fmt.Sprintf("    minute %d: %s", m, r))
			}
		}
	}
	fmt.Printf("\nidle requests other than /events:\n\n%s\n\n", strings.Join(others, "\n"))
	return nil
}

// startupCount starts a bridge over the saved index, makes one search (it
// starts the index) and counts the Joplin requests until 5 s after it.
func startupCount(bin, joplinURL, tokenFile, state string, c *counter, label string) error {
	n := c.len()
	b, err := startBridge(bin, joplinURL, tokenFile, state, "--tools", "core")
	if err != nil {
		return err
	}
	defer b.close()
	if _, err := b.callText("search", fmt.Sprintf(`{"query":%q}`, taskQuery)); err != nil {
		return err
	}
	time.Sleep(5 * time.Second)
	reqs := c.since(n)
	k := classify(reqs, true)
	fmt.Printf("start-up over the saved index, %s (start, one search, 5 s): %d Joplin requests: %d /events, %d light checks, %d identity check, %d other\n",
		label, len(reqs), k.poll, k.check, k.identity, k.task)
	for _, r := range reqs {
		fmt.Printf("    %s\n", r)
	}
	return nil
}
