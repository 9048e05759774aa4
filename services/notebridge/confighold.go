package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// configErrorCode is /healthz's code while the bridge holds on a
// configuration error (docs/errors.md).
const configErrorCode = "CONFIG_ERROR"

// configHold is serve's --hold-on-config-error: a bridge that cannot start
// for its configuration stays up, unhealthy, with the reason in its health
// check's output, instead of exiting into a restart loop whose reason is
// only in the logs (compose sets it; a container restarts on exit).
type configHold struct {
	on bool
	c  *config // the parsed flags, once serve's flag set has them
}

func (h *configHold) bind(fs *flag.FlagSet, c *config) {
	h.c = c
	fs.BoolVar(&h.on, "hold-on-config-error", false, "when the configuration is refused, keep running with /healthz answering 503 and the reason "+
		"(a container then stays unhealthy instead of restarting in a loop)")
}

// hold serves, in place of the bridge, a /healthz that answers 503 with
// cause on the MCP listen address until ctx ends. It returns cause when
// holding is off, or when even that address cannot be bound.
func (h *configHold) hold(ctx context.Context, cause error, stderr io.Writer) error {
	var fe flagError
	if !h.on || h.c == nil || errors.As(cause, &fe) || errors.Is(cause, flag.ErrHelp) {
		return cause
	}
	ln, err := net.Listen("tcp", h.c.Listen)
	if err != nil {
		return cause
	}
	fmt.Fprintf(stderr, "notebridge: %v\nnotebridge: not serving until the configuration is fixed; http://%s/healthz answers %s with this reason\n",
		cause, ln.Addr(), configErrorCode)
	body, _ := json.Marshal(map[string]string{"status": "misconfigured", "code": configErrorCode, "message": cause.Error()})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write(body)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%w (and the health listener failed: %v)", cause, err)
	}
	return nil
}
