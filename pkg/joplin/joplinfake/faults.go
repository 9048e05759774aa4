package joplinfake

import (
	"net/http"
	"net/http/httptest"
)

// DropAnswers wraps next so that every request matching match is fully
// served (its effect happens) and then the connection is closed without an
// answer: the ambiguous write outcome a client must handle.
func DropAnswers(next http.Handler, match func(*http.Request) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !match(r) {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(httptest.NewRecorder(), r)
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	})
}
