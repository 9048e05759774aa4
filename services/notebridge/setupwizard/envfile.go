package setupwizard

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// EnvFile is a compose .env file kept line by line, so that setting one
// key leaves every other line, comment and order as it was.
type EnvFile struct {
	lines []string
}

var (
	activeLine    = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=(.*)$`)
	commentedLine = regexp.MustCompile(`^#([A-Z][A-Z0-9_]*)=`)
)

// ReadEnv reads path; a missing file is an empty EnvFile.
func ReadEnv(path string) (*EnvFile, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &EnvFile{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return &EnvFile{}, nil
	}
	return &EnvFile{lines: strings.Split(s, "\n")}, nil
}

// Get is the value of key's active line, unquoted, and whether it has one.
func (e *EnvFile) Get(key string) (string, bool) {
	for _, l := range e.lines {
		if m := activeLine.FindStringSubmatch(l); m != nil && m[1] == key {
			return unquote(m[2]), true
		}
	}
	return "", false
}

// Set gives key the value: its active line is replaced, else its first
// commented-out line (#KEY=…) becomes active, else a line is appended.
func (e *EnvFile) Set(key, value string) {
	line := key + "=" + quote(value)
	for i, l := range e.lines {
		if m := activeLine.FindStringSubmatch(l); m != nil && m[1] == key {
			e.lines[i] = line
			return
		}
	}
	for i, l := range e.lines {
		if m := commentedLine.FindStringSubmatch(l); m != nil && m[1] == key {
			e.lines[i] = line
			return
		}
	}
	e.lines = append(e.lines, line)
}

// Unset comments key's active line out (#KEY=…), keeping it as a hint.
func (e *EnvFile) Unset(key string) {
	for i, l := range e.lines {
		if m := activeLine.FindStringSubmatch(l); m != nil && m[1] == key {
			e.lines[i] = "#" + l
		}
	}
}

// Bytes is the file's content.
func (e *EnvFile) Bytes() []byte {
	if len(e.lines) == 0 {
		return nil
	}
	return []byte(strings.Join(e.lines, "\n") + "\n")
}

// quote writes a value compose reads back unchanged: bare when it is
// plain, else in single quotes (compose takes their content literally).
func quote(v string) string {
	if regexp.MustCompile(`^[A-Za-z0-9_.,:/@+=-]*$`).MatchString(v) {
		return v
	}
	return "'" + v + "'"
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}
