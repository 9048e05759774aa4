// Package joplinfake is an in-memory fake of the Joplin Data API as served
// by the joplin CLI 3.5.1 (`joplin server start`), for hermetic tests:
//
//	fake := joplinfake.New("token")
//	srv := httptest.NewServer(fake)
//	defer srv.Close()
//
// It follows Joplin's own route code (packages/lib/services/rest) rather
// than its documentation, quirks included: single-item GETs return only
// id, parent_id and title (plus type_) unless ?fields= asks for more, errors
// carry a JavaScript stack trace with local paths, an exactly-full last page
// reports has_more, DELETE of a missing note or folder answers 200, tags are
// stored lower-case, and search only sees notes as of the last
// ReindexSearch. Test hooks simulate outages and injected failures.
package joplinfake

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// Request is one request the fake received, as logged for tests.
type Request struct {
	// Method is the HTTP method.
	Method string
	// Path is the URL path, without the query string.
	Path string
	// Query holds the query parameters, with "token" removed.
	Query url.Values
}

// Server is an in-memory Joplin Data API and an http.Handler. It is safe
// for concurrent use: one mutex guards all state.
type Server struct {
	mu        sync.Mutex
	token     string
	notes     *table
	folders   *table
	tags      *table
	resources *table
	noteTags  *table
	revisions *table
	blobs     map[string][]byte
	index     map[string]indexEntry // search index snapshot, by note id
	changes   []itemChange          // the item_changes table, oldest first
	nounces   map[string]string     // nounce -> request fingerprint
	log       []Request
	fails     []failure
	down      bool
	lastTime  int64
}

type failure struct {
	status int
	body   string
}

// New returns an empty Data API (no notebooks, like a fresh profile) that
// requires ?token=token on every call but GET /ping. An empty token turns
// authentication off, as Joplin does when it has no token. The search
// index starts empty: see ReindexSearch.
func New(token string) *Server {
	return &Server{
		token:     token,
		notes:     newTable(noteKind),
		folders:   newTable(folderKind),
		tags:      newTable(tagKind),
		resources: newTable(resourceKind),
		noteTags:  newTable(noteTagKind),
		revisions: newTable(revisionKind),
		blobs:     map[string][]byte{},
		index:     map[string]indexEntry{},
		nounces:   map[string]string{},
	}
}

// Requests returns a copy of the log of requests received while the server
// was up, oldest first. Query never contains the token.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.log))
	for i, r := range s.log {
		q := url.Values{}
		for k, v := range r.Query {
			q[k] = append([]string(nil), v...)
		}
		out[i] = Request{Method: r.Method, Path: r.Path, Query: q}
	}
	return out
}

// CountWrites returns how many POST, PUT and DELETE requests were received
// while the server was up, whatever their outcome.
func (s *Server) CountWrites() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.log {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodDelete:
			n++
		}
	}
	return n
}

// SetDown simulates an outage. While down, every request's connection is
// closed without an answer, and the request is not logged (Joplin never saw
// it). State is kept.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// FailNext makes the next request (after logging, before authentication
// or any state change) answer status with body. Calls queue up: n calls
// fail the next n requests. A body that is valid JSON is sent as
// application/json, anything else as text/plain.
func (s *Server) FailNext(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails = append(s.fails, failure{status: status, body: body})
}

// ReindexSearch snapshots the current notes into the search index. Real
// CLI search only sees notes as they were when its index was built (at
// server start): notes created or edited later are not found by their new
// text until a restart. This call plays the restart.
func (s *Server) ReindexSearch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.index = map[string]indexEntry{}
	for id, n := range s.notes.rows {
		s.index[id] = indexEntry{title: n.str("title"), body: n.str("body"), seq: s.notes.rowid[id]}
	}
}

// LeaveEncrypted plays what a sync leaves when the master password is
// missing or wrong: the note stays encrypted (encryption_applied 1, no
// readable title or body). The Data API cannot set this itself.
func (s *Server) LeaveEncrypted(noteID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.notes.get(noteID)
	if n == nil {
		return false
	}
	n["encryption_applied"], n["title"], n["body"] = int64(1), "", ""
	return true
}

// now returns the current time in milliseconds, strictly increasing across
// calls (it waits for the next millisecond when needed) so that items
// written in sequence sort in that order and no timestamp is in the future.
func (s *Server) now() int64 {
	t := time.Now().UnixMilli()
	for t <= s.lastTime {
		time.Sleep(100 * time.Microsecond)
		t = time.Now().UnixMilli()
	}
	s.lastTime = t
	return t
}

// upload is one file part of a multipart request.
type upload struct {
	filename string
	data     []byte
}

// request is the parsed request handed to the routes, like Api.Request.
type request struct {
	method string
	path   string // as received, leading slashes included
	query  url.Values
	body   string // raw body, or the "props" part of a multipart body
	files  []upload
}

// ServeHTTP answers one Data API call.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		drop(w)
		return
	}
	req, perr := readRequest(r)
	resp := s.serve(r, req, perr)
	resp.write(w)
}

// drop closes the connection without writing anything.
func drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// readRequest reads the body like ClipperServer: multipart bodies through
// multiparty (field "props" becomes the body, file parts named "data" the
// files), other POST and PUT bodies as text, and nothing for other methods.
func readRequest(r *http.Request) (*request, error) {
	req := &request{method: r.Method, path: r.URL.Path, query: r.URL.Query()}
	ct := r.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "multipart/form-data") {
		mr, err := r.MultipartReader()
		if err != nil {
			return req, err
		}
		gotProps := false
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return req, err
			}
			data, err := io.ReadAll(part)
			if err != nil {
				return req, err
			}
			_, params, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
			_, isFile := params["filename"]
			switch {
			case isFile && part.FormName() == "data":
				req.files = append(req.files, upload{filename: part.FileName(), data: data})
			case !isFile && part.FormName() == "props" && !gotProps:
				req.body, gotProps = string(data), true
			}
		}
		return req, nil
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			return req, err
		}
		req.body = string(data)
	}
	return req, nil
}

// serve logs the request and computes its answer under the lock.
func (s *Server) serve(r *http.Request, req *request, perr error) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := url.Values{}
	for k, v := range r.URL.Query() {
		if k != "token" {
			q[k] = v
		}
	}
	s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Query: q})
	if len(s.fails) > 0 {
		f := s.fails[0]
		s.fails = s.fails[1:]
		ct := "text/plain"
		if isJSON(f.body) {
			ct = "application/json"
		}
		return response{status: f.status, contentType: ct, body: []byte(f.body)}
	}
	if perr != nil {
		return response{status: http.StatusInternalServerError, contentType: "text/plain", body: []byte(perr.Error())}
	}
	if req.method == http.MethodOptions {
		return response{status: http.StatusOK, contentType: "application/json"}
	}
	v, aerr := s.route(req)
	if aerr != nil {
		return errorResponse(aerr)
	}
	return resultResponse(v)
}

type routeFunc func(s *Server, req *request, id, link string, params []string) (any, *apiError)

var routes = map[string]routeFunc{
	"ping":      (*Server).routePing,
	"notes":     (*Server).routeNotes,
	"folders":   (*Server).routeFolders,
	"tags":      (*Server).routeTags,
	"resources": (*Server).routeResources,
	"search":    (*Server).routeSearch,
	"events":    (*Server).routeEvents,
	"revisions": (*Server).routeRevisions,
}

// route is Api.route: find the route (404 before anything else), refuse a
// repeated nounce, check the token, then dispatch.
func (s *Server) route(req *request) (any, *apiError) {
	path := strings.TrimLeft(req.path, "/")
	if path == "" {
		return nil, errNotFound(frameAPIRoute)
	}
	parts := strings.Split(path, "/")
	fn := routes[parts[0]]
	if fn == nil {
		return nil, errNotFound(frameAPIRoute)
	}
	if nounce := req.query.Get("nounce"); nounce != "" {
		fp := fingerprint(req)
		if s.nounces[nounce] == fp {
			return nil, errBadRequest("Duplicate Nounce", frameNounce)
		}
		s.nounces[nounce] = fp
	}
	if aerr := s.checkToken(req, path); aerr != nil {
		return nil, aerr
	}
	var id, link string
	var params []string
	if len(parts) > 1 {
		id = parts[1]
	}
	if len(parts) > 2 {
		link = parts[2]
		params = parts[3:]
	}
	return fn(s, req, id, link, params)
}

// fingerprint is the md5 Joplin keeps per nounce: method, path, body, full
// query (token included) and number of files.
func fingerprint(req *request) string {
	keys := make([]string, 0, len(req.query))
	for k := range req.query {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := md5.New()
	for _, part := range []string{req.method, req.path, req.body} {
		_, _ = io.WriteString(h, part+"\x00")
	}
	for _, k := range keys {
		_, _ = io.WriteString(h, k+"="+strings.Join(req.query[k], "\x01")+"\x00")
	}
	_, _ = io.WriteString(h, string(rune('0'+len(req.files))))
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Server) checkToken(req *request, path string) *apiError {
	if req.method == http.MethodGet && (path == "ping" || path == "auth" || path == "auth/check") {
		return nil
	}
	if s.token == "" {
		return nil
	}
	tokens := req.query["token"]
	if len(tokens) == 0 || tokens[0] == "" {
		return &apiError{status: http.StatusForbidden, msg: `Missing "token" parameter`, frame: frameCheckToken}
	}
	if len(tokens) > 1 || tokens[0] != s.token {
		return &apiError{status: http.StatusForbidden, msg: `Invalid "token" parameter`, frame: frameCheckToken}
	}
	return nil
}

func (s *Server) routePing(req *request, _, _ string, _ []string) (any, *apiError) {
	if req.method != http.MethodGet {
		return nil, errMethodNotAllowed(frameAPIRoute)
	}
	return "JoplinClipperServer", nil
}
