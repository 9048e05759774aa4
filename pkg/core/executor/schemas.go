package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/qri-io/jsonschema"

	"github.com/notebridge/notebridge/pkg/core/registry"
)

// opSchemas holds one operation's compiled schemas. Each is compiled and
// warmed once, on first use, under its own sync.Once: qri-io/jsonschema is
// not safe for concurrent first use, and is safe once warmed.
type opSchemas struct {
	in, out   json.RawMessage
	inOnce    sync.Once
	outOnce   sync.Once
	inSchema  *jsonschema.Schema
	outSchema *jsonschema.Schema
	inErr     error
	outErr    error
}

// schemasFor returns op's schema holder, creating it on the first call.
func (e *Executor) schemasFor(op registry.Operation) *opSchemas {
	if s, ok := e.schemas.Load(op.Name); ok {
		return s.(*opSchemas)
	}
	s, _ := e.schemas.LoadOrStore(op.Name, &opSchemas{in: op.InputSchema, out: op.OutputSchema})
	return s.(*opSchemas)
}

func (s *opSchemas) input() (*jsonschema.Schema, error) {
	s.inOnce.Do(func() { s.inSchema, s.inErr = compile(s.in) })
	return s.inSchema, s.inErr
}

func (s *opSchemas) output() (*jsonschema.Schema, error) {
	s.outOnce.Do(func() { s.outSchema, s.outErr = compile(s.out) })
	return s.outSchema, s.outErr
}

// compile parses one schema and warms it: the first validation resolves
// refs and caches state, so later concurrent validations are safe.
func compile(raw json.RawMessage) (*jsonschema.Schema, error) {
	loadDraft.Do(jsonschema.LoadDraft2019_09)
	s := &jsonschema.Schema{}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, err
	}
	s.Validate(context.Background(), map[string]any{})
	return s, nil
}

// CheckSchemas compiles every input and output schema of reg and reports
// each one that does not compile. The server never calls it at start (the
// executor compiles lazily); the catalog's tests do, so a bad schema still
// fails CI.
func CheckSchemas(reg *registry.Registry) error {
	var errs []error
	for _, op := range reg.Operations() {
		if _, err := compile(op.InputSchema); err != nil {
			errs = append(errs, fmt.Errorf("operation %q input schema: %w", op.Name, err))
		}
		if _, err := compile(op.OutputSchema); err != nil {
			errs = append(errs, fmt.Errorf("operation %q output schema: %w", op.Name, err))
		}
	}
	return errors.Join(errs...)
}
