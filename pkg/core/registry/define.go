package registry

import (
	"context"
	"encoding/json"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/schema"
)

// Meta is what an operation says about itself besides its types.
type Meta struct {
	Name        string
	Title       string
	Description string
	Toolset     string
	Effect      Effect
	Exposure    []Transport
	// Media marks a result that is one file (Operation.Media).
	Media bool
	// Vocab resolves the named enums, patterns, bounds, texts and $defs
	// the struct tags of the input and output types refer to.
	Vocab schema.Vocabulary
}

// Define is the one definition of an operation: its input and output
// schemas are derived from In and Out (schema.For), the output rendered as
// a result schema (schema.Output), and fn runs on the decoded input. A
// type that cannot be derived makes New refuse the operation.
func Define[In, Out any](m Meta, fn func(ctx context.Context, in In) (Out, error)) Operation {
	return define[In, Out](m, Func(fn))
}

// DefineDecoded is Define for an input that must be prepared before it is
// decoded (newIn returns the value to decode into, e.g. with a size bound
// set) and that is decoded with json.Unmarshal, which does not buffer a
// large argument again as json.Decoder does. Unknown fields have already
// been refused by the executor against the closed input schema; an error
// a field's UnmarshalJSON returns as a *domainerr.Error is the call's.
func DefineDecoded[In, Out any](m Meta, newIn func() In, fn func(ctx context.Context, in In) (Out, error)) Operation {
	return define[In, Out](m, func(ctx context.Context, args json.RawMessage) (any, error) {
		in := newIn()
		if err := json.Unmarshal(args, &in); err != nil {
			if de, ok := domainerr.As(err); ok {
				return nil, de
			}
			return nil, domainerr.New(domainerr.InvalidArgument, "arguments do not match the operation's fields")
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	})
}

// DefineEncoded is Define for a handler that encodes its own result (a
// large payload written once into its final buffer): Shape only describes
// the result, for its schema.
func DefineEncoded[In, Shape any](m Meta, fn func(ctx context.Context, in In) (json.RawMessage, error)) Operation {
	return define[In, Shape](m, Func(fn))
}

func define[In, Out any](m Meta, h Handler) Operation {
	op := Operation{
		Name: m.Name, Title: m.Title, Description: m.Description, Toolset: m.Toolset,
		Effect: m.Effect, Exposure: m.Exposure, Media: m.Media, Handler: h,
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
