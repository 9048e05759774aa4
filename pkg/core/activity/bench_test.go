package activity

import (
	"testing"
	"time"
)

// BenchmarkAppend writes one get_note-sized entry (one note id) to the log.
func BenchmarkAppend(b *testing.B) {
	l, err := Open(b.TempDir(), DefaultOptions)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	e := Entry{Time: time.Now().UTC(), Surface: SurfaceStdio, Credential: "stdio", Tool: "get_note", Outcome: OutcomeOK,
		DurationMS: 0.412, Notes: []string{"0123456789abcdef0123456789abcdef"}, Bytes: 2345}
	for b.Loop() {
		l.Append(e)
	}
	if err := l.Err(); err != nil {
		b.Fatal(err)
	}
}
