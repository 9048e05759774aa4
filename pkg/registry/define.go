package registry

import (
	"context"

	"github.com/notebridge/notebridge/pkg/schema"
)

// Meta is what an operation says about itself besides its types.
type Meta struct {
	Name        string
	Title       string
	Description string
	Toolset     string
	Effect      Effect
	Exposure    []Transport
	// Vocab resolves the named enums, patterns and $defs the struct tags
	// of In and Out refer to.
	Vocab schema.Vocabulary
}

// Define is the one definition of an operation: its input and output
// schemas are derived from In and Out (schema.For), the output rendered as
// a result schema (schema.Output), and fn runs on the decoded input. A
// type that cannot be derived makes New refuse the operation.
func Define[In, Out any](m Meta, fn func(ctx context.Context, in In) (Out, error)) Operation {
	op := Operation{
		Name: m.Name, Title: m.Title, Description: m.Description, Toolset: m.Toolset,
		Effect: m.Effect, Exposure: m.Exposure, Handler: Func(fn),
	}
	in, err := schema.For[In](m.Vocab)
	if err != nil {
		op.defErr = err
		return op
	}
	out, err := schema.For[Out](m.Vocab)
	if err != nil {
		op.defErr = err
		return op
	}
	op.InputSchema, op.OutputSchema = schema.JSON(in), schema.JSON(schema.Output(out))
	return op
}
