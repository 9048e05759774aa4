// Command schemacheck validates JSON documents against a JSON Schema
// (draft-07 or later), for the install bundles' files in CI
// (deploy/ci/bundles.sh): schemacheck SCHEMA DOCUMENT...
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: schemacheck SCHEMA DOCUMENT...")
		os.Exit(2)
	}
	c := jsonschema.NewCompiler()
	schema, err := c.Compile(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "schemacheck: compile %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	failed := false
	for _, path := range os.Args[2:] {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "schemacheck: %v\n", err)
			os.Exit(1)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "schemacheck: %s is not JSON: %v\n", path, err)
			os.Exit(1)
		}
		if err := schema.Validate(doc); err != nil {
			failed = true
			b, _ := json.MarshalIndent(err.(*jsonschema.ValidationError).BasicOutput(), "", "  ")
			fmt.Fprintf(os.Stderr, "schemacheck: %s does not match %s:\n%s\n", path, os.Args[1], b)
			continue
		}
		fmt.Printf("schemacheck: %s matches %s\n", path, os.Args[1])
	}
	if failed {
		os.Exit(1)
	}
}
