package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/statebackup"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/identity"

	_ "modernc.org/sqlite" // the search index's driver, for VACUUM INTO
)

// runBackup is `notebridge backup FILE`: an archive of the state
// directory, taken while the bridge runs.
func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", defaultStateDir(), "the state directory to back up")
	withIndex := fs.Bool("with-index", false, "include the search index (otherwise rebuilt after a restore)")
	archive, err := fileArg(fs, args, "backup needs one argument: the archive to write, or - for stdout")
	if err != nil {
		return err
	}
	report, shown := stdout, archive
	if archive == "-" {
		// The archive goes to stdout once it is whole; the report to stderr.
		dir, err := os.MkdirTemp("", "notebridge-backup-")
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		defer os.RemoveAll(dir)
		archive, report, shown = filepath.Join(dir, "backup.tar.gz"), stderr, "the archive to stdout"
		defer func() {
			if err == nil {
				err = copyOut(archive, stdout)
			}
		}()
	}
	locks, _ := filepath.Glob(filepath.Join(*stateDir, "locks", "joplin-*.lock"))
	locks = append(locks, filepath.Join(*stateDir, "oauth", "state.json.lock"), filepath.Join(activityDir(*stateDir), "activity.lock"))
	m, err := statebackup.Write(ctx, *stateDir, archive, statebackup.Options{
		Locks: locks, WithIndex: *withIndex,
		Index:     func(rel string) bool { return strings.HasPrefix(rel, "search/") && strings.HasSuffix(rel, ".db") },
		CopyIndex: vacuumInto,
	})
	if err != nil {
		return err
	}
	var total int64
	for _, f := range m.Files {
		total += f.Size
	}
	_, err = fmt.Fprintf(report, "wrote %s: %d files, %d bytes of state (search index %s)\n", shown, len(m.Files), total, map[bool]string{true: "included", false: "left out: rebuilt on start"}[*withIndex])
	return err
}

// fileArg parses args, whose one positional argument, the archive, comes
// first or last.
func fileArg(fs *flag.FlagSet, args []string, missing string) (string, error) {
	var file string
	positional := func(a string) bool { return a == "-" || !strings.HasPrefix(a, "-") }
	switch n := len(args); {
	case n > 0 && positional(args[0]):
		file, args = args[0], args[1:]
	case n > 0 && positional(args[n-1]):
		file, args = args[n-1], args[:n-1]
	}
	if err := parse(fs, args); err != nil {
		return "", err
	}
	if file == "" {
		return "", usageError(missing)
	}
	return file, nil
}

// vacuumInto copies the SQLite database src to dst consistently while
// the bridge writes it.
func vacuumInto(ctx context.Context, src, dst string) error {
	db, err := sql.Open("sqlite", "file:"+src+"?mode=ro&_pragma=busy_timeout(30000)")
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `VACUUM INTO ?`, dst)
	return err
}

// runRestore is `notebridge restore FILE`: the state of a backup put in
// place of an empty (or, with --replace, the present) state directory,
// after checking that the Joplin configured is the one it served.
func runRestore(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", defaultStateDir(), "the state directory to restore into")
	replace := fs.Bool("replace", false, "keep what the state directory holds aside (before-restore-*/) instead of refusing")
	other := fs.Bool("other-joplin", false, "restore although the Joplin configured is not the backup's, or cannot be checked; the bridge then records the Joplin it meets")
	joplinURL := fs.String("joplin-url", joplin.DefaultBaseURL, "the Joplin the restored bridge will serve")
	tokenFile := fs.String("joplin-token-file", "", "file holding its API token")
	archive, err := fileArg(fs, args, "restore needs one argument: the archive to read, or - for stdin")
	if err != nil {
		return err
	}
	if archive == "-" {
		dir, err := os.MkdirTemp("", "notebridge-restore-")
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		defer os.RemoveAll(dir)
		archive = filepath.Join(dir, "backup.tar.gz")
		if err := copyIn(stdin, archive); err != nil {
			return err
		}
	}
	check := func(extracted string) error {
		if _, err := os.Stat(filepath.Join(extracted, identity.FileName)); errors.Is(err, os.ErrNotExist) {
			return nil // the bridge records the Joplin it meets
		}
		err := sameJoplin(ctx, extracted, *joplinURL, *tokenFile)
		if err == nil {
			return nil
		}
		if !*other {
			return fmt.Errorf("restore: %w; nothing was changed (pass --other-joplin to restore anyway: the bridge then serves the Joplin configured now)", err)
		}
		fmt.Fprintf(stderr, "restore: %v; restoring anyway (--other-joplin): the bridge records the Joplin it meets\n", err)
		_, ferr := identity.Forget(extracted)
		return ferr
	}
	m, err := statebackup.Restore(archive, *stateDir, statebackup.RestoreOptions{Replace: *replace, Check: check, Ignore: []string{archive}})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "restored %d files of the backup made %s into %s; start the bridge\n", len(m.Files), m.Created.Format(time.RFC3339), *stateDir)
	return err
}

// sameJoplin checks the identity recorded in stateDir against the Joplin
// at url, as the bridge's guard does on its first request.
func sameJoplin(ctx context.Context, stateDir, url, tokenFile string) error {
	jc, err := joplin.New(joplin.Config{BaseURL: url, TokenFile: tokenFile, AvailabilityWait: 30 * time.Second})
	if err != nil {
		return fmt.Errorf("the Joplin to check against: %w", err)
	}
	err = identity.New(jc, stateDir, slog.New(slog.DiscardHandler)).Check(ctx)
	var derr *domainerr.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &derr) && derr.Code == domainerr.JoplinChanged:
		return errors.New("the backup is of another Joplin than the one at " + url)
	}
	return fmt.Errorf("the Joplin at %s could not be checked: %w", url, err)
}

// copyOut writes the file at path to w.
func copyOut(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("backup: write the archive to stdout: %w", err)
	}
	return nil
}

// copyIn stores r at path (0600).
func copyIn(r io.Reader, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("restore: read the archive from stdin: %w", err)
	}
	return nil
}
