package executor

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/principal"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/internal/jsonscan"
)

// FuzzCall feeds arbitrary argument bytes through the whole executor: it
// must never panic, the handler runs only for schema-valid objects, and an
// error never echoes a long input value.
func FuzzCall(f *testing.F) {
	var calls atomic.Int32
	ex, err := New(testRegistry(f, &calls), Limits{MaxArgBytes: 4096, MaxDepth: 8, MaxActive: 4})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{"id":"` + goodID + `"}`, `{}`, `[`, `{"deep":[[[[[[[[[1]]]]]]]]]}`, `{"id":"` + goodID + `","title":"panic"}`, `"x"`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		before := calls.Load()
		out, derr := ex.Call(context.Background(), principal.Stdio(), registry.MCPStdio, "echo_id", args)
		if derr == nil {
			if !json.Valid(out) {
				t.Fatalf("invalid result %q", out)
			}
			return
		}
		enc, _ := json.Marshal(derr)
		var probe map[string]any
		if json.Unmarshal(args, &probe) == nil {
			for _, v := range probe {
				if s, ok := v.(string); ok && len(s) > 12 && s != goodID && strings.Contains(string(enc), s) {
					t.Fatalf("error echoes input value %q: %s", s, enc)
				}
			}
		}
		if derr.Code == "INVALID_ARGUMENT" && calls.Load() != before {
			t.Fatal("handler ran for invalid arguments")
		}
	})
}

// FuzzCheckDepth: the byte scanner agrees with jsonscan's validating
// Scanner (itself fuzzed against encoding/json's decoder) that any input it
// accepts as valid JSON nests no deeper than the limit.
func FuzzCheckDepth(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"[[["}]}`, `[[[[[[`, `"\"{"`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		const max = 5
		if checkDepth(b, max) != nil || !json.Valid(b) {
			return
		}
		if v, _ := jsonscan.NewScanner(b).Value(); v.Depth() > max {
			t.Fatalf("accepted depth %d > %d: %q", v.Depth(), max, b)
		}
	})
}
