package doc

import (
	"reflect"
	"testing"
)

func TestClassifyTemporal(t *testing.T) {
	tests := []struct {
		in   string
		want TemporalKind
	}{
		{"2026-06-30", TemporalDate},
		{"2024-02-29", TemporalDate},
		{"2000-02-29", TemporalDate},
		{"1900-02-29", TemporalInvalid},
		{"2026-02-29", TemporalInvalid},
		{"2026-02-30", TemporalInvalid},
		{"2026-04-31", TemporalInvalid},
		{"2026-13-01", TemporalInvalid},
		{"2026-00-10", TemporalInvalid},
		{"2026-01-00", TemporalInvalid},
		{"2026-6-30", TemporalInvalid},
		{"20260630", TemporalInvalid},
		{" 2026-06-30", TemporalInvalid},
		{"2026-06-30 ", TemporalInvalid},
		{"", TemporalInvalid},
		{"2026-06-30T14:00:00Z", TemporalInstant},
		{"2026-06-30T14:00:00+05:30", TemporalInstant},
		{"2026-06-30T14:00:00-08:00", TemporalInstant},
		{"2026-06-30T14:00:00+00:00", TemporalInstant},
		{"2026-06-30T14:00:00.5Z", TemporalInstant},
		{"2026-06-30T14:00:00.123456789+01:00", TemporalInstant},
		{"2026-06-30T14:00:00", TemporalInvalid},
		{"2026-06-30T14:00Z", TemporalInvalid},
		{"2026-06-30 14:00:00Z", TemporalInvalid},
		{"2026-06-30t14:00:00Z", TemporalInvalid},
		{"2026-06-30T14:00:00z", TemporalInvalid},
		{"2026-06-30T14:00:00.Z", TemporalInvalid},
		{"2026-06-30T24:00:00Z", TemporalInvalid},
		{"2026-06-30T14:60:00Z", TemporalInvalid},
		{"2026-06-30T14:00:60Z", TemporalInvalid},
		{"2026-06-30T14:00:00+0530", TemporalInvalid},
		{"2026-06-30T14:00:00+05", TemporalInvalid},
		{"2026-06-30T14:00:00+24:00", TemporalInvalid},
		{"2026-06-30T14:00:00+05:60", TemporalInvalid},
		{"2026-02-30T14:00:00Z", TemporalInvalid},
		{"2026-06-30T14:00:00ZZ", TemporalInvalid},
		{"2026-06-30T14:00:00Z\n", TemporalInvalid},
	}
	for _, tt := range tests {
		if got := ClassifyTemporal(tt.in); got != tt.want {
			t.Errorf("ClassifyTemporal(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestProfileFields(t *testing.T) {
	src := `---
type: A
stale_after: 2026-09-23T00:00:00Z
usage_window: { from: 2026-06-01, to: 2026-06-30T00:00:00 }
sources:
  - resource: a
    last_modified: 2026-05-30
  - not a mapping
  - resource: c
    last_modified: [x]
    usage_window: { from: 2026-04-01T00:00:00Z }
  - resource: d
    usage_window: yesterday
generated: { by: x/1, at: 2026-06-30 }
---
`
	got := mustParse(t, src).ProfileFields()
	want := []TemporalField{
		{Path: "stale_after", Value: "2026-09-23T00:00:00Z", Kind: TemporalInstant},
		{Path: "usage_window.from", Value: "2026-06-01", Kind: TemporalDate},
		{Path: "usage_window.to", Value: "2026-06-30T00:00:00", Kind: TemporalInvalid},
		{Path: "sources[0].last_modified", Value: "2026-05-30", Kind: TemporalDate},
		{Path: "sources[2].last_modified", Value: "", Kind: TemporalInvalid},
		{Path: "sources[2].usage_window.from", Value: "2026-04-01T00:00:00Z", Kind: TemporalInstant},
		{Path: "sources[3].usage_window", Value: "", Kind: TemporalInvalid},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ProfileFields =\n%+v\nwant\n%+v", got, want)
	}
	if f := mustParse(t, "no frontmatter\n").ProfileFields(); f != nil {
		t.Fatalf("ProfileFields without frontmatter = %+v", f)
	}
}
