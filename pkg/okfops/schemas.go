package okfops

import (
	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/schema"
)

const maxText = 100_000

// trustTierDesc explains that a tier is what the document claims: a human:
// verifier is a string any writer can supply, never review by this server.
const trustTierDesc = "Derived from the verified strings as written: claimed-human-review when a human: verifier is present, " +
	"which is a claim by whoever wrote the file (any caller can supply one), never review performed or confirmed by this server."

func text(desc string) schema.S { return schema.String(desc, 0, maxText) }

var (
	actorstampSchema = schema.Object("", map[string]any{
		"by": text("Actor (producer/version, human:<id> or process:<id>)."),
		"at": text("When, as written."),
	}, "by")
	windowSchema = schema.Object("", map[string]any{"from": text(""), "to": text("")})
	sourceSchema = schema.Object("", map[string]any{
		"id":            text(""),
		"resource":      text("URL, bundle path or scope; never fetched."),
		"title":         text(""),
		"author":        text(""),
		"usage_count":   schema.Integer("", -1<<53, 1<<53),
		"last_modified": text(""),
		"usage_window":  windowSchema,
	}, "resource")
	resourceRefSchema = schema.Object("", map[string]any{
		"resource": text(""),
		"receipt":  schema.Array("", text(""), 10_000),
	})
	projectionSchema = schema.Object("Typed view of the OKF frontmatter families; wrongly shaped fields are omitted and reported in problems.", map[string]any{
		"type":         text(""),
		"title":        text(""),
		"description":  text(""),
		"resource":     text("Canonical URI of the described asset."),
		"tags":         schema.Array("", text(""), 10_000),
		"sources":      schema.Array("", sourceSchema, 10_000),
		"usage_window": windowSchema,
		"generated":    actorstampSchema,
		"verified":     schema.Array("Verification events (a bare mapping becomes one).", actorstampSchema, 10_000),
		"trust_tier":   schema.Enum(trustTierDesc, doc.TrustTiers...),
		"status":       text("Lifecycle status (stable when absent)."),
		"stale_after":  text("Stale on or after this date or instant."),
		"runtime":      text(""),
		"parameters": schema.Array("", schema.Object("", map[string]any{
			"name": text(""), "type": text(""), "required": schema.Bool(""),
		}, "name", "type", "required"), 10_000),
		"computation":      text(""),
		"executor":         resourceRefSchema,
		"attester":         resourceRefSchema,
		"legacy_timestamp": text("v0.1 timestamp."),
	}, "type", "trust_tier", "status")
	temporalFieldSchema = schema.Object("", map[string]any{
		"path":  text("Field path, e.g. sources[0].last_modified."),
		"value": text("Value as written."),
		"kind":  schema.Enum("Classification.", "date", "instant", "invalid"),
	}, "path", "value", "kind")
	legacySchema = schema.Object("v0.1 fallbacks.", map[string]any{
		"timestamp": text("Legacy timestamp key."),
		"citations": schema.Array("Items of a legacy # Citations section.", text(""), 10_000),
	})
	problemSchema = schema.Object("", map[string]any{
		"code":     schema.String("Stable problem code.", 1, 64),
		"severity": schema.Enum("error breaks conformance (spec §11); warning is soft guidance.", "error", "warning"),
		"field":    text("Frontmatter path concerned."),
		"message":  text("Fixed explanation; never echoes document values."),
	}, "code", "severity", "message")
)
