package joplinops

import (
	"encoding/base64"
	"fmt"
	"reflect"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/schema"
	"github.com/notebridge/notebridge/pkg/joplin/joplinindex"
	"github.com/notebridge/notebridge/pkg/joplin/notechanges"
)

// meta fills what every Joplin operation shares.
func (o *Ops) meta(name, title, desc string, effect registry.Effect) registry.Meta {
	return registry.Meta{
		Name: name, Title: title, Description: desc, Toolset: Toolset,
		Effect: effect, Exposure: allTransports, Vocab: o.vocabulary,
	}
}

// withDef has the operation's schemas state t once, under $defs as name,
// and refer to it there.
func withDef(m registry.Meta, t reflect.Type, name string) registry.Meta {
	m.Vocab.Defs = map[reflect.Type]string{t: name}
	return m
}

// vocab names the enums, patterns, bounds and texts the operations'
// struct tags refer to.
func (o *Ops) vocab() schema.Vocabulary {
	maxBytes := o.limits.MaxResourceBytes
	fields := make([]string, len(noteFieldNames))
	for i, f := range noteFieldNames {
		fields[i] = f.tool
	}
	return schema.Vocabulary{
		Enums: map[string][]string{
			"note_field": fields, "search_type": SearchTypes, "index_state": IndexStates, "change_op": notechanges.ChangeOps,
			"search_mode": searchModes, "semantic_state": joplinindex.SemanticStates,
		},
		Patterns: map[string]string{
			"optional_id": "^([0-9a-f]{32})?$",
			"file_name":   `^[^/\\\x00-\x1f]+$`,
			"mime":        `^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$`,
		},
		Bounds: map[string]int64{
			"note_fields": int64(len(noteFieldNames)), "max_page": MaxPage, "max_body": MaxBodyChars,
			"max_notebooks": MaxNotebooks, "max_tags": MaxTags, "max_relations": MaxRelations,
			"max_plan_notes": notechanges.MaxPlanNotes, "max_resource_page": MaxResourcePage,
			"max_resource_bytes": maxBytes,
			"max_changes":        notechanges.MaxChanges, "max_problems": notechanges.MaxChanges + notechanges.MaxPlanNotes, "max_due": notechanges.MaxDue,
			"max_plan_diff":   notechanges.MaxPlanDiffBytes,
			"max_content_b64": int64(base64.StdEncoding.EncodedLen(int(maxBytes))),
			"max_upload_b64":  int64(base64.StdEncoding.EncodedLen(int(2 * maxBytes))),
			"max_conflicts":   MaxConflicts, "max_copies_listed": maxCopiesListed,
			"max_sync_code": maxSyncCode, "max_sync_setting": maxSyncSetting,
			"max_sync_text": maxSyncText, "max_sync_summary": maxSyncText + 200,
		},
		Texts: map[string]string{
			"upload": fmt.Sprintf("Padded base64; at most %s decoded.", sizeText(maxBytes)),
		},
		Strings: []reflect.Type{reflect.TypeFor[payload]()},
	}
}
