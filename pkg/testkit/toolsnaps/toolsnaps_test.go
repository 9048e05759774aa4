package toolsnaps

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder keeps what Check reports instead of failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	snaps := []Snap{
		{Name: "a", JSON: json.RawMessage(`{"name":"a","inputSchema":{"type":"object","properties":{"q":{"type":"string","maxLength":200}}}}`)},
		{Name: "b", JSON: json.RawMessage(`{"name":"b"}`)},
		Names("_order", []string{"a", "b"}),
	}
	Check(t, dir, snaps, true, "cmd")
	r := &recorder{TB: t}
	if Check(r, dir, snaps, false, "cmd"); len(r.errs) != 0 {
		t.Fatalf("fresh snapshots fail: %v", r.errs)
	}

	// One tool moves, one is missing, one file stands for no tool.
	changed := []Snap{
		{Name: "a", JSON: json.RawMessage(`{"name":"a","inputSchema":{"type":"object","properties":{"q":{"type":"string","maxLength":300},"r":{"type":"integer"}}}}`)},
		{Name: "c", JSON: json.RawMessage(`{"name":"c"}`)},
		Names("_order", []string{"a", "c"}),
	}
	r = &recorder{TB: t}
	Check(r, dir, changed, false, "cmd")
	got := strings.Join(r.errs, "\n")
	for _, want := range []string{
		"a.json drifted",
		"~ inputSchema.properties.q.maxLength: 200 → 300",
		`+ inputSchema.properties.r: {"type":"integer"}`,
		"missing snapshot " + filepath.Join(dir, "c.json"),
		filepath.Join(dir, "b.json") + ": no tool stands for this snapshot",
		`~ [1]: "b" → "c"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "b.json drifted") {
		t.Errorf("an unchanged tool is reported:\n%s", got)
	}

	// -update leaves exactly the new snapshots.
	Check(t, dir, changed, true, "cmd")
	if _, err := os.Stat(filepath.Join(dir, "b.json")); !os.IsNotExist(err) {
		t.Errorf("the stale snapshot stays: %v", err)
	}
	r = &recorder{TB: t}
	if Check(r, dir, changed, false, "cmd"); len(r.errs) != 0 {
		t.Fatalf("updated snapshots fail: %v", r.errs)
	}
}

func TestDiffKeyOrder(t *testing.T) {
	if d := Diff([]byte(`{"a":1,"b":2}`), []byte(`{"b":2,"a":1}`)); !strings.Contains(d, "keys in another order") {
		t.Errorf("key order: %s", d)
	}
	if d := Diff([]byte(`[1,2,3]`), []byte(`[1]`)); !strings.Contains(d, "- [1]: 2") || !strings.Contains(d, "- [2]: 3") {
		t.Errorf("shorter array: %s", d)
	}
}
