package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/notebridge/notebridge/pkg/core/activity"
)

// activityDir is the activity log's directory in the state directory.
func activityDir(stateDir string) string { return filepath.Join(stateDir, "activity") }

// bindActivityFlags registers the activity log's settings.
func bindActivityFlags(fs *flag.FlagSet, c *config) {
	c.ActivityMaxBytes = byteSize(activity.DefaultOptions.MaxBytes)
	fs.Var(&c.ActivityMaxBytes, "activity-max-bytes", "size (such as 10MiB) at which the activity log's file is rotated")
	fs.IntVar(&c.ActivityMaxFiles, "activity-max-files", activity.DefaultOptions.MaxFiles, "rotated activity log files kept")
	fs.DurationVar(&c.ActivityRetention, "activity-retention", activity.DefaultOptions.Retention, "how long a rotated activity log file is kept (0: until --activity-max-files pushes it out)")
}

// activityOptions are the activity log's options from c; a config built
// without flags (MaxBytes 0) gets the defaults.
func (c *config) activityOptions() activity.Options {
	if c.ActivityMaxBytes == 0 {
		return activity.DefaultOptions
	}
	return activity.Options{MaxBytes: int64(c.ActivityMaxBytes), MaxFiles: c.ActivityMaxFiles, Retention: c.ActivityRetention}
}

// activityRecorder writes every call's entry to the log and the metrics;
// it tells the service log when the activity log starts failing and when
// it recovers, once each.
type activityRecorder struct {
	log     *activity.Log
	metrics *callMetrics
	slog    *slog.Logger
	failing atomic.Bool
}

func (r *activityRecorder) record(e activity.Entry) {
	r.metrics.observe(e)
	r.log.Append(e)
	err := r.log.Err()
	switch {
	case err != nil && !r.failing.Swap(true):
		r.slog.Error("the activity log cannot be written; calls go on unrecorded", "dir", r.log.Dir(), "err", err)
	case err == nil && r.failing.Swap(false):
		r.slog.Info("the activity log is written again", "dir", r.log.Dir())
	}
}

// openActivity opens the activity log in the state directory. A log that
// cannot be written yet is no error (the record says so); bad settings are.
func openActivity(c *config, log *slog.Logger) (*activityRecorder, error) {
	l, err := activity.Open(activityDir(c.StateDir), c.activityOptions())
	if err != nil {
		return nil, fmt.Errorf("--activity-max-bytes, --activity-max-files, --activity-retention: %w", err)
	}
	r := &activityRecorder{log: l, metrics: newCallMetrics(), slog: log}
	if err := l.Err(); err != nil {
		r.failing.Store(true)
		log.Error("the activity log cannot be written; calls go on unrecorded", "dir", l.Dir(), "err", err)
	}
	return r, nil
}

// degraded names the activity log to /readyz while it cannot be written.
func (r *activityRecorder) degraded() []string {
	if r.log.Err() != nil {
		return []string{"activity_log"}
	}
	return nil
}

// health is the log's health for joplin_status.
func (r *activityRecorder) health() (bool, uint64) { return r.log.Err() == nil, r.log.Failures() }

// runActivity prints the activity log: `notebridge activity [--since D]
// [--grant ID] [--tool NAME] [--note ID] [--notebook ID] [--limit N] [--json]`.
func runActivity(args []string, stdout, stderr io.Writer) error {
	var stateDir, grant, tool, note, notebook string
	var since time.Duration
	var limit int
	var asJSON bool
	fs := flag.NewFlagSet("activity", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&stateDir, "state-dir", defaultStateDir(), "directory holding the activity log")
	fs.DurationVar(&since, "since", 0, "only calls within this duration (such as 24h); 0: all")
	fs.StringVar(&grant, "grant", "", "only calls of this OAuth grant id, or this credential (token:mcp, token:actions, stdio)")
	fs.StringVar(&tool, "tool", "", "only calls of this operation")
	fs.StringVar(&note, "note", "", "only calls that read or changed this note id")
	fs.StringVar(&notebook, "notebook", "", "only calls that read or changed this notebook id")
	fs.IntVar(&limit, "limit", 0, "at most this many entries, newest first; 0: all")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per line")
	if err := parse(fs, args); err != nil {
		return err
	}
	if since < 0 || limit < 0 {
		return errors.New("--since and --limit must not be negative")
	}
	f := activity.Filter{Grant: grant, Tool: tool, Note: note, Notebook: notebook, Limit: limit}
	if since > 0 {
		f.Since = time.Now().Add(-since)
	}
	entries, err := activity.ReadDir(activityDir(stateDir), f)
	if err != nil {
		return err
	}
	if asJSON {
		return printActivityJSON(stdout, entries)
	}
	return printActivityTable(stdout, entries)
}

func printActivityJSON(w io.Writer, entries []activity.Entry) error {
	for _, e := range entries {
		b, err := e.MarshalJSON()
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	}
	return nil
}

// printActivityTable prints one line per call, newest first.
func printActivityTable(w io.Writer, entries []activity.Entry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSURFACE\tCREDENTIAL\tTOOL\tOUTCOME\tMS\tOBJECTS\tRECEIPT")
	for _, e := range entries {
		receipt := "-"
		if e.Receipt != nil {
			receipt = *e.Receipt
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\n", e.Time.Local().Format("2006-01-02 15:04:05"), e.Surface, e.Credential,
			e.Tool, e.Outcome, e.DurationMS, objects(e), receipt)
	}
	return tw.Flush()
}

// objects names an entry's ids briefly: "note:abc… (+2)".
func objects(e activity.Entry) string {
	var parts []string
	for _, k := range []struct {
		name string
		ids  []string
	}{{"note", e.Notes}, {"notebook", e.Notebooks}, {"tag", e.Tags}, {"resource", e.Resources}} {
		switch len(k.ids) {
		case 0:
		case 1:
			parts = append(parts, k.name+":"+k.ids[0])
		default:
			parts = append(parts, fmt.Sprintf("%s:%s(+%d)", k.name, k.ids[0], len(k.ids)-1))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}
