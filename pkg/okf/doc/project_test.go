package doc

import (
	"encoding/json"
	"reflect"
	"testing"
)

func mustParse(t testing.TB, src string) *Document {
	t.Helper()
	d, err := Parse([]byte(src), Limits{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return d
}

const revenueDoc = `---
type: Attested Computation
title: Revenue for fiscal year
description: "Recognized revenue, per Finance."
tags: [finance, revenue]
status: stable
runtime: bigquery
parameters:
  - { name: year, type: integer, required: true }
  - { name: region, type: string }
computation: references/computations/revenue.sql
executor:
  resource: references/skills/run-on-bq.md
  receipt: [job_id, executed_sql, result]
attester:
  resource: references/attesters/sql-equality.py
generated: { by: reference_agent/gemini-2.5-pro, at: 2026-06-28T14:00:00Z }
verified: { by: human:ahormati, at: 2026-06-25T09:00:00Z }
stale_after: 2026-12-31
sources:
  - id: rev-policy
    resource: https://wiki.acme/finance/revenue-recognition
    title: Revenue recognition policy
    author: team:finance-fpa
    last_modified: 2026-04-02
  - id: exec-rev-dash
    resource: dashboards/exec-revenue
    usage_count: 5_000
    usage_window: { from: 2026-05-01, to: 2026-05-31 }
usage_window: { from: 2026-06-01, to: 2026-06-30 }
x-custom: { kept: true }
---

Revenue.[^rev-policy]

[^rev-policy]: Revenue recognition policy
`

func TestProjectFull(t *testing.T) {
	p := mustParse(t, revenueDoc).Project()
	n5000 := int64(5000)
	want := Projection{
		Type:        "Attested Computation",
		Title:       "Revenue for fiscal year",
		Description: "Recognized revenue, per Finance.",
		Tags:        []string{"finance", "revenue"},
		Sources: []Source{
			{ID: "rev-policy", Resource: "https://wiki.acme/finance/revenue-recognition", Title: "Revenue recognition policy", Author: "team:finance-fpa", LastModified: "2026-04-02"},
			{ID: "exec-rev-dash", Resource: "dashboards/exec-revenue", UsageCount: &n5000, UsageWindow: &Window{From: "2026-05-01", To: "2026-05-31"}},
		},
		UsageWindow: &Window{From: "2026-06-01", To: "2026-06-30"},
		Generated:   &Actorstamp{By: "reference_agent/gemini-2.5-pro", At: "2026-06-28T14:00:00Z"},
		Verified:    []Actorstamp{{By: "human:ahormati", At: "2026-06-25T09:00:00Z"}},
		TrustTier:   TierHumanReviewClaimed,
		Status:      "stable",
		StaleAfter:  "2026-12-31",
		Runtime:     "bigquery",
		Parameters:  []Parameter{{Name: "year", Type: "integer", Required: true}, {Name: "region", Type: "string"}},
		Computation: "references/computations/revenue.sql",
		Executor:    &ResourceRef{Resource: "references/skills/run-on-bq.md", Receipt: []string{"job_id", "executed_sql", "result"}},
		Attester:    &ResourceRef{Resource: "references/attesters/sql-equality.py"},
	}
	if !reflect.DeepEqual(p, want) {
		gj, _ := json.MarshalIndent(p, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("Project mismatch\ngot  %s\nwant %s", gj, wj)
	}
	if probs := Check(mustParse(t, revenueDoc)); len(probs) != 0 {
		t.Fatalf("Check = %+v, want none", probs)
	}
}

func TestProjectVerifiedAndTiers(t *testing.T) {
	tests := []struct {
		name     string
		verified string
		want     []Actorstamp
		tier     string
	}{
		{"absent", "", nil, TierUnverified},
		{"bare mapping", "verified: { by: human:a, at: 2026-06-25T09:00:00Z }\n", []Actorstamp{{By: "human:a", At: "2026-06-25T09:00:00Z"}}, TierHumanReviewClaimed},
		{"bare mapping machine", "verified: { by: process:nightly, at: 2026-06-25T09:00:00Z }\n", []Actorstamp{{By: "process:nightly", At: "2026-06-25T09:00:00Z"}}, TierMachineConfirmed},
		{"list machine only", "verified:\n  - { by: process:nightly, at: 2026-06-26T02:00:00Z }\n  - { by: agent/v1, at: 2026-06-27T02:00:00Z }\n",
			[]Actorstamp{{By: "process:nightly", At: "2026-06-26T02:00:00Z"}, {By: "agent/v1", At: "2026-06-27T02:00:00Z"}}, TierMachineConfirmed},
		{"list with human", "verified:\n  - { by: process:nightly, at: 2026-06-26T02:00:00Z }\n  - { by: human:kliu@acme, at: 2026-06-25T09:00:00Z }\n",
			[]Actorstamp{{By: "process:nightly", At: "2026-06-26T02:00:00Z"}, {By: "human:kliu@acme", At: "2026-06-25T09:00:00Z"}}, TierHumanReviewClaimed},
		{"empty list", "verified: []\n", nil, TierUnverified},
		{"scalar", "verified: yes\n", nil, TierUnverified},
		{"entry without by dropped", "verified:\n  - { at: 2026-06-26T02:00:00Z }\n  - oops\n", nil, TierUnverified},
		{"human prefix must be exact", "verified: { by: humans/v1, at: 2026-06-25T09:00:00Z }\n", []Actorstamp{{By: "humans/v1", At: "2026-06-25T09:00:00Z"}}, TierMachineConfirmed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, "---\ntype: A\n"+tt.verified+"---\n").Project()
			if !reflect.DeepEqual(p.Verified, tt.want) {
				t.Errorf("Verified = %+v, want %+v", p.Verified, tt.want)
			}
			if p.TrustTier != tt.tier {
				t.Errorf("TrustTier = %s, want %s", p.TrustTier, tt.tier)
			}
		})
	}
}

func TestProjectWrongShapesAndDefaults(t *testing.T) {
	src := `---
type: [not, a, string]
title: 1984
description: ~
resource: {a: b}
tags: just-a-string
sources: nope
generated: human:a
status: [draft]
stale_after: 2026-06-30
timestamp: '2026-05-28T22:53:05+00:00'
executor: references/skills/run.md
parameters: {name: x}
---
`
	p := mustParse(t, src).Project()
	want := Projection{
		Title:           "1984",
		TrustTier:       TierUnverified,
		Status:          "stable",
		StaleAfter:      "2026-06-30",
		LegacyTimestamp: "2026-05-28T22:53:05+00:00",
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("Project = %+v\nwant %+v", p, want)
	}
	if p := (&Document{}).Project(); p.Status != "stable" || p.TrustTier != TierUnverified {
		t.Fatalf("no-frontmatter projection = %+v", p)
	}
	if p := mustParse(t, "---\ntype: A\nstatus: draft\n---\n").Project(); p.Status != "draft" {
		t.Fatalf("Status = %q", p.Status)
	}
}

func TestProjectJSON(t *testing.T) {
	p := mustParse(t, "---\ntype: A\nsources:\n  - title: t\n---\n").Project()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"A","sources":[{"resource":"","title":"t"}],"trust_tier":"unverified","status":"stable"}`
	if string(b) != want {
		t.Fatalf("json = %s\nwant %s", b, want)
	}
}

func TestProjectRawScalars(t *testing.T) {
	src := "---\ntype: A\ngenerated: { by: x/1, at: 2026-06-30T14:00:00.500+05:30 }\nstale_after: \"2026-09-23\"\nsources:\n  - resource: r\n    usage_count: 0x10\n    last_modified: 2026-06-15T00:00:00Z\n---\n"
	p := mustParse(t, src).Project()
	if p.Generated.At != "2026-06-30T14:00:00.500+05:30" || p.StaleAfter != "2026-09-23" {
		t.Fatalf("raw values altered: %+v", p)
	}
	if p.Sources[0].UsageCount == nil || *p.Sources[0].UsageCount != 16 || p.Sources[0].LastModified != "2026-06-15T00:00:00Z" {
		t.Fatalf("source = %+v", p.Sources[0])
	}
}
