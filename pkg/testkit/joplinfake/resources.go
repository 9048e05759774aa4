package joplinfake

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"regexp"
	"strings"
)

// routeResources is routes/resources.ts.
func (s *Server) routeResources(req *request, id, link string, _ []string) (any, *apiError) {
	if req.method == http.MethodGet {
		switch link {
		case "file":
			r := s.resources.get(id)
			if r == nil {
				return nil, errNotFound(frameResources)
			}
			return &fileResult{mime: r.str("mime"), filename: friendlyFilename(r), data: append([]byte(nil), s.blobs[id]...)}, nil
		case "notes":
			// NoteResource.associatedNoteIds: every note, trashed ones
			// included, whose body links to the resource.
			var rows []record
			for _, n := range s.notes.all() {
				if contains(linkedIDs(n.str("body")), id) {
					rows = append(rows, n)
				}
			}
			return collectionPage(noteKind, rows, req.query, len(rows) > 0, true)
		case "":
		default:
			return nil, errNotFound(frameResources)
		}
	}
	if req.method == http.MethodPost || req.method == http.MethodPut {
		isUpdate := req.method == http.MethodPut
		if len(req.files) == 0 {
			if isUpdate {
				// Properties only; the blob is left alone.
				return s.defaultAction(resourceKind, s.resources, req, id, link)
			}
			return nil, errBadRequest("Resource cannot be created without a file", frameResources)
		}
		if isUpdate && id == "" {
			return nil, errBadRequest("Missing resource ID", frameResources)
		}
		return s.resourceFromUpload(req, id, isUpdate)
	}
	return s.defaultAction(resourceKind, s.resources, req, id, link)
}

// multipartExt is the extension multiparty keeps from the uploaded file
// name when it names its temporary file.
var multipartExt = regexp.MustCompile(`^(\.[_\-a-zA-Z0-9]{0,16})`)

// resourceFromUpload is shim.createResourceFromPath as called by the route.
// Only "id" and "title" are taken from props: mime and file_extension come
// from the uploaded file name's extension (or, failing that, from sniffing
// image bytes), size from the data, and the title defaults to the name of
// multiparty's temporary file. On update the title is kept unless given.
func (s *Server) resourceFromUpload(req *request, id string, isUpdate bool) (any, *apiError) {
	props, _, aerr := parseBody(req.body)
	if aerr != nil {
		return nil, aerr
	}
	props = without(props, readonly(req.method))
	file := req.files[0]
	ext := ""
	if i := strings.LastIndex(file.filename, "."); i > 0 {
		if m := multipartExt.FindString(file.filename[i:]); m != "" {
			ext = m[1:]
		}
	}
	mimeType := mimeByExt[strings.ToLower(ext)]
	if mimeType == "" {
		if sniffExt, sniffMime := sniffImage(file.data); sniffMime != "" {
			ext, mimeType = sniffExt, sniffMime
		} else {
			mimeType = "application/octet-stream"
		}
	}
	var r record
	if isUpdate {
		old := s.resources.get(id)
		if old == nil {
			return nil, errNotFound(frameResources)
		}
		r = old.clone()
	} else {
		if truthy(props["id"]) {
			id = toStr(props["id"])
		} else {
			id = ""
		}
		if aerr := validate(map[string]any{"id": id}, true); aerr != nil {
			return nil, aerr
		}
		if id == "" {
			id = newID()
		} else if s.resources.get(id) != nil {
			return nil, errUnique("resources")
		}
		r = resourceKind.newRecord()
		r["id"] = id
		r["title"] = tempFileName(ext)
	}
	if v, ok := props["title"]; ok {
		r["title"] = toStr(v)
	}
	r["mime"], r["file_extension"], r["size"] = mimeType, ext, int64(len(file.data))
	ts := s.now()
	r["updated_time"], r["user_updated_time"], r["blob_updated_time"] = ts, ts, ts
	if isUpdate {
		s.resources.rows[id] = r
	} else {
		r["created_time"], r["user_created_time"] = ts, ts
		s.resources.insert(r)
	}
	s.blobs[id] = append([]byte(nil), file.data...)
	return render(resourceKind, r, nil), nil
}

// tempFileName mimics multiparty's temporary file names: 24 random
// base64url characters plus the original extension.
func tempFileName(ext string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var b [24]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	if ext == "" {
		return string(b[:])
	}
	return string(b[:]) + "." + ext
}

var unsafeFilename = regexp.MustCompile(`[/\\:*?"<>|\x00-\x1f]`)

// friendlyFilename is Resource.friendlyFilename, used in the
// Content-disposition of GET /resources/:id/file.
func friendlyFilename(r record) string {
	name := unsafeFilename.ReplaceAllString(r.str("title"), "_")
	if name == "" {
		name = r.str("id")
	}
	if ext := r.str("file_extension"); ext != "" && !strings.HasSuffix(strings.ToLower(name), "."+strings.ToLower(ext)) {
		name += "." + ext
	}
	return name
}

// sniffImage is what the image-type package detects from the first bytes.
func sniffImage(data []byte) (ext, mimeType string) {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "png", "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "jpg", "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF8")):
		return "gif", "image/gif"
	case len(data) >= 12 && bytes.Equal(data[:4], []byte("RIFF")) && bytes.Equal(data[8:12], []byte("WEBP")):
		return "webp", "image/webp"
	case bytes.HasPrefix(data, []byte("BM")):
		return "bmp", "image/bmp"
	case bytes.HasPrefix(data, []byte("II*\x00")), bytes.HasPrefix(data, []byte("MM\x00*")):
		return "tif", "image/tiff"
	case bytes.HasPrefix(data, []byte("\x00\x00\x01\x00")):
		return "ico", "image/x-icon"
	}
	return "", ""
}

// mimeByExt is the part of Joplin's mime-utils table that tests are likely
// to meet.
var mimeByExt = map[string]string{
	"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "jpe": "image/jpeg", "gif": "image/gif",
	"webp": "image/webp", "bmp": "image/bmp", "svg": "image/svg+xml", "tif": "image/tiff", "tiff": "image/tiff",
	"ico": "image/x-icon", "heic": "image/heic", "avif": "image/avif",
	"pdf": "application/pdf", "txt": "text/plain", "text": "text/plain", "log": "text/plain",
	"md": "text/markdown", "markdown": "text/markdown", "html": "text/html", "htm": "text/html",
	"css": "text/css", "csv": "text/csv", "js": "application/javascript", "json": "application/json",
	"xml": "application/xml", "yaml": "text/yaml", "yml": "text/yaml", "ics": "text/calendar",
	"vcf": "text/vcard", "rtf": "application/rtf", "eml": "message/rfc822",
	"zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
	"7z": "application/x-7z-compressed", "rar": "application/vnd.rar", "epub": "application/epub+zip",
	"mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "oga": "audio/ogg", "m4a": "audio/mp4",
	"flac": "audio/flac", "mp4": "video/mp4", "m4v": "video/mp4", "webm": "video/webm",
	"mov": "video/quicktime", "avi": "video/x-msvideo", "mkv": "video/x-matroska",
	"doc": "application/msword", "dot": "application/msword",
	"docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"xls":  "application/vnd.ms-excel",
	"xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"ppt":  "application/vnd.ms-powerpoint",
	"pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	"odt":  "application/vnd.oasis.opendocument.text", "ods": "application/vnd.oasis.opendocument.spreadsheet",
	"odp": "application/vnd.oasis.opendocument.presentation",
}

// routeRevisions is the default route over the revisions table.
func (s *Server) routeRevisions(req *request, id, link string, _ []string) (any, *apiError) {
	return s.defaultAction(revisionKind, s.revisions, req, id, link)
}
