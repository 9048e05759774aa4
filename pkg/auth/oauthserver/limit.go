package oauthserver

import (
	"net/http"
	"strconv"

	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/memory"
)

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
