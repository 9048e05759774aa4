package okfbridge

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/joplin/scopeview"
)

// TestExportOnlyWhatTheCallerReads: through the notebook view the service
// installs, a caller limited to the notebook Private cannot export or
// preview Research (NOT_FOUND, as a missing notebook, nothing written)
// and exports Private, which it reads.
func TestExportOnlyWhatTheCallerReads(t *testing.T) {
	h, _ := newHarness(t, nil)
	s := seed(t, h)
	scopeview.Install(h.jc, 1000, func() (int64, bool) { return 0, false })
	only := notebookscope.Only(s.outsideNB)
	caller := principal.Stdio().WithNotebooks(notebookscope.New(only, only))
	call := func(name, nb string) (json.RawMessage, *domainerr.Error) {
		raw, _ := json.Marshal(map[string]any{"bundle_path": h.bundle, "notebook_id": nb})
		return h.ex.Call(principal.With(context.Background(), caller), caller, registry.MCPStdio, name, raw)
	}
	for _, op := range []string{"export_notebook_to_okf", "preview_okf_to_notebook"} {
		if _, derr := call(op, s.nb); derr == nil || derr.Code != domainerr.NotFound {
			t.Fatalf("%s of a notebook outside the caller's scope: %v", op, derr)
		}
	}
	if entries, _ := os.ReadDir(h.bundle); len(entries) != 0 {
		t.Fatalf("a refused export wrote %d entries", len(entries))
	}
	res, derr := call("export_notebook_to_okf", s.outsideNB)
	var out exportOut
	if derr != nil || json.Unmarshal(res, &out) != nil || out.Notes != 1 {
		t.Fatalf("export of the caller's own notebook: %v %s", derr, res)
	}
}
