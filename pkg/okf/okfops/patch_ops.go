package okfops

import (
	"errors"
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/notebridge/notebridge/pkg/okf/doc"
	"github.com/notebridge/notebridge/pkg/okf/edit"
)

// PatchOp is one typed semantic operation of a concept patch. Which fields
// apply depends on Op; the others must be empty.
type PatchOp struct {
	Op          string           `json:"op" schema:"enum=@patch_op"`
	ConceptID   string           `json:"concept_id,omitempty" schema:"min=1,max=@concept_id"`
	By          string           `json:"by,omitempty" jsonschema:"Actor for set_generated and *_verification; recorded as data." schema:"max=100000"`
	At          string           `json:"at,omitempty" jsonschema:"Datetime with offset." schema:"max=100000"`
	Source      *doc.Source      `json:"source,omitempty"`
	ID          string           `json:"id,omitempty" schema:"max=100000"`
	From        string           `json:"from,omitempty" schema:"max=100000"`
	To          string           `json:"to,omitempty" schema:"max=100000"`
	Status      string           `json:"status,omitempty" schema:"enum=draft|stable|deprecated"`
	StaleAfter  *string          `json:"stale_after,omitempty" jsonschema:"Empty removes it." schema:"max=100000"`
	Runtime     string           `json:"runtime,omitempty" schema:"max=100000"`
	Parameters  []doc.Parameter  `json:"parameters,omitempty" schema:"max=1000"`
	Computation string           `json:"computation,omitempty" schema:"max=100000"`
	Executor    *doc.ResourceRef `json:"executor,omitempty"`
	Attester    *doc.ResourceRef `json:"attester,omitempty"`
	Version     string           `json:"version,omitempty" schema:"enum=0.2"`
}

// opError is a refusal of one operation with a stable code.
type opError struct{ code, msg string }

func (e *opError) Error() string { return e.msg }

func reject(code, format string, args ...any) error {
	return &opError{code: code, msg: fmt.Sprintf(format, args...)}
}

// applyOp applies one operation to a concept's current bytes and returns
// the new bytes (equal to src for a no-op).
func applyOp(src []byte, op PatchOp) ([]byte, error) {
	d, err := doc.Parse(src, doc.DefaultLimits)
	if err != nil {
		var pe *doc.ParseError
		if errors.As(err, &pe) {
			return nil, reject(pe.Code, "the concept cannot be edited safely: %s", pe.Msg)
		}
		return nil, err
	}
	e, err := edit.New(d)
	if err != nil {
		return nil, editErr(err)
	}
	pr := d.Project()
	switch op.Op {
	case "set_generated":
		if !doc.ValidActor(op.By) {
			return nil, reject("bad_actor", "by must follow the actor convention (producer/version, human:<id> or process:<id>)")
		}
		if err := checkInstant(op.At, "at"); err != nil {
			return nil, err
		}
		if pr.Generated != nil && pr.Generated.By == op.By && pr.Generated.At == op.At {
			return src, nil
		}
		err = e.SetKey("generated", edit.Flow("by", op.By, "at", op.At))
	case "ensure_verification", "remove_verification":
		err = verification(e, d, pr, op)
	case "put_source", "remove_source":
		err = sourceOp(e, d, pr, op)
	case "set_usage_window":
		if op.From == "" || op.To == "" {
			return nil, reject("missing_field", "set_usage_window needs from and to")
		}
		if err := checkProfileValue(op.From, "from"); err != nil {
			return nil, err
		}
		if err := checkProfileValue(op.To, "to"); err != nil {
			return nil, err
		}
		if pr.UsageWindow != nil && pr.UsageWindow.From == op.From && pr.UsageWindow.To == op.To {
			return src, nil
		}
		err = e.SetKey("usage_window", edit.Flow("from", op.From, "to", op.To))
	case "set_lifecycle":
		err = lifecycle(e, d, pr, op)
	case "put_attested_computation":
		err = attested(e, pr, op)
	default:
		return nil, reject("unknown_op", "unknown operation")
	}
	if err != nil {
		return nil, editErr(err)
	}
	if !e.Changed() {
		return src, nil
	}
	return e.Bytes()
}

func editErr(err error) error {
	var ee *edit.Error
	if errors.As(err, &ee) {
		return reject(ee.Code, "%s", ee.Msg)
	}
	return err
}

func checkInstant(v, field string) error {
	if v != "" && doc.ClassifyTemporal(v) != doc.TemporalInstant {
		return reject("bad_temporal", "%s must be an ISO 8601 datetime with an explicit offset", field)
	}
	return nil
}

func checkProfileValue(v, field string) error {
	if doc.ClassifyTemporal(v) == doc.TemporalInvalid {
		return reject("bad_temporal", "%s must be a YYYY-MM-DD date or a datetime with an explicit offset", field)
	}
	return nil
}

// verification ensures or removes a {by, at} event, keeping every other
// event's bytes.
func verification(e *edit.Editor, d *doc.Document, pr doc.Projection, op PatchOp) error {
	if !doc.ValidActor(op.By) {
		return reject("bad_actor", "by must follow the actor convention")
	}
	if err := checkInstant(op.At, "at"); err != nil {
		return err
	}
	n := d.Lookup("verified")
	if n != nil && n.Kind != yaml.SequenceNode && n.Kind != yaml.MappingNode {
		return reject("bad_verified", "verified is neither a mapping nor a list")
	}
	// Kept events are addressed by their index in the projection, which
	// drops entries without a usable by: it must match the entries 1:1.
	if n != nil {
		entries := 1 // a bare mapping is one event
		if n.Kind == yaml.SequenceNode {
			entries = len(n.Content)
		}
		if entries != len(pr.Verified) {
			return reject("bad_verified", "a verified entry is malformed; fix it before patching")
		}
	}
	var items []edit.Item
	matched := false
	for i, v := range pr.Verified {
		match := v.By == op.By && (op.At == "" || v.At == op.At)
		if op.Op == "ensure_verification" {
			match = v.By == op.By && v.At == op.At
		}
		matched = matched || match
		if !(match && op.Op == "remove_verification") {
			items = append(items, edit.KeepItem(i))
		}
	}
	switch {
	case op.Op == "ensure_verification" && matched, op.Op == "remove_verification" && !matched:
		return nil
	case op.Op == "ensure_verification":
		if op.At == "" {
			return reject("missing_field", "ensure_verification needs at: the server never supplies a time")
		}
		items = append(items, edit.NewItem(edit.Flow("by", op.By, "at", op.At)))
	}
	return e.SetSequence("verified", items, func(i int) string {
		return edit.Flow("by", pr.Verified[i].By, "at", pr.Verified[i].At)
	})
}

// sourceOp puts (by id) or removes a sources entry.
func sourceOp(e *edit.Editor, d *doc.Document, pr doc.Projection, op PatchOp) error {
	n := d.Lookup("sources")
	if n != nil && n.Kind != yaml.SequenceNode {
		return reject("bad_sources", "sources is not a list")
	}
	id := op.ID
	if op.Op == "put_source" {
		if op.Source == nil || op.Source.ID == "" || op.Source.Resource == "" {
			return reject("missing_field", "put_source needs source.id and source.resource")
		}
		for _, v := range []string{op.Source.LastModified} {
			if v != "" {
				if err := checkProfileValue(v, "source.last_modified"); err != nil {
					return err
				}
			}
		}
		id = op.Source.ID
	} else if id == "" {
		return reject("missing_field", "remove_source needs id")
	}
	if n != nil && len(n.Content) != len(pr.Sources) {
		return reject("bad_sources", "a sources entry is malformed; fix it before patching")
	}
	var items []edit.Item
	found := false
	for i, s := range pr.Sources {
		if s.ID != id {
			items = append(items, edit.KeepItem(i))
			continue
		}
		found = true
		if op.Op == "put_source" {
			if sameSource(s, *op.Source) {
				return nil
			}
			items = append(items, edit.NewItem(renderSource(*op.Source)))
		}
	}
	if op.Op == "remove_source" && !found {
		return nil
	}
	if op.Op == "put_source" && !found {
		items = append(items, edit.NewItem(renderSource(*op.Source)))
	}
	return e.SetSequence("sources", items, func(i int) string { return renderSource(pr.Sources[i]) })
}

func sameSource(a, b doc.Source) bool {
	return renderSource(a) == renderSource(b)
}

func renderSource(s doc.Source) string {
	str := func(v string) string {
		if v == "" {
			return ""
		}
		return edit.Scalar(v)
	}
	count, window := "", ""
	if s.UsageCount != nil {
		count = strconv.FormatInt(*s.UsageCount, 10)
	}
	if s.UsageWindow != nil {
		window = edit.Flow("from", s.UsageWindow.From, "to", s.UsageWindow.To)
	}
	return edit.FlowRendered("id", str(s.ID), "resource", str(s.Resource), "title", str(s.Title), "author", str(s.Author),
		"usage_count", count, "last_modified", str(s.LastModified), "usage_window", window)
}

// lifecycle sets status and/or stale_after ("" clears stale_after).
func lifecycle(e *edit.Editor, d *doc.Document, pr doc.Projection, op PatchOp) error {
	if op.Status == "" && op.StaleAfter == nil {
		return reject("missing_field", "set_lifecycle needs status or stale_after")
	}
	if op.Status != "" {
		switch op.Status {
		case "draft", "stable", "deprecated":
		default:
			return reject("bad_status", "status must be draft, stable or deprecated")
		}
		cur := d.Lookup("status")
		switch {
		case cur != nil && cur.Kind == yaml.ScalarNode && cur.Value == op.Status:
		case cur != nil && cur.Kind == yaml.ScalarNode:
			if err := e.ReplaceScalar(cur, op.Status); err != nil {
				return err
			}
		default:
			if err := e.SetKey("status", op.Status); err != nil {
				return err
			}
		}
	}
	if op.StaleAfter != nil {
		v := *op.StaleAfter
		cur := d.Lookup("stale_after")
		switch {
		case v == "":
			return e.DeleteKey("stale_after")
		case doc.ClassifyTemporal(v) == doc.TemporalInvalid:
			return reject("bad_temporal", "stale_after must be a date or a datetime with an explicit offset")
		case pr.StaleAfter == v:
		case cur != nil && cur.Kind == yaml.ScalarNode:
			return e.ReplaceScalar(cur, edit.Scalar(v))
		default:
			return e.SetKey("stale_after", edit.Scalar(v))
		}
	}
	return nil
}

// attested sets the computation contract fields of an Attested
// Computation. They are stored as inert data; nothing is run or fetched.
func attested(e *edit.Editor, pr doc.Projection, op PatchOp) error {
	if pr.Type != "Attested Computation" {
		return reject("not_attested_computation", "put_attested_computation applies only to type: Attested Computation")
	}
	if op.Runtime == "" {
		return reject("missing_field", "put_attested_computation needs runtime")
	}
	if op.Runtime != pr.Runtime {
		if err := e.SetKey("runtime", edit.Scalar(op.Runtime)); err != nil {
			return err
		}
	}
	if op.Parameters != nil {
		var items []edit.Item
		for _, p := range op.Parameters {
			if p.Name == "" || p.Type == "" {
				return reject("bad_parameters", "every parameter needs name and type")
			}
			items = append(items, edit.NewItem(edit.FlowRendered("name", edit.Scalar(p.Name), "type", edit.Scalar(p.Type),
				"required", strconv.FormatBool(p.Required))))
		}
		if !sameParams(pr.Parameters, op.Parameters) {
			if err := e.SetSequence("parameters", items, nil); err != nil {
				return err
			}
		}
	}
	if op.Computation != "" && op.Computation != pr.Computation {
		if err := e.SetKey("computation", edit.Scalar(op.Computation)); err != nil {
			return err
		}
	}
	for _, ref := range []struct {
		key string
		new *doc.ResourceRef
		old *doc.ResourceRef
	}{{"executor", op.Executor, pr.Executor}, {"attester", op.Attester, pr.Attester}} {
		if ref.new == nil || (ref.old != nil && ref.old.Resource == ref.new.Resource && fmt.Sprint(ref.old.Receipt) == fmt.Sprint(ref.new.Receipt)) {
			continue
		}
		if ref.new.Resource == "" {
			return reject("missing_field", "%s needs resource", ref.key)
		}
		receipt := ""
		if len(ref.new.Receipt) > 0 {
			receipt = edit.FlowList(ref.new.Receipt)
		}
		v := edit.FlowRendered("resource", edit.Scalar(ref.new.Resource), "receipt", receipt)
		if err := e.SetKey(ref.key, v); err != nil {
			return err
		}
	}
	return nil
}

func sameParams(a, b []doc.Parameter) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
