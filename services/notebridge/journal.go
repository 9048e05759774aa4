package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/writejournal"
)

// runJournal lists the operator journal of uncertain writes, or shows one
// entry: `notebridge journal [show N]`; `receipts` lists the receipts of
// reviewed note edits and `receipt ID` shows one (ids and sizes, never
// note text). It is for operators, not agents.
func runJournal(args []string, stdout, stderr io.Writer) error {
	var c config
	fs := flag.NewFlagSet("journal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.StateDir, "state-dir", defaultStateDir(), "directory holding the journal")
	var rest []string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		rest, args = args, nil
		for i, a := range rest {
			if strings.HasPrefix(a, "-") {
				rest, args = rest[:i], rest[i:]
				break
			}
		}
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	path := filepath.Join(c.StateDir, writejournal.FileName)
	entries, readErr := writejournal.Read(path)
	switch {
	case len(rest) == 0 || rest[0] == "list":
		if len(entries) == 0 && readErr == nil {
			fmt.Fprintf(stdout, "no uncertain writes recorded (%s)\n", path)
			return nil
		}
		for i, e := range entries {
			keys := make([]string, 0, len(e.Objects))
			for k := range e.Objects {
				keys = append(keys, k+"="+e.Objects[k])
			}
			sort.Strings(keys)
			fmt.Fprintf(stdout, "%d\t%s\t%s\t%s\t%s\n", i+1, e.Time.Format("2006-01-02T15:04:05Z07:00"), e.Operation, e.Code, strings.Join(keys, " "))
		}
		return readErr
	case rest[0] == "receipts" && len(rest) == 1:
		return listReceipts(c.StateDir, stdout)
	case rest[0] == "receipt" && len(rest) == 2:
		return showReceipt(c.StateDir, rest[1], stdout)
	case rest[0] == "show" && len(rest) == 2:
		n, err := strconv.Atoi(rest[1])
		if err != nil || n < 1 || n > len(entries) {
			return fmt.Errorf("no journal entry %q (there are %d)", rest[1], len(entries))
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(entries[n-1])
	}
	return fmt.Errorf("usage: notebridge journal [list | show N | receipts | receipt ID] [--state-dir DIR]")
}
