package embed

import (
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "3": 3 * time.Second, "-1": 0, "soon": 0, "99999": time.Hour} {
		if got := retryAfter(in); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}
