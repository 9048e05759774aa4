package scenarios

import "testing"

// NotebookScenarios covers the notebook operations.
func NotebookScenarios(t *testing.T, env Env) {}
