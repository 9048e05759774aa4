package executor

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/qri-io/jsonschema"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/internal/jsonscan"
)

// checkDepth rejects arguments nested deeper than max, in one pass over the
// bytes and before anything decodes them. It does not check that b is JSON:
// strings are skipped to their closing quote, valid or not.
func checkDepth(b []byte, max int) *domainerr.Error {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end, _ := jsonscan.StringEnd(b, i)
			i = end - 1
		case '{', '[':
			if depth++; depth > max {
				return tooDeep(max)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

func tooDeep(max int) *domainerr.Error {
	return domainerr.New(domainerr.NestingTooDeep, "arguments are nested deeper than %d levels", max)
}

// Problem is one schema violation: where, and which rule. It never carries
// the offending value.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// validateInput checks args against s. ValidateBytes parses args itself,
// so they are not scanned for validity first: only when it fails does
// json.Valid pick the message.
func validateInput(ctx context.Context, s *jsonschema.Schema, args json.RawMessage) *domainerr.Error {
	errs, err := s.ValidateBytes(ctx, args)
	if err != nil {
		if !json.Valid(args) {
			return domainerr.New(domainerr.InvalidArgument, "arguments are not valid JSON")
		}
		return domainerr.New(domainerr.InvalidArgument, "arguments could not be validated")
	}
	if args[0] != '{' {
		return domainerr.New(domainerr.InvalidArgument, "arguments must be a JSON object")
	}
	if len(errs) == 0 {
		return nil
	}
	return domainerr.New(domainerr.InvalidArgument, "arguments do not match the input schema").
		WithDetails(map[string]any{"problems": sanitize(errs)})
}

// reasons maps qri-io/jsonschema message prefixes to fixed reasons. The raw
// messages embed the offending value, so they are never passed on.
var reasons = []struct{ prefix, reason string }{
	{"additional properties", "unknown property"},
	{"max length", "string is too long"},
	{"min length", "string is too short"},
	{"regexp pattern", "string does not match the required pattern"},
	{"type should be", "wrong type"},
	{"should be one of", "value is not one of the allowed values"},
	{"must equal", "value is not the required constant"},
	{"must be less than", "number is too large"},
	{"must be greater than", "number is too small"},
	{"array length", "array has the wrong number of items"},
	{"array items must be unique", "array items must be unique"},
	{"did Not match any specified AnyOf", "value matches none of the allowed forms"},
	{"did not match any of the specified OneOf", "value matches none of the allowed forms"},
	{"matched more than one specified OneOf", "value matches more than one allowed form"},
	{"must be a multiple", "number is not an allowed multiple"},
	{"invalid ", "string has an invalid format"},
}

func sanitize(errs []jsonschema.KeyError) []Problem {
	seen := map[Problem]bool{}
	out := make([]Problem, 0, len(errs))
	for _, e := range errs {
		p := Problem{Path: e.PropertyPath, Reason: "value is invalid"}
		if p.Path == "" {
			p.Path = "/"
		}
		msg := e.Message
		switch {
		case strings.HasSuffix(msg, "value is required"):
			// `"name" value is required`: the name comes from the schema.
			name := strings.TrimSuffix(strings.TrimPrefix(msg, `"`), `" value is required`)
			p.Path = strings.TrimSuffix(p.Path, "/") + "/" + name
			p.Reason = "required property is missing"
		default:
			for _, r := range reasons {
				if strings.HasPrefix(msg, r.prefix) || strings.Contains(msg, " "+strings.TrimSpace(r.prefix)) {
					p.Reason = r.reason
					break
				}
			}
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}
