package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// The scripted agent task of issue 25 counts what reaches the model: the
// catalog as clients hand it over (name, description, input schema per
// tool), each call's arguments and each answer's text. Joplin requests are
// counted by the proxy and split into the task's own, the identity check
// of the Joplin served (once per process, at its first call), /events
// polls and the index's light check of notebooks and tags (background
// work, which the idle and start-up figures cover).

// taskNoteBody is the note the agent finds, reads and changes.
const taskNoteBody = `# Gardens roadmap

Goals for the community gardens this year.

## Spring
- Clear the river beds
- Order seeds for the east plots

## Summer
- Plant the river beds
- Set up the watering rota

## Autumn
- Harvest festival
- Compost the old beds
`

// step is one measured call.
type step struct {
	name  string
	bytes int
	n     counts
	reqs  []string
}

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

// classify splits requests into the task's, the identity check (first
// is the process's first call), the /events polls and the light check
// (GET /folders or /tags, newest one only).
func classify(reqs []string, first bool) counts {
	var c counts
	for _, r := range reqs {
		switch {
		case strings.HasPrefix(r, "GET /events"):
			c.poll++
		case (strings.HasPrefix(r, "GET /folders?") || strings.HasPrefix(r, "GET /tags?")) && strings.Contains(r, "limit=1&") && strings.Contains(r, "order_by=updated_time"):
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

func runTask(joplinURL, tokenFile, bin string, notes int, idle time.Duration) error {
	r, err := newREST(joplinURL, tokenFile)
	if err != nil {
		return err
	}
	folder, _, err := seed(r, notes)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	var target, trashed struct{ ID string }
	raw, err := r.do(http.MethodPost, "/notes", nil, map[string]any{"parent_id": folder, "title": "Gardens roadmap", "body": taskNoteBody})
	if err != nil {
		return err
	}
	json.Unmarshal(raw, &target)
	if raw, err = r.do(http.MethodPost, "/notes", nil, map[string]any{"parent_id": folder, "title": "Old gardens plan", "body": "Superseded."}); err != nil {
		return err
	}
	json.Unmarshal(raw, &trashed)
	if _, err := r.do(http.MethodDelete, "/notes/"+trashed.ID, nil, nil); err != nil {
		return err
	}
	proxyURL, count, err := startCounter(joplinURL)
	if err != nil {
		return err
	}
	state := mustTemp()
	if err := warmIndex(bin, proxyURL, tokenFile, state); err != nil {
		return err
	}
	fmt.Printf("seeded %d notes, the task's note and a trashed note; index built in %s\n\n", notes, state)

	for _, profile := range []string{"core", "all"} {
		b, err := startBridge(bin, proxyURL, tokenFile, state, "--toolsets", "joplin", "--tools", profile)
		if err != nil {
			return err
		}
		var steps []step
		cat, tools, err := b.catalogBytes()
		if err != nil {
			return err
		}
		steps = append(steps, step{name: fmt.Sprintf("catalog (%d tools)", tools), bytes: cat})
		find, replace := "- Plant the river beds\n", "- Plant the river beds and the hedges\n"
		if profile == "all" {
			find, replace = replace, find
		}
		text, err := measure(b, count, &steps, "search", "search", `{"query":"gardens"}`)
		if err != nil {
			return err
		}
		if !strings.Contains(text, target.ID) {
			return fmt.Errorf("search did not find the task's note: %.300s", text)
		}
		text, err = measure(b, count, &steps, "get_note", "get_note", fmt.Sprintf(`{"id":%q}`, target.ID))
		if err != nil {
			return err
		}
		var note struct {
			UpdatedTime int64 `json:"updated_time"`
		}
		json.Unmarshal([]byte(text), &note)
		edit, _ := json.Marshal(map[string]any{"id": target.ID, "updated_time": note.UpdatedTime, "changes": []map[string]any{
			{"op": "replace", "find": find, "text": replace},
			{"op": "tag", "target": "planning", "create": true},
		}})
		if _, err := measure(b, count, &steps, "edit_note (one line + tag by title)", "edit_note", string(edit)); err != nil {
			return err
		}
		if _, err := measure(b, count, &steps, "get_note", "get_note", fmt.Sprintf(`{"id":%q}`, target.ID)); err != nil {
			return err
		}
		printSteps(fmt.Sprintf("scripted agent task, --tools %s", profile), steps)
		if profile == "core" {
			var more []step
			if _, err := measure(b, count, &more, "find_tools restore", "find_tools", `{"query":"restore"}`); err != nil {
				return err
			}
			if _, err := measure(b, count, &more, "call_tool restore_note", "call_tool", fmt.Sprintf(`{"name":"restore_note","arguments":{"id":%q}}`, trashed.ID)); err != nil {
				return err
			}
			printSteps("a non-core tool through --tools core: restore a trashed note (catalog as above)", more)
			if err := idleCount(count, idle); err != nil {
				return err
			}
		}
		b.close()
	}
	// The first restart reads what the last process wrote (its own edit
	// is in Joplin's change log); the second finds nothing changed.
	if err := startupCount(bin, proxyURL, tokenFile, state, count, "right after the last process (its edit is in Joplin's change log)"); err != nil {
		return err
	}
	return startupCount(bin, proxyURL, tokenFile, state, count, "again, nothing changed")
}

func printSteps(title string, steps []step) {
	fmt.Printf("%s:\n\n| Step | model-visible bytes | Joplin requests | identity check (once per process) | /events polls | light checks |\n|---|---:|---:|---:|---:|---:|\n", title)
	var bytes, calls int
	var sum counts
	for _, s := range steps {
		fmt.Printf("| %s | %d | %d | %d | %d | %d |\n", s.name, s.bytes, s.n.task, s.n.identity, s.n.poll, s.n.check)
		bytes += s.bytes
		sum = counts{sum.task + s.n.task, sum.identity + s.n.identity, sum.poll + s.n.poll, sum.check + s.n.check}
		if !strings.HasPrefix(s.name, "catalog") {
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

// warmIndex builds the search index in state with a first bridge, so the
// measured runs resume it.
func warmIndex(bin, joplinURL, tokenFile, state string) error {
	b, err := startBridge(bin, joplinURL, tokenFile, state)
	if err != nil {
		return err
	}
	defer b.close()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		text, err := b.callText("search", `{"query":"gardens"}`)
		if err != nil {
			return err
		}
		if strings.Contains(text, `"index":"ready"`) {
			// Joplin records changes in its change log a moment after it
			// answers: let the seed's last ones land, then have a search
			// catch the index up, so the measured runs start settled.
			time.Sleep(5 * time.Second)
			_, err := b.callText("search", `{"query":"gardens"}`)
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("the search index was not ready within 3 minutes")
}

// idleCount counts the Joplin requests of the idle bridge, minute by
// minute, after the task.
func idleCount(c *counter, idle time.Duration) error {
	var others []string
	fmt.Printf("idle after the task (--tools core), Joplin requests per minute:\n\n| Minute | requests | of which /events | light checks | other |\n|---|---:|---:|---:|---:|\n")
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
	if _, err := b.callText("search", `{"query":"gardens"}`); err != nil {
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
