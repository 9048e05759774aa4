package doc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestZZCorpusTiming(t *testing.T) {
	dir := os.Getenv("CORPUS")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		lines := strings.Split(string(b), "\n")
		s, err := strconv.Unquote(strings.TrimPrefix(lines[1], "[]byte("[:0]))
		_ = s
		if err != nil {
			q := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
			s, err = strconv.Unquote(q)
			if err != nil {
				t.Logf("skip %s: %v", e.Name(), err)
				continue
			}
		}
		st := time.Now()
		fastParse([]byte(s))
		d1 := time.Since(st)
		st = time.Now()
		slowParse([]byte(s))
		d2 := time.Since(st)
		if d1 > 5*time.Millisecond || d2 > 5*time.Millisecond {
			t.Logf("%s fast=%v slow=%v len=%d", e.Name(), d1, d2, len(s))
		}
	}
}
