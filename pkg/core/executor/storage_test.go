package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// TestFullDiskIsStorageFull: a handler whose state write failed with
// ENOSPC or EDQUOT (a receipt, the journal), however wrapped, answers
// STORAGE_FULL, retryable, naming the state directory by its setting and
// never by its path; any other I/O error stays INTERNAL.
func TestFullDiskIsStorageFull(t *testing.T) {
	for _, c := range []struct {
		cause error
		want  domainerr.Code
	}{
		{syscall.ENOSPC, domainerr.StorageFull},
		{syscall.EDQUOT, domainerr.StorageFull},
		{syscall.EIO, domainerr.Internal},
	} {
		failing := fmt.Errorf("notereceipt: write: %w", &os.PathError{Op: "write", Path: "/srv/state/receipts/.tmp-1", Err: c.cause})
		r, err := registry.New(registry.Operation{Name: "edit", Title: "Edit", Description: "Edit",
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`), OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`),
			Effect: registry.EffectUpdate, Exposure: []registry.Transport{registry.MCPStdio},
			Handler: func(context.Context, json.RawMessage) (any, error) { return nil, failing }})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := New(r, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		_, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "edit", json.RawMessage(`{}`))
		if derr == nil || derr.Code != c.want || derr.Retryable != c.want.Retryable() || strings.Contains(derr.Message, "/srv") {
			t.Errorf("%v: %+v", c.cause, derr)
		}
		if c.want == domainerr.StorageFull && (!derr.Retryable || !strings.Contains(derr.Message, "--state-dir")) {
			t.Errorf("%v: %+v", c.cause, derr)
		}
	}
}
