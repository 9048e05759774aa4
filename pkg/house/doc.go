// Package house holds the repository's structural rules as tests: package
// names match their folders, the zones' imports point one way, nothing in
// production imports the test scaffolding, and operations are made only by
// registry.Define. It has no code of its own.
package house
