package scenarios

import "testing"

// TagScenarios covers the tag operations.
func TagScenarios(t *testing.T, env Env) {}
