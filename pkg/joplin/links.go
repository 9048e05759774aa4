package joplin

import "regexp"

// linkPattern finds Joplin item links (":/<id>") in Markdown bodies.
var linkPattern = regexp.MustCompile(`:/([0-9a-f]{32})`)

// LinkedIDs returns the distinct ids body links to (notes or resources),
// in order of appearance.
func LinkedIDs(body string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range linkPattern.FindAllStringSubmatch(body, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}
