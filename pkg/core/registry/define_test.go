package registry

import (
	"context"
	"strings"
	"testing"
)

type defineIn struct {
	Text string `json:"text" schema:"max=10"`
}

type defineOut struct {
	Echo string `json:"echo" schema:"max=10"`
}

func echo(_ context.Context, in defineIn) (defineOut, error) { return defineOut{Echo: in.Text}, nil }

func meta(name string) Meta {
	return Meta{Name: name, Title: "Echo", Description: "Echo text.", Toolset: "t", Effect: EffectRead, Exposure: AllTransports}
}

func TestDefineDerivesSchemasAndRuns(t *testing.T) {
	r, err := New(Define(meta("echo"), echo))
	if err != nil {
		t.Fatal(err)
	}
	op, _ := r.Lookup("echo")
	if want := `{"additionalProperties":false,"properties":{"text":{"maxLength":10,"type":"string"}},"required":["text"],"type":"object"}`; string(op.InputSchema) != want {
		t.Fatalf("input schema %s, want %s", op.InputSchema, want)
	}
	out, err := op.Handler(context.Background(), []byte(`{"text":"hi"}`))
	if err != nil || out.(defineOut).Echo != "hi" {
		t.Fatalf("handler: %v %v", out, err)
	}
}

// TestNewRefusesUnderivableAndOutOfSubset: a bad tag or an unbounded field
// stops the registry from being built, naming the operation.
func TestNewRefusesUnderivableAndOutOfSubset(t *testing.T) {
	type badTag struct {
		Text string `json:"text" schema:"max=@missing"`
	}
	type unbounded struct {
		Text string `json:"text"`
	}
	for why, op := range map[string]Operation{
		`unknown bound "missing"`: Define(meta("bad_tag"), func(context.Context, badTag) (defineOut, error) { return defineOut{}, nil }),
		"maxLength":               Define(meta("unbounded"), func(context.Context, unbounded) (defineOut, error) { return defineOut{}, nil }),
	} {
		_, err := New(op)
		if err == nil || !strings.Contains(err.Error(), op.Name) || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: New err = %v, want one naming it and saying %s", op.Name, err, why)
		}
	}
}
