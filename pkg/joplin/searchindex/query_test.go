package searchindex

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

var now = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)

func TestParseMalformed(t *testing.T) {
	for query, want := range map[string]string{
		`"open phrase`:            "unbalanced double quote",
		`   `:                     "empty",
		`tag:`:                    "tag: filter has no value",
		`any:2 cat`:               "any: takes 0 or 1",
		`created:2020-01-01`:      "created:2020-01-01",
		`created:20201399`:        "not a date",
		`type:memo`:               "type: takes note or todo",
		`iscompleted:yes`:         "iscompleted: takes 0 or 1",
		`title:***`:               "title: filter has no word",
		`*`:                       "no term or filter",
		strings.Repeat("a ", 65):  "more than 64",
		"bad \xff":                "UTF-8",
		strings.Repeat("x", 4001): "longer than 4000",
	} {
		_, err := Parse(query, now)
		de, ok := domainerr.As(err)
		if !ok || de.Code != domainerr.InvalidArgument || !strings.Contains(de.Message, want) {
			t.Errorf("Parse(%.30q) = %v, want INVALID_ARGUMENT naming %q", query, err, want)
		}
	}
}

func TestParseUnsupported(t *testing.T) {
	for _, q := range []string{`resource:image/png`, `cat sourceurl:*example.org`, `/"- [ ]"`, `-latitude:40`} {
		_, err := Parse(q, now)
		var u *ErrUnsupported
		if !errors.As(err, &u) {
			t.Errorf("Parse(%q) = %v, want ErrUnsupported", q, err)
		}
	}
}

func TestParseShapes(t *testing.T) {
	q, err := Parse(`any:1 Café "Shopping List" -spam title:hello body:wor* tag:office -notebook:"Old Stuff" created:202001 updated:day-2 type:todo iscompleted:0 unknown:thing`, now)
	if err != nil {
		t.Fatal(err)
	}
	if !q.Any {
		t.Error("any:1 not seen")
	}
	got := []string{}
	for _, t := range q.Terms {
		s := t.Field + "=" + strings.Join(t.Tokens, "+")
		if t.Negate {
			s = "-" + s
		}
		got = append(got, s)
	}
	if want := "=café,=shopping+list,-=spam,title=hello,body=wor,=unknown+thing"; strings.Join(got, ",") != want {
		t.Errorf("terms %s, want %s", strings.Join(got, ","), want)
	}
	if len(q.Filters) != 6 || q.Filters[1].Value != "Old Stuff" || !q.Filters[1].Negate {
		t.Errorf("filters %+v", q.Filters)
	}
	if want := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(); q.Filters[2].Time != want {
		t.Errorf("created:202001 = %d, want %d", q.Filters[2].Time, want)
	}
	if want := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC).UnixMilli(); q.Filters[3].Time != want {
		t.Errorf("updated:day-2 = %d, want %d", q.Filters[3].Time, want)
	}
}

// FuzzParse: any input either parses into a query the index can run, or
// fails with INVALID_ARGUMENT or ErrUnsupported; it never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`cat`, `"a b" -c`, `title:"x y*"`, `tag:a* notebook:b any:1`, `created:day-3`, `-due:week+1`, `"`, `-`, `a:b:c`, `""`, `- -`} {
		f.Add(s)
	}
	ix := openTest(f)
	f.Fuzz(func(t *testing.T, s string) {
		q, err := Parse(s, now)
		if err != nil {
			var u *ErrUnsupported
			if de, ok := domainerr.As(err); (!ok || de.Code != domainerr.InvalidArgument) && !errors.As(err, &u) {
				t.Fatalf("Parse(%q): unexpected error %v", s, err)
			}
			return
		}
		if _, err := ix.Search(t.Context(), q, Options{Limit: 5}); err != nil {
			t.Fatalf("Search(%q) after a clean parse: %v", s, err)
		}
	})
}
