package domainerr

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

type match struct {
	ID      string `json:"id"`
	Trashed bool   `json:"trashed"`
}

// duplicates is the *_ALREADY_EXISTS error of a create with n matches.
func duplicates(n int) *Error {
	matches := make([]match, n)
	for i := range matches {
		matches[i] = match{ID: fmt.Sprintf("%032x", i), Trashed: i%2 == 0}
	}
	return New(NoteAlreadyExists, "a note with the same identity already exists; update it with update_note").
		WithDetails(map[string]any{"matches": matches, "update_tool": "update_note", "restore_tool": "restore_note"})
}

// decoded is the generic JSON form of an encoded error.
func decoded(t *testing.T, e *Error, maxBytes int) map[string]any {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxBytes {
		t.Fatalf("encoded error is %d bytes, over the bound %d", len(b), maxBytes)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("bounded error is not valid JSON: %v", err)
	}
	return m
}

func TestBoundCutsDetailListsWithACount(t *testing.T) {
	const maxBytes = 100_000
	orig := duplicates(3000)
	if b, _ := json.Marshal(orig); len(b) <= maxBytes {
		t.Fatalf("the fixture must exceed the bound: %d bytes", len(b))
	}
	m := decoded(t, orig.Bound(maxBytes), maxBytes)
	if m["code"] != "NOTE_ALREADY_EXISTS" || m["message"] != orig.Message || m["retryable"] != false {
		t.Fatalf("code, message or retryable changed: %v %v %v", m["code"], m["message"], m["retryable"])
	}
	d := m["details"].(map[string]any)
	kept := d["matches"].([]any)
	omitted := d["omitted"].(map[string]any)
	if d["truncated"] != true || d["update_tool"] != "update_note" || d["restore_tool"] != "restore_note" {
		t.Fatalf("details lost their markers or scalars: %v", d["truncated"])
	}
	if n := int(omitted["matches"].(float64)); n != 3000-len(kept) || len(kept) < 1000 {
		t.Fatalf("kept %d matches, omitted %d", len(kept), n)
	}
	if first := kept[0].(map[string]any); first["id"] != fmt.Sprintf("%032x", 0) || first["trashed"] != true {
		t.Fatalf("the kept matches are not the leading ones: %v", first)
	}
	if len(orig.Details["matches"].([]match)) != 3000 {
		t.Fatal("Bound changed the original error")
	}
}

func TestBoundLeavesSmallErrorsAlone(t *testing.T) {
	e := duplicates(3)
	if e.Bound(100_000) != e {
		t.Fatal("an error under the bound was replaced")
	}
	var nilErr *Error
	if nilErr.Bound(10) != nil {
		t.Fatal("nil error")
	}
}

func TestBoundFallsBackWhenListsAreNotTheProblem(t *testing.T) {
	const maxBytes = 2_000
	e := New(ValidationFailed, "%s", strings.Repeat("é", 600)).
		WithDetails(map[string]any{"blob": strings.Repeat("x", 5_000), "problems": []string{"a", "b"}})
	m := decoded(t, e.Bound(maxBytes), maxBytes)
	if d := m["details"].(map[string]any); len(d) != 1 || d["truncated"] != true {
		t.Fatalf("details: %v", d)
	}
	if m["code"] != "VALIDATION_FAILED" {
		t.Fatalf("code: %v", m["code"])
	}
	// A message too long for the bound is cut on a rune boundary.
	m = decoded(t, New(Internal, "%s", strings.Repeat("é", 3_000)).Bound(maxBytes), maxBytes)
	if msg := m["message"].(string); !strings.HasSuffix(msg, "…") || strings.ContainsRune(msg, 0xFFFD) {
		t.Fatalf("message not cut cleanly: %.40q", msg)
	}
}

func TestBoundCutsOnlyTheLongLists(t *testing.T) {
	const maxBytes = 1_000
	long := make([]string, 500)
	for i := range long {
		long[i] = fmt.Sprintf("problem-%03d", i)
	}
	e := New(InvalidArgument, "bad").WithDetails(map[string]any{"problems": long, "fields": long[:3]})
	d := decoded(t, e.Bound(maxBytes), maxBytes)["details"].(map[string]any)
	omitted := d["omitted"].(map[string]any)
	if _, cut := omitted["fields"]; cut || len(d["fields"].([]any)) != 3 {
		t.Fatalf("a short list was cut: %v", omitted)
	}
	if kept := len(d["problems"].([]any)); kept == 0 || int(omitted["problems"].(float64)) != 500-kept {
		t.Fatalf("problems: kept %d, omitted %v", kept, omitted["problems"])
	}
}
