package oauthas

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/memory"
)

// ClientAddr is the caller's IP, the key of rate limits and lockouts. Behind a reverse proxy on a loopback or
// private address (Caddy), it is the last X-Forwarded-For entry: the
// address the proxy itself saw.
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip != nil && (ip.IsLoopback() || ip.IsPrivate()) {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			parts := strings.Split(xff[len(xff)-1], ",")
			if last := net.ParseIP(strings.TrimSpace(parts[len(parts)-1])); last != nil {
				return last.String()
			}
		}
	}
	return host
}

// limited bounds the requests each client address may send to h, per rate
// (ulule format, e.g. "20-M"); beyond it the answer is 429 with
// Retry-After.
func limited(rate string, h http.Handler) (http.Handler, error) {
	r, err := limiter.NewRateFromFormatted(rate)
	if err != nil {
		return nil, err
	}
	lim := limiter.New(memory.NewStore(), r)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		lc, err := lim.Get(req.Context(), ClientAddr(req))
		if err != nil || lc.Reached {
			w.Header().Set("Retry-After", strconv.Itoa(int(r.Period.Seconds())))
			writeJSONError(w, http.StatusTooManyRequests, "slow_down", "too many requests from this address; retry later")
			return
		}
		h.ServeHTTP(w, req)
	}), nil
}
