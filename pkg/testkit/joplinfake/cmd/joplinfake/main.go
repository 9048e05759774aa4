// Command joplinfake serves the in-memory fake Joplin Data API
// (pkg/testkit/joplinfake) on a loopback port, for tests that run the
// notebridge binary and an outside client without Docker (see
// deploy/ci/real-clients.sh). It is test tooling, not a Joplin.
//
//	joplinfake -token-file FILE [-listen 127.0.0.1:0]
//
// Once it accepts connections it prints the base URL
// (http://127.0.0.1:PORT) as the only line on stdout; it serves until it is
// killed.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/notebridge/notebridge/pkg/testkit/joplinfake"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "joplinfake:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("joplinfake", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "listen address (loopback)")
	tokenFile := fs.String("token-file", "", "file holding the API token the fake requires")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tokenFile == "" {
		return errors.New("-token-file is required")
	}
	b, err := os.ReadFile(*tokenFile)
	if err != nil {
		return fmt.Errorf("read token file: %w", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Fprintf(stdout, "http://%s\n", ln.Addr())
	return fmt.Errorf("serve: %w", http.Serve(ln, joplinfake.New(strings.TrimSpace(string(b)))))
}
