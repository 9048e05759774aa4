package main

import (
	"flag"
	"io"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/executor"
)

func TestMemoryLimitFlag(t *testing.T) {
	parsed := func(args ...string) (byteSize, error) {
		c := &config{}
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		bindFlags(fs, c, false)
		err := parse(fs, args)
		return c.MemoryLimit, err
	}
	if got, err := parsed(); err != nil || int64(got) != executor.DefaultMemoryLimit {
		t.Fatalf("default: %v, %v", got.String(), err)
	}
	t.Setenv("NOTEBRIDGE_MEMORY_LIMIT", "128MiB")
	if got, err := parsed(); err != nil || got != 128<<20 {
		t.Fatalf("from the environment: %v, %v", got.String(), err)
	}
	if got, err := parsed("--memory-limit", "off"); err != nil || got != 0 {
		t.Fatalf("flag over the environment: %v, %v", got.String(), err)
	}
	if _, err := parsed("--memory-limit", "64MB"); err == nil {
		t.Fatal("64MB accepted")
	}
}
