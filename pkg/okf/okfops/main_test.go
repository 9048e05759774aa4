package okfops

import (
	"fmt"
	"os"
	"testing"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// childModeEnv selects a child-process mode: a test re-executes the test
// binary with it set, and TestMain then runs the child instead of the
// tests (see crash_workflow_test.go).
const childModeEnv = "NB_OKFOPS_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childModeEnv); mode != "" {
		os.Exit(runOKFChild(mode))
	}
	os.Exit(m.Run())
}

func runOKFChild(mode string) int {
	switch mode {
	case childCrashApply:
		return crashApplyChild()
	}
	fmt.Fprintln(os.Stderr, "unknown child mode", mode)
	return 3
}

// newChildExecutor is newHarness without a testing.TB, for child
// processes.
func newChildExecutor(cfg Config) (*executor.Executor, error) {
	reg, err := registry.New(Operations(cfg)...)
	if err != nil {
		return nil, err
	}
	return executor.New(reg, executor.DefaultLimits, executor.WithOutputValidation())
}
