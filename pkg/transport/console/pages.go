package console

import (
	"embed"
	"html/template"
	"net/http"
)

//go:embed templates/*.html templates/style.css
var files embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"when": when,
}).ParseFS(files, "templates/*.html"))

var style, _ = files.ReadFile("templates/style.css")

// page is what every page template gets.
type page struct {
	Title, Error, Notice string
	// CSRF is the sign-in form's token; signed-in forms get theirs in Data.
	CSRF string
	// Nav names the current section; SignOut is the sign-out form's token
	// (empty before sign-in: no navigation).
	Nav, SignOut string
	Data         any
}

func (c *Console) render(w http.ResponseWriter, status int, name string, p page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = templates.ExecuteTemplate(w, name, p)
}

// show renders a signed-in page of section nav.
func (c *Console) show(w http.ResponseWriter, req request, status int, nav, name string, p page) {
	p.Nav, p.SignOut = nav, c.csrf(req, "/owner/signout")
	c.render(w, status, name, p)
}

func (c *Console) message(w http.ResponseWriter, status int, msg string) {
	c.render(w, status, "message", page{Title: "notebridge", Error: msg})
}

func serveStyle(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	_, _ = w.Write(style)
}
