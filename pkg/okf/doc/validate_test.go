package doc

import (
	"strings"
	"testing"
)

func TestCheckCodes(t *testing.T) {
	const gen = "generated: { by: agent/v1, at: 2026-06-30T14:00:00Z }\n"
	tests := []struct {
		name  string
		src   string
		code  string // expected code ("" means no problems at all)
		sev   Severity
		field string
	}{
		{"clean minimal", "---\ntype: Metric\n---\n", "", "", ""},
		{"clean full", "---\ntype: Metric\ntitle: T\ndescription: D\nresource: https://x\ntags: [a, b]\n" + gen +
			"verified:\n  - { by: human:a, at: 2026-06-30T14:00:00+02:00 }\nstatus: deprecated\nstale_after: 2026-12-31\n---\nText.\n", "", "", ""},
		{"missing frontmatter", "# Just markdown\n", "missing_frontmatter", SeverityError, ""},
		{"missing type", "---\ntitle: T\n---\n", "missing_type", SeverityError, "type"},
		{"empty type", "---\ntype: \"\"\n---\n", "missing_type", SeverityError, "type"},
		{"blank type", "---\ntype: '   '\n---\n", "missing_type", SeverityError, "type"},
		{"null type", "---\ntype:\n---\n", "missing_type", SeverityError, "type"},
		{"list type", "---\ntype: [A]\n---\n", "missing_type", SeverityError, "type"},
		{"mapping type", "---\ntype: {a: b}\n---\n", "missing_type", SeverityError, "type"},
		{"bad title", "---\ntype: A\ntitle: [x]\n---\n", "bad_title", SeverityWarning, "title"},
		{"bad description", "---\ntype: A\ndescription: {a: b}\n---\n", "bad_description", SeverityWarning, "description"},
		{"bad resource", "---\ntype: A\nresource: ~\n---\n", "bad_resource", SeverityWarning, "resource"},
		{"bad tags string", "---\ntype: A\ntags: a, b\n---\n", "bad_tags", SeverityWarning, "tags"},
		{"bad tags nested", "---\ntype: A\ntags: [a, [b]]\n---\n", "bad_tags", SeverityWarning, "tags"},
		{"bad sources", "---\ntype: A\nsources: {id: a}\n---\n", "bad_sources", SeverityWarning, "sources"},
		{"bad sources entry", "---\ntype: A\nsources: [https://x]\n---\n", "bad_sources", SeverityWarning, "sources[0]"},
		{"bad usage_count", "---\ntype: A\nsources:\n  - { resource: r, usage_count: many }\n---\n", "bad_sources", SeverityWarning, "sources[0].usage_count"},
		{"negative usage_count", "---\ntype: A\nsources:\n  - { resource: r, usage_count: -1 }\n---\n", "bad_sources", SeverityWarning, "sources[0].usage_count"},
		{"source missing resource", "---\ntype: A\nsources:\n  - { resource: r }\n  - { id: x, title: t }\n---\n", "source_missing_resource", SeverityWarning, "sources[1].resource"},
		{"duplicate source id", "---\ntype: A\nsources:\n  - { id: x, resource: r }\n  - { id: x, resource: s }\n---\n", "duplicate_source_id", SeverityWarning, "sources[1].id"},
		{"bad generated scalar", "---\ntype: A\ngenerated: agent/v1\n---\n", "bad_generated", SeverityWarning, "generated"},
		{"bad generated missing by", "---\ntype: A\ngenerated: { at: 2026-06-30T14:00:00Z }\n---\n", "bad_generated", SeverityWarning, "generated.by"},
		{"bad verified scalar", "---\ntype: A\nverified: human:a\n---\n", "bad_verified", SeverityWarning, "verified"},
		{"bad verified entry", "---\ntype: A\nverified:\n  - human:a\n---\n", "bad_verified", SeverityWarning, "verified[0]"},
		{"bad verified missing at", "---\ntype: A\nverified: { by: human:a }\n---\n", "bad_verified", SeverityWarning, "verified.at"},
		{"bad verified missing by", "---\ntype: A\nverified:\n  - { at: 2026-06-30T14:00:00Z }\n---\n", "bad_verified", SeverityWarning, "verified[0].by"},
		{"bad actor generated", "---\ntype: A\ngenerated: { by: Jane Doe }\n---\n", "bad_actor", SeverityWarning, "generated.by"},
		{"bad actor empty id", "---\ntype: A\nverified: { by: 'human:', at: 2026-06-30T14:00:00Z }\n---\n", "bad_actor", SeverityWarning, "verified.by"},
		{"bad actor team not allowed for by", "---\ntype: A\nverified: { by: team:x, at: 2026-06-30T14:00:00Z }\n---\n", "bad_actor", SeverityWarning, "verified.by"},
		{"bad actor url", "---\ntype: A\ngenerated: { by: 'https://x/y' }\n---\n", "bad_actor", SeverityWarning, "generated.by"},
		{"bad actor author", "---\ntype: A\nsources:\n  - { resource: r, author: Google }\n---\n", "bad_actor", SeverityWarning, "sources[0].author"},
		{"bad status", "---\ntype: A\nstatus: Stable\n---\n", "bad_status", SeverityWarning, "status"},
		{"bad status list", "---\ntype: A\nstatus: [draft]\n---\n", "bad_status", SeverityWarning, "status"},
		{"bad temporal stale_after", "---\ntype: A\nstale_after: 2026-02-30\n---\n", "bad_temporal", SeverityWarning, "stale_after"},
		{"bad temporal no offset", "---\ntype: A\nstale_after: 2026-06-30T14:00:00\n---\n", "bad_temporal", SeverityWarning, "stale_after"},
		{"bad temporal last_modified", "---\ntype: A\nsources:\n  - { resource: r, last_modified: last week }\n---\n", "bad_temporal", SeverityWarning, "sources[0].last_modified"},
		{"bad temporal window", "---\ntype: A\nusage_window: { from: 2026-06-01, to: June }\n---\n", "bad_temporal", SeverityWarning, "usage_window.to"},
		{"bad temporal generated date", "---\ntype: A\ngenerated: { by: agent/v1, at: 2026-06-30 }\n---\n", "bad_temporal", SeverityWarning, "generated.at"},
		{"bad temporal verified", "---\ntype: A\nverified:\n  - { by: human:a, at: 2026-06-30T14:00 }\n---\n", "bad_temporal", SeverityWarning, "verified[0].at"},
		{"mixed profile", "---\ntype: A\nstale_after: 2026-12-31\nusage_window: { from: 2026-06-01T00:00:00Z, to: 2026-06-30T00:00:00Z }\n---\n", "mixed_temporal_profile", SeverityWarning, ""},
		{"legacy timestamp", "---\ntype: A\ntimestamp: '2026-05-28T22:53:05+00:00'\n---\n", "legacy_timestamp", SeverityWarning, "timestamp"},
		{"legacy citations", "---\ntype: A\n---\n# Overview\n\n# Citations\n- https://x\n", "legacy_citations", SeverityWarning, ""},
		{"attested missing runtime", "---\ntype: Attested Computation\n---\n", "attested_missing_runtime", SeverityWarning, "runtime"},
		{"attested empty runtime", "---\ntype: Attested Computation\nruntime: ''\n---\n", "attested_missing_runtime", SeverityWarning, "runtime"},
		{"bad runtime", "---\ntype: A\nruntime: [bq]\n---\n", "bad_runtime", SeverityWarning, "runtime"},
		{"bad parameters", "---\ntype: A\nparameters: {name: x}\n---\n", "bad_parameters", SeverityWarning, "parameters"},
		{"bad parameters entry", "---\ntype: A\nparameters: [year]\n---\n", "bad_parameters", SeverityWarning, "parameters[0]"},
		{"bad parameters name", "---\ntype: A\nparameters:\n  - { type: integer }\n---\n", "bad_parameters", SeverityWarning, "parameters[0].name"},
		{"bad parameters required", "---\ntype: A\nparameters:\n  - { name: y, required: maybe }\n---\n", "bad_parameters", SeverityWarning, "parameters[0].required"},
		{"bad computation", "---\ntype: A\ncomputation: {sql: x}\n---\n", "bad_computation", SeverityWarning, "computation"},
		{"bad executor", "---\ntype: A\nexecutor: skills/run.md\n---\n", "bad_executor", SeverityWarning, "executor"},
		{"bad executor receipt", "---\ntype: A\nexecutor: { resource: r, receipt: job_id }\n---\n", "bad_executor", SeverityWarning, "executor.receipt"},
		{"bad attester", "---\ntype: A\nattester: { receipt: [a] }\n---\n", "bad_attester", SeverityWarning, "attester.resource"},
		{"unknown footnote", "---\ntype: A\nsources:\n  - { id: known, resource: r }\n---\nA[^known] B[^unknown]\n\n[^known]: k\n", "unknown_footnote", SeverityWarning, "sources"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustParse(t, tt.src)
			probs := Check(d)
			if tt.code == "" {
				if len(probs) != 0 {
					t.Fatalf("Check = %+v, want none", probs)
				}
				return
			}
			found := false
			for _, p := range probs {
				if p.Code == tt.code {
					found = true
					if p.Severity != tt.sev || p.Field != tt.field {
						t.Errorf("problem = %+v, want severity %s field %q", p, tt.sev, tt.field)
					}
				}
				if p.Message == "" {
					t.Errorf("empty message: %+v", p)
				}
				// Messages are fixed text and never echo values.
				for _, v := range []string{"Jane", "Google", "unknown", "last week", "June", "2026", "https://x"} {
					if strings.Contains(p.Message, v) {
						t.Errorf("message echoes value %q: %+v", v, p)
					}
				}
			}
			if !found {
				t.Fatalf("Check = %+v, want code %s", probs, tt.code)
			}
			if tt.sev == SeverityWarning {
				for _, p := range probs {
					if p.Severity == SeverityError {
						t.Errorf("unexpected error: %+v", p)
					}
				}
			}
		})
	}
}

func TestValidActor(t *testing.T) {
	tests := []struct {
		s      string
		author bool
		want   bool
	}{
		{"human:ahormati", false, true},
		{"human:kliu@acme", false, true},
		{"process:finance-nightly", false, true},
		{"reference_agent/gemini-2.5-pro", false, true},
		{"ollama/llama3:8b", false, true},
		{"team:data-platform", false, false},
		{"team:data-platform", true, true},
		{"agent:x", true, true},
		{"human:", false, false},
		{"human: a", false, false},
		{"/v1", false, false},
		{"agent/", false, false},
		{"noslash", false, false},
		{"a:b/c", false, false},
		{"", true, false},
	}
	for _, tt := range tests {
		if got := validActor(tt.s, tt.author); got != tt.want {
			t.Errorf("validActor(%q, %v) = %v, want %v", tt.s, tt.author, got, tt.want)
		}
	}
}

func TestCheckBodyOmitted(t *testing.T) {
	src := "---\ntype: A\n---\n# Citations\n- x\nA[^nope]\n"
	d, err := ParseFrontmatterOnly(strings.NewReader(src), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if probs := Check(d); len(probs) != 0 {
		t.Fatalf("Check on body-omitted doc = %+v", probs)
	}
	if probs := Check(mustParse(t, src)); len(probs) != 2 {
		t.Fatalf("Check on full doc = %+v, want 2 problems", probs)
	}
}
