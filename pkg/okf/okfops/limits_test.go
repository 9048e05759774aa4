package okfops

import (
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/okf/bundle"
)

// DefaultTestLimits returns a copy of the default bounds to adjust.
func DefaultTestLimits() bundle.Limits { return bundle.DefaultLimits }

func registryCode(s string) domainerr.Code { return domainerr.Code(s) }
