// Package house holds the repository's structural rules as tests: package
// names match their folders, and the zones' imports point one way. It has
// no code of its own.
package house
