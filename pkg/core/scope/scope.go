// Package scope defines the OAuth scopes notebridge grants (notes:read,
// notes:write, okf:read, okf:write), derives the one an operation needs from
// its toolset and effect, and holds sets of them. It decides nothing: the
// executor alone decides whether a caller's scopes cover an operation.
package scope

import (
	"fmt"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/registry"
)

// Scope is one OAuth scope.
type Scope string

// The scopes, in documentation order.
const (
	NotesRead  Scope = "notes:read"
	NotesWrite Scope = "notes:write"
	OKFRead    Scope = "okf:read"
	OKFWrite   Scope = "okf:write"
)

// All lists every scope in documentation order.
var All = []Scope{NotesRead, NotesWrite, OKFRead, OKFWrite}

// resources maps a toolset to the resource part of its scopes. The catalog
// test checks that every toolset has an entry.
var resources = map[string]string{"joplin": "notes", "okf": "okf"}

// Required returns the scope an operation needs: <resource>:read for an
// operation whose effect is read, <resource>:write for every other effect.
// ok is false for a toolset without scopes, which no token can call.
func Required(op registry.Operation) (s Scope, ok bool) {
	res, ok := resources[op.Toolset]
	if !ok {
		return "", false
	}
	if op.Effect == registry.EffectRead {
		return Scope(res + ":read"), true
	}
	return Scope(res + ":write"), true
}

// Served returns the scopes the operations ops need: what an
// authorization server in front of them supports (its scopes_supported).
func Served(ops []registry.Operation) Set {
	var out Set
	for _, op := range ops {
		if sc, ok := Required(op); ok {
			out = out.Union(NewSet(sc))
		}
	}
	return out
}

// Known reports whether s is one of the scopes in All.
func Known(s Scope) bool {
	for _, k := range All {
		if k == s {
			return true
		}
	}
	return false
}

// Set is a set of scopes, always held in documentation order without
// duplicates.
type Set struct{ bits uint8 }

// NewSet builds a set; unknown scopes are dropped.
func NewSet(scopes ...Scope) Set {
	var s Set
	for _, sc := range scopes {
		for i, k := range All {
			if k == sc {
				s.bits |= 1 << i
			}
		}
	}
	return s
}

// Parse reads a space-separated scope string (RFC 6749 §3.3). Every item
// must be a known scope; repeats are allowed and collapse.
func Parse(s string) (Set, error) {
	var out Set
	for _, item := range strings.Fields(s) {
		if !Known(Scope(item)) {
			return Set{}, fmt.Errorf("unknown scope %q", item)
		}
		out = out.Union(NewSet(Scope(item)))
	}
	return out, nil
}

// Has reports whether sc is in the set.
func (s Set) Has(sc Scope) bool {
	b := NewSet(sc).bits
	return b != 0 && s.bits&b == b
}

// Contains reports whether every scope of o is in s.
func (s Set) Contains(o Set) bool { return o.bits&^s.bits == 0 }

// Union returns the scopes in s or o.
func (s Set) Union(o Set) Set { return Set{s.bits | o.bits} }

// Empty reports whether the set has no scope.
func (s Set) Empty() bool { return s.bits == 0 }

// OrAll is s, or every scope when s is empty: a served set left unset
// means every toolset is served.
func (s Set) OrAll() Set {
	if s.Empty() {
		return NewSet(All...)
	}
	return s
}

// List returns the scopes in documentation order.
func (s Set) List() []Scope {
	var out []Scope
	for i, k := range All {
		if s.bits&(1<<i) != 0 {
			out = append(out, k)
		}
	}
	return out
}

// String renders the set as a space-separated scope string.
func (s Set) String() string {
	parts := make([]string, 0, len(All))
	for _, sc := range s.List() {
		parts = append(parts, string(sc))
	}
	return strings.Join(parts, " ")
}
