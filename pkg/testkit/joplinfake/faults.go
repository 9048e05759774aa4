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

// serverErrorBody is a Joplin-style error answer, stack trace included.
const serverErrorBody = `{"error":"Internal Server Error: injected\n    at Api.route (/usr/lib/node_modules/joplin/api.js:1:1)"}`

func answerError(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(serverErrorBody))
}

// FailAfterServing wraps next so that every request matching match is
// fully served (its effect happens) and then answered with status and a
// Joplin-style error instead of its result: Joplin failing after it wrote.
func FailAfterServing(next http.Handler, status int, match func(*http.Request) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !match(r) {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(httptest.NewRecorder(), r)
		answerError(w, status)
	})
}

// FailBeforeServing wraps next so that every request matching match is
// answered with status and a Joplin-style error without reaching next:
// Joplin failing before it writes anything.
func FailBeforeServing(next http.Handler, status int, match func(*http.Request) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !match(r) {
			next.ServeHTTP(w, r)
			return
		}
		answerError(w, status)
	})
}
