package joplinfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// libPath is where the joplin CLI installs @joplin/lib when it is installed
// globally with npm. Real error responses carry stack traces with such local
// paths, so the fake reproduces them.
const libPath = "/usr/lib/node_modules/joplin/node_modules/@joplin/lib"

// Stack frames used in the fake stack traces, one per place Joplin throws.
const (
	frameAPIRoute      = "Api.route (" + libPath + "/services/rest/Api.js:161:35)"
	frameCheckToken    = "Api.checkToken_ (" + libPath + "/services/rest/Api.js:226:42)"
	frameNounce        = "Api.route (" + libPath + "/services/rest/Api.js:167:23)"
	frameDefaultAction = "getOneModel (" + libPath + "/services/rest/utils/defaultAction.js:22:19)"
	frameDefaultMethod = "Object.default_1 [as default] (" + libPath + "/services/rest/utils/defaultAction.js:50:11)"
	frameNotes         = "Object.default_1 [as default] (" + libPath + "/services/rest/routes/notes.js:417:23)"
	frameRequestNote   = "requestNoteToNote (" + libPath + "/services/rest/routes/notes.js:133:19)"
	frameFolders       = "Object.default_1 [as default] (" + libPath + "/services/rest/routes/folders.js:33:118)"
	frameTags          = "Object.default_1 [as default] (" + libPath + "/services/rest/routes/tags.js:19:23)"
	frameTagSave       = "Function.save (" + libPath + "/models/Tag.js:160:27)"
	frameFolderSave    = "Function.save (" + libPath + "/models/Folder.js:712:23)"
	frameResources     = "Object.default_1 [as default] (" + libPath + "/services/rest/routes/resources.js:52:27)"
	frameSearch        = "Object.default_1 [as default] (" + libPath + "/services/rest/routes/search.js:17:19)"
	framePagination    = "Object.default_1 [as default] (" + libPath + "/services/rest/utils/requestPaginationOptions.js:19:15)"
	frameValidation    = "Function.userSideValidation (" + libPath + "/models/BaseModel.js:585:23)"
	frameSQLite        = "Database.<anonymous> (/usr/lib/node_modules/joplin/node_modules/@joplin/lib/database-driver-node.js:64:31)"
	frameJSONParse     = "JSON.parse (<anonymous>)"
)

// apiError is an error thrown inside the emulated Joplin server. It is
// rendered the way ClipperServer renders errors: the message parts
// ("Internal Server Error" for 5xx, the message, then the stack) joined with
// ": ", in {"error": "..."}.
type apiError struct {
	status int
	msg    string
	name   string // JavaScript error class shown in the stack; "Error" when empty
	frame  string // innermost stack frame
}

func (e *apiError) Error() string { return e.msg }

// text returns the "error" value of the response body.
func (e *apiError) text() string {
	var parts []string
	if e.status >= 500 {
		parts = append(parts, "Internal Server Error")
	}
	if e.msg != "" {
		parts = append(parts, e.msg)
	}
	parts = append(parts, "\n\n"+e.stack())
	return strings.Join(parts, ": ")
}

func (e *apiError) stack() string {
	name := e.name
	if name == "" {
		name = "Error"
	}
	frame := e.frame
	if frame == "" {
		frame = frameAPIRoute
	}
	return fmt.Sprintf("%s: %s\n    at %s\n    at async Api.route (%s/services/rest/Api.js:196:20)\n    at async execRequest (%s/ClipperServer.js:160:38)",
		name, e.msg, frame, libPath, libPath)
}

func errNotFound(frame string) *apiError {
	return &apiError{status: http.StatusNotFound, msg: "Not Found", frame: frame}
}

func errBadRequest(msg, frame string) *apiError {
	return &apiError{status: http.StatusBadRequest, msg: msg, frame: frame}
}

func errMethodNotAllowed(frame string) *apiError {
	return &apiError{status: http.StatusMethodNotAllowed, msg: "Method Not Allowed", frame: frame}
}

func errInternal(msg, frame string) *apiError {
	return &apiError{status: http.StatusInternalServerError, msg: msg, frame: frame}
}

func errTypeError(msg, frame string) *apiError {
	return &apiError{status: http.StatusInternalServerError, msg: msg, name: "TypeError", frame: frame}
}

// errSQLite mimics an error coming out of the node sqlite3 driver, whose
// message Joplin wraps so that it starts with "Error: ".
func errSQLite(detail string) *apiError {
	return &apiError{status: http.StatusInternalServerError, msg: "Error: " + detail, frame: frameSQLite}
}

func errUnique(table string) *apiError {
	return errSQLite("SQLITE_CONSTRAINT: UNIQUE constraint failed: " + table + ".id")
}

func errNoColumn(col string) *apiError {
	return errSQLite("SQLITE_ERROR: no such column: " + col)
}

func errSyntax(near string) *apiError {
	return errSQLite(fmt.Sprintf("SQLITE_ERROR: near %q: syntax error", near))
}

// errJSON renders a JSON.parse failure the way Node 18+ words it.
func errJSON(body string, err error) *apiError {
	msg := "Unexpected end of JSON input"
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 && int(se.Offset) <= len(body) {
		snippet := body
		if len(snippet) > 10 {
			snippet = snippet[:10] + "\"..."
		} else {
			snippet += "\""
		}
		msg = fmt.Sprintf("Unexpected token '%c', \"%s is not valid JSON", body[se.Offset-1], snippet)
	} else if strings.HasPrefix(err.Error(), "trailing:") {
		msg = "Unexpected non-whitespace character after JSON at position " + strings.TrimPrefix(err.Error(), "trailing:")
	}
	return &apiError{status: http.StatusInternalServerError, msg: msg, name: "SyntaxError", frame: frameJSONParse}
}

// fileResult is a route result answered as an attachment.
type fileResult struct {
	mime     string
	filename string
	data     []byte
}

// response is a fully computed HTTP answer, written after the lock is
// released.
type response struct {
	status      int
	contentType string
	headers     map[string]string
	body        []byte
}

// resultResponse turns a route result into an HTTP response the way
// ClipperServer.writeResponse does: strings as text/plain, nil as an empty
// text body, attachments as raw bytes, anything else as JSON.
func resultResponse(v any) response {
	switch x := v.(type) {
	case nil:
		return response{status: http.StatusOK, contentType: "text/plain"}
	case string:
		return response{status: http.StatusOK, contentType: "text/plain", body: []byte(x)}
	case *fileResult:
		mime := x.mime
		if mime == "" {
			mime = "application/octet-stream"
		}
		name := x.filename
		if name == "" {
			name = "file"
		}
		return response{
			status:      http.StatusOK,
			contentType: mime,
			headers: map[string]string{
				"Content-disposition": "attachment; filename=" + name,
				"Content-Length":      strconv.Itoa(len(x.data)),
			},
			body: x.data,
		}
	default:
		return response{status: http.StatusOK, contentType: "application/json", body: marshal(x)}
	}
}

func errorResponse(e *apiError) response {
	return response{status: e.status, contentType: "application/json", body: marshal(map[string]string{"error": e.text()})}
}

// marshal encodes v as JavaScript's JSON.stringify would: no HTML escaping
// and no trailing newline.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("joplinfake: encode response: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func (r response) write(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", r.contentType)
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS, PUT, PATCH, DELETE")
	h.Set("Access-Control-Allow-Headers", "X-Requested-With,content-type")
	for k, v := range r.headers {
		h.Set(k, v)
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body)
}
