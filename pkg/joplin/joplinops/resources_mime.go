package joplinops

import (
	"mime"
	"net/http"
	"path"
	"regexp"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// mimeExts lists MIME types with their file extensions, the preferred one
// first. Joplin derives a resource's mime from the uploaded file name's
// extension, so a resource is uploaded under the preferred extension of
// its type. The extensions are ones Joplin 3.5.1 maps back to that type,
// except where its table names an older alias (wav, flac, aac, vcf, rar,
// woff, ttf, otf) or nothing (yaml, gz, heic, opus, woff2, wasm); there the
// bridge sets the mime explicitly after the upload.
var mimeExts = []struct {
	mime string
	exts []string
}{
	{"image/png", []string{"png"}}, {"image/jpeg", []string{"jpg", "jpeg", "jpe"}}, {"image/gif", []string{"gif"}},
	{"image/webp", []string{"webp"}}, {"image/svg+xml", []string{"svg"}}, {"image/bmp", []string{"bmp"}},
	{"image/x-icon", []string{"ico"}}, {"image/tiff", []string{"tif", "tiff"}}, {"image/avif", []string{"avif"}},
	{"image/heic", []string{"heic"}},
	{"application/pdf", []string{"pdf"}}, {"application/postscript", []string{"ps", "eps"}},
	{"text/plain", []string{"txt", "text", "log"}}, {"text/markdown", []string{"md", "markdown"}},
	{"text/html", []string{"html", "htm"}}, {"text/css", []string{"css"}}, {"text/csv", []string{"csv"}},
	{"text/calendar", []string{"ics"}}, {"text/vcard", []string{"vcf"}}, {"application/yaml", []string{"yaml", "yml"}},
	{"application/javascript", []string{"js"}}, {"application/json", []string{"json"}},
	{"application/xml", []string{"xml"}}, {"application/rtf", []string{"rtf"}}, {"message/rfc822", []string{"eml"}},
	{"application/zip", []string{"zip"}}, {"application/gzip", []string{"gz"}}, {"application/x-tar", []string{"tar"}},
	{"application/x-7z-compressed", []string{"7z"}}, {"application/vnd.rar", []string{"rar"}},
	{"application/epub+zip", []string{"epub"}},
	{"audio/mpeg", []string{"mp3"}}, {"audio/wav", []string{"wav"}}, {"audio/ogg", []string{"ogg", "oga"}},
	{"audio/opus", []string{"opus"}}, {"audio/mp4", []string{"m4a"}}, {"audio/flac", []string{"flac"}},
	{"audio/aac", []string{"aac"}}, {"audio/webm", []string{"weba"}}, {"audio/midi", []string{"mid", "midi"}},
	{"video/mp4", []string{"mp4"}}, {"video/webm", []string{"webm"}}, {"video/quicktime", []string{"mov"}},
	{"video/x-msvideo", []string{"avi"}}, {"video/x-matroska", []string{"mkv"}},
	{"application/msword", []string{"doc"}}, {"application/vnd.ms-excel", []string{"xls"}},
	{"application/vnd.ms-powerpoint", []string{"ppt"}},
	{"application/vnd.openxmlformats-officedocument.wordprocessingml.document", []string{"docx"}},
	{"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", []string{"xlsx"}},
	{"application/vnd.openxmlformats-officedocument.presentationml.presentation", []string{"pptx"}},
	{"application/vnd.oasis.opendocument.text", []string{"odt"}},
	{"application/vnd.oasis.opendocument.spreadsheet", []string{"ods"}},
	{"application/vnd.oasis.opendocument.presentation", []string{"odp"}},
	{"font/woff", []string{"woff"}}, {"font/woff2", []string{"woff2"}}, {"font/ttf", []string{"ttf"}},
	{"font/otf", []string{"otf"}}, {"application/wasm", []string{"wasm"}},
	{"application/octet-stream", []string{"bin"}},
}

var (
	extByMime = map[string]string{}
	mimeByExt = map[string]string{}
)

func init() {
	for _, m := range mimeExts {
		extByMime[m.mime] = m.exts[0]
		for _, e := range m.exts {
			mimeByExt[e] = m.mime
		}
	}
}

// mimeAliases maps other spellings, including Go's sniffer's, to the names
// mimeExts uses.
var mimeAliases = map[string]string{
	"image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg", "image/x-png": "image/png",
	"image/vnd.microsoft.icon": "image/x-icon", "application/x-pdf": "application/pdf",
	"text/x-markdown": "text/markdown", "text/xml": "application/xml", "text/javascript": "application/javascript",
	"text/x-vcard": "text/vcard", "application/x-yaml": "application/yaml", "text/yaml": "application/yaml",
	"audio/x-wav": "audio/wav", "audio/wave": "audio/wav", "audio/mp3": "audio/mpeg", "audio/x-flac": "audio/flac",
	"audio/x-aac": "audio/aac", "video/avi": "video/x-msvideo", "application/x-gzip": "application/gzip",
	"application/x-zip-compressed": "application/zip", "application/x-rar-compressed": "application/vnd.rar",
	"application/font-woff": "font/woff", "application/x-font-ttf": "font/ttf", "application/x-font-otf": "font/otf",
}

// canonicalMime lowercases m, drops its parameters and resolves aliases.
func canonicalMime(m string) string {
	if t, _, err := mime.ParseMediaType(m); err == nil {
		m = t
	}
	m = strings.ToLower(strings.TrimSpace(m))
	if a, ok := mimeAliases[m]; ok {
		return a
	}
	return m
}

// sniffMime is the type Go's content sniffer reports for data.
func sniffMime(data []byte) string { return canonicalMime(http.DetectContentType(data)) }

// mimeFamily groups types that one sniffed signature cannot tell apart: a
// text sniff fits any textual type, a zip sniff any zip container, an
// audio or video sniff any media type. "" means only an exact match fits.
func mimeFamily(m string) string {
	top, sub, _ := strings.Cut(m, "/")
	switch {
	case top == "text" || strings.HasSuffix(sub, "+xml") || strings.HasSuffix(sub, "+json") || m == "message/rfc822" ||
		m == "application/json" || m == "application/xml" || m == "application/javascript" || m == "application/yaml":
		return "text"
	case m == "application/zip" || strings.HasSuffix(sub, "+zip") || m == "application/java-archive" ||
		strings.HasPrefix(sub, "vnd.openxmlformats-officedocument.") || strings.HasPrefix(sub, "vnd.oasis.opendocument."):
		return "zip"
	case top == "audio" || top == "video" || m == "application/ogg":
		return "media"
	case top == "font" || m == "application/vnd.ms-fontobject":
		return "font"
	}
	return ""
}

// mimeFits reports whether data sniffed as sniffed can plausibly be of the
// declared type. A generic sniff (octet-stream or plain text) fits anything,
// and any data fits a declared application/octet-stream.
func mimeFits(declared, sniffed string) bool {
	const generic = "application/octet-stream"
	if sniffed == generic || sniffed == "text/plain" || declared == generic || declared == sniffed {
		return true
	}
	f := mimeFamily(sniffed)
	return f != "" && f == mimeFamily(declared)
}

// fileExt returns name's extension, lowercased and without the dot, or ""
// when it has none usable in an upload file name.
func fileExt(name string) string {
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))
	if !safeExt.MatchString(ext) {
		return ""
	}
	return ext
}

var safeExt = regexp.MustCompile(`^[a-z0-9]{1,16}$`)

// resolveMime picks the type a resource's content is stored under: the
// declared mime, else the type the filename's extension names, else the
// sniffed type. A declared or implied type the content clearly contradicts
// is refused with INVALID_ARGUMENT naming the field it came from.
func resolveMime(data []byte, declared, filename string) (string, error) {
	sniffed := sniffMime(data)
	want, field := canonicalMime(declared), "mime"
	if declared == "" {
		want, field = mimeByExt[fileExt(filename)], "filename"
	}
	if want == "" {
		return sniffed, nil
	}
	if !mimeFits(want, sniffed) {
		return "", domainerr.New(domainerr.InvalidArgument,
			"the content looks like %s, which contradicts the type given by %s", sniffed, field).
			WithDetails(map[string]any{"field": field, "detected_mime": sniffed})
	}
	return want, nil
}

// uploadName is the file name a resource of type m is uploaded under so
// that Joplin stores a matching mime and file extension: the type's
// preferred extension, else filename's, else "bin".
func uploadName(m, filename string) string {
	ext := extByMime[m]
	if ext == "" {
		ext = fileExt(filename)
	}
	if ext == "" {
		ext = "bin"
	}
	return "data." + ext
}
