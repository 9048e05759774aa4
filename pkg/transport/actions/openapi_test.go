package actions_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/testkit/toolsnaps"
	"github.com/notebridge/notebridge/pkg/toolsets"
	"github.com/notebridge/notebridge/pkg/transport/actions"
)

var update = flag.Bool("update", false, "rewrite the operation snapshots")

const origin = "https://notes.example.com"

func catalogRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	// A recognisable upstream URL and token file path, to prove neither leaks.
	jc, err := joplin.New(joplin.Config{BaseURL: "http://joplin-upstream.internal:41184", TokenFile: "/run/secrets/joplin-token"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := toolsets.Build(toolsets.Config{Joplin: jc, JoplinLimits: joplinops.DefaultLimits})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestOpenAPISnapshotsAndDeterministic(t *testing.T) {
	reg := catalogRegistry(t)
	a, err := actions.Document(reg, origin, "golden")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		b, _ := actions.Document(catalogRegistry(t), origin, "golden")
		if !bytes.Equal(a, b) {
			t.Fatal("document differs between builds")
		}
	}
	checkOpenAPISnaps(t, a)
}

// checkOpenAPISnaps holds the document against one snapshot per operation
// (testdata/toolsnaps/<operation>.json: its path item) and _document (the
// rest). Run `go test ./pkg/transport/actions -run Snapshots -update` to
// accept a deliberate change.
func checkOpenAPISnaps(t *testing.T, doc []byte) {
	t.Helper()
	var parts map[string]json.RawMessage
	if err := json.Unmarshal(doc, &parts); err != nil {
		t.Fatal(err)
	}
	var paths map[string]json.RawMessage
	if err := json.Unmarshal(parts["paths"], &paths); err != nil || len(paths) == 0 {
		t.Fatalf("no paths: %v", err)
	}
	delete(parts, "paths")
	rest, err := json.Marshal(parts)
	if err != nil {
		t.Fatal(err)
	}
	snaps := []toolsnaps.Snap{{Name: "_document", JSON: rest}}
	for path, item := range paths {
		name, ok := strings.CutPrefix(path, actions.RoutePrefix)
		if !ok {
			t.Fatalf("path %s is outside %s", path, actions.RoutePrefix)
		}
		snaps = append(snaps, toolsnaps.Snap{Name: name, JSON: item})
	}
	toolsnaps.Check(t, filepath.Join("testdata", "toolsnaps"), snaps, *update,
		"go test ./pkg/transport/actions -run Snapshots -update")
}

type document struct {
	OpenAPI string                                `json:"openapi"`
	Servers []struct{ URL string }                `json:"servers"`
	Paths   map[string]map[string]json.RawMessage `json:"paths"`
}

type operation struct {
	OperationID     string `json:"operationId"`
	Summary         string `json:"summary"`
	Description     string `json:"description"`
	IsConsequential *bool  `json:"x-openai-isConsequential"`
}

func TestOpenAPIShape(t *testing.T) {
	reg := catalogRegistry(t)
	raw, err := actions.Document(reg, origin, "test")
	if err != nil {
		t.Fatal(err)
	}
	var doc document
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	exposed := reg.Exposed(registry.Actions)
	if doc.OpenAPI != "3.1.0" || len(doc.Servers) != 1 || doc.Servers[0].URL != origin {
		t.Fatalf("header: %+v", doc)
	}
	if len(doc.Paths) != len(exposed) || len(doc.Paths) > actions.MaxOperations {
		t.Fatalf("%d paths for %d exposed operations", len(doc.Paths), len(exposed))
	}
	for _, op := range exposed {
		item, ok := doc.Paths[actions.RoutePrefix+op.Name]
		if !ok || len(item) != 1 {
			t.Fatalf("%s: missing or not a single POST", op.Name)
		}
		var o operation
		json.Unmarshal(item["post"], &o)
		if o.OperationID != op.Name || len(o.Summary) > 300 || len(o.Description) > 300 || o.Description == "" {
			t.Errorf("%s: %+v", op.Name, o)
		}
		if o.IsConsequential == nil || *o.IsConsequential != (op.Effect != registry.EffectRead) {
			t.Errorf("%s: x-openai-isConsequential does not follow effect %s", op.Name, op.Effect)
		}
	}
	if strings.Contains(string(raw), "$defs") {
		t.Error("document keeps $defs, whose references would resolve against the document root")
	}
}

func TestOpenAPIHasNoForbiddenContent(t *testing.T) {
	raw, err := actions.Document(catalogRegistry(t), origin, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"joplin-upstream", "41184", "/run/secrets", "token=", "127.0.0.1", "localhost",
		"/mcp", "healthz", "readyz", actions.DocumentPath, "/home/", "/root/", "/tmp/", "http://",
	} {
		if strings.Contains(string(raw), bad) {
			t.Errorf("document contains %q", bad)
		}
	}
}

func TestOpenAPIOriginIsStrict(t *testing.T) {
	reg := catalogRegistry(t)
	for _, bad := range []string{
		"http://notes.example.com", "https://notes.example.com/", "https://notes.example.com/v1",
		"https://notes.example.com?x=1", "https://notes.example.com#f", "https://user@notes.example.com",
		"https://localhost", "https://app.localhost", "https://127.0.0.1", "https://[::1]",
		"https://notes.example.com:8443", "https://intranet", "notes.example.com", "", "https://exa mple.com",
	} {
		if _, err := actions.Document(reg, bad, "x"); err == nil {
			t.Errorf("origin %q accepted", bad)
		}
	}
	for _, good := range []string{"https://notes.example.com", "https://Notes.Example.com:443"} {
		if _, err := actions.Document(reg, good, "x"); err != nil {
			t.Errorf("origin %q refused: %v", good, err)
		}
	}
}

func TestOpenAPIExportsOnlyActionsOperations(t *testing.T) {
	full := catalogRegistry(t).Operations()
	hidden := full[0]
	hidden.Exposure = []registry.Transport{registry.MCPStdio}
	reg, err := registry.New(append([]registry.Operation{hidden}, full[1:]...)...)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := actions.Document(reg, origin, "x")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), `"`+actions.RoutePrefix+hidden.Name+`"`) {
		t.Fatalf("operation %s is not exposed to Actions but is exported", hidden.Name)
	}
}
