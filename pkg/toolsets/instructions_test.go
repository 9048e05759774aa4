package toolsets

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/okf/okfops"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// initializeInstructions answers an MCP initialize on a server built for
// the given toolsets and transport and returns its instructions.
func initializeInstructions(t *testing.T, enabled []string, okfRoots []string, tr registry.Transport) string {
	t.Helper()
	jc, err := joplin.New(joplin.Config{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := Build(Config{Joplin: jc, JoplinLimits: joplinops.DefaultLimits, Enabled: enabled, OKF: okfops.Config{AllowedRoots: okfRoots}})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpadapter.NewServer(ex, tr, "test")
	req := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	raw, err := json.Marshal(srv.HandleMessage(context.Background(), json.RawMessage(req)))
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result struct {
			Instructions string `json:"instructions"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil || resp.Result.Instructions == "" {
		t.Fatalf("initialize: %s (%v)", raw, err)
	}
	return resp.Result.Instructions
}

// TestInstructionsDescribeEnabledToolsets: the MCP instructions describe
// exactly the toolsets whose tools the transport serves, and every toolset
// of the catalog has a paragraph.
func TestInstructionsDescribeEnabledToolsets(t *testing.T) {
	for _, c := range []struct {
		name    string
		enabled []string
		roots   []string
		tr      registry.Transport
		want    []string
	}{
		{"joplin over stdio", []string{"joplin"}, nil, registry.MCPStdio, []string{"joplin"}},
		{"okf over stdio", []string{"okf"}, nil, registry.MCPStdio, []string{"okf"}},
		{"all over stdio", nil, nil, registry.MCPStdio, Toolsets}, // every toolset has a paragraph
		{"all over HTTP without OKF roots", nil, nil, registry.MCPHTTP, []string{"joplin"}},
		{"all over HTTP with OKF roots", nil, []string{"/srv/bundles"}, registry.MCPHTTP, []string{"joplin", "okf"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := initializeInstructions(t, c.enabled, c.roots, c.tr)
			if !strings.Contains(got, "Enabled toolsets: "+strings.Join(c.want, ", ")+".") {
				t.Errorf("instructions do not list %v:\n%s", c.want, got)
			}
			for _, ts := range Toolsets {
				mentioned := strings.Contains(got, "(toolset "+ts+")")
				if wanted := strings.Contains(strings.Join(c.want, ","), ts); mentioned != wanted {
					t.Errorf("toolset %s described=%v, want %v:\n%s", ts, mentioned, wanted, got)
				}
			}
			if !contains(c.want, "joplin") && strings.Contains(got, "Joplin") {
				t.Errorf("instructions describe Joplin, which is not served:\n%s", got)
			}
			if !contains(c.want, "okf") && strings.Contains(got, "OKF") {
				t.Errorf("instructions describe OKF, which is not served:\n%s", got)
			}
		})
	}
}

// maxJoplinInstructionsBytes is the budget of the instructions of a
// Joplin-only server: many clients put them in the model's context on
// every turn, so they count in the agent task's bytes (issue 35).
const maxJoplinInstructionsBytes = 400

// TestJoplinInstructionsWithinBudget holds that budget.
func TestJoplinInstructionsWithinBudget(t *testing.T) {
	got := initializeInstructions(t, []string{"joplin"}, nil, registry.MCPStdio)
	if len(got) > maxJoplinInstructionsBytes {
		t.Errorf("Joplin instructions are %d bytes, budget %d:\n%s", len(got), maxJoplinInstructionsBytes, got)
	}
}

// TestOKFArgumentsExplainedOnce: what bundle_path and concept_id hold is
// said in the OKF instructions, once, and in no tool schema (issue #14:
// nothing twice).
func TestOKFArgumentsExplainedOnce(t *testing.T) {
	got := initializeInstructions(t, []string{"okf"}, nil, registry.MCPStdio)
	for _, want := range []string{"bundle_path (an absolute directory, no symlinks)", "concept_id is the concept's bundle-relative path without .md, e.g. tables/orders"} {
		if !strings.Contains(got, want) {
			t.Errorf("instructions lack %q:\n%s", want, got)
		}
	}
	for _, op := range fullRegistry(t).Operations() {
		var root any
		if err := json.Unmarshal(op.InputSchema, &root); err != nil {
			t.Fatal(err)
		}
		walkSchema(root, "#", func(path string, node map[string]any) {
			if (strings.HasSuffix(path, "/bundle_path") || strings.HasSuffix(path, "/concept_id")) && node["description"] != nil {
				t.Errorf("%s %s: describes itself again: %v", op.Name, path, node["description"])
			}
		})
	}
}
