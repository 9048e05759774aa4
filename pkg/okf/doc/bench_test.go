package doc

import (
	"bytes"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/okftest"
)

// benchConcept is a realistic ~2 KB v0.2 concept.
var benchConcept = []byte(`---
type: Attested Computation
title: Revenue for a fiscal year
description: Sanctioned SQL that produces the recognized-revenue figure for a given fiscal year, per Acme's FY2026 Revenue Recognition Policy.
tags: [finance, revenue, attested]
runtime: bigquery
parameters:
  - { name: year, type: integer, required: true }
executor:
  resource: skills/run-on-bq.md
  receipt: [job_id, executed_sql, result]
attester:
  resource: attesters/sql_equality.py
generated: { by: reference_agent/gemini-2.5-pro, at: 2026-06-30T14:00:00Z }
verified:
  - { by: human:jsmith@acme, at: 2026-07-01T09:00:00Z }
status: stable
stale_after: 2026-12-31T00:00:00Z
sources:
  - id: revenue-policy
    resource: policies/revenue-recognition.md
    title: Revenue Recognition Policy (FY2026)
    author: human:jsmith@acme
    last_modified: 2026-06-15T00:00:00Z
  - id: orders-table
    resource: tables/orders.md
    title: Customer Orders (BigQuery table)
    author: team:data-platform
    last_modified: 2026-07-01T00:00:00Z
---

# Computation

` + "```sql" + `
SELECT SUM(o.net_amount) AS revenue_usd
FROM ` + "`acme.sales.orders`" + ` AS o
WHERE o.order_status = 'delivered'
  AND EXTRACT(YEAR FROM o.order_ts) = @year
` + "```" + `

This computation implements the FY2026 Revenue Recognition Policy: [^revenue-policy]

1. **Recognition trigger:** ` + "`order_status = 'delivered'`" + ` and the 30-day return window has closed.
2. **Recognized amount:** ` + "`net_amount`" + ` (excludes shipping and tax).
3. **Currency:** non-USD orders convert at the ` + "`order_ts`" + ` daily rate.

# What the attester checks

The attester receives the receipt returned by [run-on-bq](../skills/run-on-bq.md) and verifies
provenance and fidelity against [orders](/tables/orders.md).

[^revenue-policy]: Revenue Recognition Policy (FY2026)
`)

func BenchmarkParseFrontmatterOnly(b *testing.B) {
	b.SetBytes(int64(len(benchConcept)))
	b.ReportAllocs()
	r := bytes.NewReader(benchConcept)
	for b.Loop() {
		r.Reset(benchConcept)
		d, err := ParseFrontmatterOnly(r, Limits{})
		if err != nil || d.Lookup("type") == nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	b.SetBytes(int64(len(benchConcept)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(benchConcept, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseProjectCheck(b *testing.B) {
	b.SetBytes(int64(len(benchConcept)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := Parse(benchConcept, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		_ = d.Project()
		_ = Check(d)
		_ = Links(d.Body())
	}
}

// BenchmarkParseFixtures parses every fixture frontmatter once per
// iteration (a bundle-listing workload): the spec authors' bundles when
// NOTEBRIDGE_OKF_FIXTURES names them, otherwise the project's own.
func BenchmarkParseFixtures(b *testing.B) {
	fx := loadFixtures(b, okftest.ForBenchmark(b))
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range fx {
			if _, err := ParseFrontmatterOnly(bytes.NewReader(f.data), Limits{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(fx)), "ns/file")
}
