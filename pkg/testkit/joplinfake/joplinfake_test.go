package joplinfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
)

const testToken = "secret-token"

type client struct {
	t    *testing.T
	fake *Server
	srv  *httptest.Server
}

func newClient(t *testing.T) *client {
	t.Helper()
	fake := New(testToken)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return &client{t: t, fake: fake, srv: srv}
}

type resp struct {
	status int
	body   []byte
	header http.Header
}

func qs(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Add(kv[i], kv[i+1])
	}
	return q
}

// call sends one request with the token added. body may be nil, a string
// (sent as is) or anything else (sent as JSON).
func (c *client) call(method, path string, query url.Values, body any) resp {
	c.t.Helper()
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	q.Set("token", testToken)
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.srv.URL+path+"?"+q.Encode(), rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.do(req)
}

func (c *client) do(req *http.Request) resp {
	c.t.Helper()
	res, err := c.srv.Client().Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp{status: res.StatusCode, body: data, header: res.Header}
}

func (r resp) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d, body %q: %v", r.status, r.body, err)
	}
	return m
}

// errorText returns the "error" string of an error answer.
func (r resp) errorText(t *testing.T) string {
	t.Helper()
	s, ok := r.object(t)["error"].(string)
	if !ok {
		t.Fatalf("no error string in %q", r.body)
	}
	return s
}

// expectError checks the status and that the error text contains want and
// a JavaScript stack trace.
func (r resp) expectError(t *testing.T, status int, want string) string {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	text := r.errorText(t)
	if !strings.Contains(text, want) {
		t.Fatalf("error %q does not contain %q", text, want)
	}
	if !strings.Contains(text, "\n    at ") || !strings.Contains(text, "/node_modules/") {
		t.Fatalf("error %q has no stack trace with local paths", text)
	}
	return text
}

// ok calls and expects 200 with a JSON object.
func (c *client) ok(method, path string, query url.Values, body any) map[string]any {
	c.t.Helper()
	r := c.call(method, path, query, body)
	if r.status != http.StatusOK {
		c.t.Fatalf("%s %s: status %d, body %s", method, path, r.status, r.body)
	}
	return r.object(c.t)
}

// list GETs one page and returns its items and has_more.
func (c *client) list(path string, query url.Values) ([]map[string]any, bool) {
	c.t.Helper()
	var p struct {
		Items   []map[string]any `json:"items"`
		HasMore *bool            `json:"has_more"`
	}
	r := c.call(http.MethodGet, path, query, nil)
	if r.status != http.StatusOK {
		c.t.Fatalf("GET %s: status %d, body %s", path, r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &p); err != nil || p.Items == nil || p.HasMore == nil {
		c.t.Fatalf("GET %s: not a page: %s (%v)", path, r.body, err)
	}
	return p.Items, *p.HasMore
}

func ids(items []map[string]any) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i], _ = it["id"].(string)
	}
	return out
}

func (c *client) folder(title, parent string) string {
	c.t.Helper()
	body := map[string]any{"title": title}
	if parent != "" {
		body["parent_id"] = parent
	}
	return c.ok(http.MethodPost, "/folders", nil, body)["id"].(string)
}

func (c *client) note(parent, title, body string) string {
	c.t.Helper()
	return c.ok(http.MethodPost, "/notes", nil, map[string]any{"parent_id": parent, "title": title, "body": body})["id"].(string)
}

// upload posts a multipart resource.
func (c *client) upload(method, path, props, filename string, data []byte) resp {
	c.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if data != nil {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="data"; filename=%q`, filename))
		h.Set("Content-Type", "application/octet-stream")
		w, err := mw.CreatePart(h)
		if err != nil {
			c.t.Fatal(err)
		}
		_, _ = w.Write(data)
	}
	if props != "" {
		if err := mw.WriteField("props", props); err != nil {
			c.t.Fatal(err)
		}
	}
	_ = mw.Close()
	req, err := http.NewRequest(method, c.srv.URL+path+"?token="+testToken, &buf)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return c.do(req)
}

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func TestPing(t *testing.T) {
	c := newClient(t)
	res, err := http.Get(c.srv.URL + "/ping")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "JoplinClipperServer" || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("ping: %d %q %q", res.StatusCode, body, res.Header.Get("Content-Type"))
	}
	c.call(http.MethodPost, "/ping", nil, "").expectError(t, 405, "Method Not Allowed")
	req, _ := http.NewRequest(http.MethodPost, c.srv.URL+"/ping", nil)
	c.do(req).expectError(t, 403, `Missing "token" parameter`)
}

func TestAuth(t *testing.T) {
	c := newClient(t)
	req, _ := http.NewRequest(http.MethodGet, c.srv.URL+"/notes", nil)
	c.do(req).expectError(t, 403, `Missing "token" parameter`)
	req, _ = http.NewRequest(http.MethodGet, c.srv.URL+"/notes?token=wrong", nil)
	text := c.do(req).expectError(t, 403, `Invalid "token" parameter`)
	if !strings.HasPrefix(text, `Invalid "token" parameter: `) {
		t.Fatalf("error text %q", text)
	}
	// The token only counts in the query string.
	req, _ = http.NewRequest(http.MethodGet, c.srv.URL+"/notes", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	c.do(req).expectError(t, 403, `Missing "token" parameter`)

	open := httptest.NewServer(New(""))
	defer open.Close()
	res, err := http.Get(open.URL + "/folders")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("no-token server: %v %v", err, res)
	}
	res.Body.Close()
}

func TestUnknownRoutes(t *testing.T) {
	c := newClient(t)
	for _, p := range []string{"/", "/nope", "/nope/" + newID()} {
		req, _ := http.NewRequest(http.MethodGet, c.srv.URL+p, nil) // no token: 404 comes first
		if text := c.do(req).expectError(t, 404, "Not Found"); !strings.HasPrefix(text, "Not Found: \n\nError: Not Found\n") {
			t.Fatalf("%s: %q", p, text)
		}
	}
	c.call(http.MethodGet, "/notes/"+newID(), nil, nil).expectError(t, 404, "Not Found")
	c.call(http.MethodGet, "/folders/x/y", nil, nil).expectError(t, 404, "Not Found")
	c.call(http.MethodPatch, "/notes", nil, nil).expectError(t, 405, "Method Not Allowed")
}

func TestRequestLogAndWriteCount(t *testing.T) {
	c := newClient(t)
	f := c.folder("Inbox", "")
	c.call(http.MethodGet, "/folders", qs("fields", "id,title", "limit", "5"), nil)
	c.call(http.MethodPut, "/folders/"+f, nil, map[string]any{"title": "In"})
	c.call(http.MethodDelete, "/folders/"+f, nil, nil)
	reqs := c.fake.Requests()
	if len(reqs) != 4 {
		t.Fatalf("got %d requests", len(reqs))
	}
	if reqs[1].Method != "GET" || reqs[1].Path != "/folders" || reqs[1].Query.Get("fields") != "id,title" || reqs[1].Query.Get("limit") != "5" {
		t.Fatalf("request %+v", reqs[1])
	}
	for _, r := range reqs {
		if _, ok := r.Query["token"]; ok {
			t.Fatalf("token logged: %+v", r)
		}
	}
	if n := c.fake.CountWrites(); n != 3 {
		t.Fatalf("CountWrites = %d", n)
	}
	reqs[0].Query.Set("x", "y") // a copy: the log is unchanged
	if _, ok := c.fake.Requests()[0].Query["x"]; ok {
		t.Fatal("Requests returned shared state")
	}
}

func TestFailNext(t *testing.T) {
	c := newClient(t)
	c.fake.FailNext(503, `{"error":"busy"}`)
	c.fake.FailNext(500, "plain failure")
	r := c.call(http.MethodPost, "/folders", nil, map[string]any{"title": "A"})
	if r.status != 503 || string(r.body) != `{"error":"busy"}` || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("first: %d %s %s", r.status, r.body, r.header.Get("Content-Type"))
	}
	r = c.call(http.MethodGet, "/folders", nil, nil)
	if r.status != 500 || string(r.body) != "plain failure" || r.header.Get("Content-Type") != "text/plain" {
		t.Fatalf("second: %d %s", r.status, r.body)
	}
	if items, _ := c.list("/folders", nil); len(items) != 0 {
		t.Fatalf("failed write changed state: %v", items)
	}
	if c.fake.CountWrites() != 1 {
		t.Fatalf("CountWrites = %d", c.fake.CountWrites())
	}
}

func TestSetDown(t *testing.T) {
	c := newClient(t)
	f := c.folder("Keep", "")
	before := len(c.fake.Requests())
	c.fake.SetDown(true)
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		req, _ := http.NewRequest(method, c.srv.URL+"/folders?token="+testToken, strings.NewReader(`{"title":"x"}`))
		res, err := c.srv.Client().Do(req)
		if err == nil {
			res.Body.Close()
			t.Fatalf("%s while down: got status %d", method, res.StatusCode)
		}
	}
	if len(c.fake.Requests()) != before {
		t.Fatal("requests logged while down")
	}
	c.fake.SetDown(false)
	items, _ := c.list("/folders", nil)
	if len(items) != 1 || items[0]["id"] != f {
		t.Fatalf("state after outage: %v", items)
	}
}

func TestNounce(t *testing.T) {
	c := newClient(t)
	f := c.folder("N", "")
	body := map[string]any{"parent_id": f, "title": "once"}
	c.ok(http.MethodPost, "/notes", qs("nounce", "n1"), body)
	c.call(http.MethodPost, "/notes", qs("nounce", "n1"), body).expectError(t, 400, "Duplicate Nounce")
	// A different request under the same nounce goes through.
	c.ok(http.MethodPost, "/notes", qs("nounce", "n1"), map[string]any{"parent_id": f, "title": "twice"})
	if items, _ := c.list("/notes", nil); len(items) != 2 {
		t.Fatalf("notes: %v", items)
	}
}

func TestOptions(t *testing.T) {
	c := newClient(t)
	req, _ := http.NewRequest(http.MethodOptions, c.srv.URL+"/notes", nil)
	r := c.do(req)
	if r.status != 200 || len(r.body) != 0 || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("OPTIONS: %d %q %v", r.status, r.body, r.header)
	}
}

func TestConcurrentUse(t *testing.T) {
	c := newClient(t)
	f := c.folder("Busy", "")
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			data, _ := json.Marshal(map[string]any{"parent_id": f, "title": fmt.Sprint("n", i)})
			res, err := http.Post(c.srv.URL+"/notes?token="+testToken, "application/json", bytes.NewReader(data))
			if err != nil {
				errs <- err
				return
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				errs <- errors.New(res.Status)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	items, _ := c.list("/notes", nil)
	if len(items) != 40 {
		t.Fatalf("got %d notes", len(items))
	}
}
