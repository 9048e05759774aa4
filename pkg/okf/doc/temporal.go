package doc

import "go.yaml.in/yaml/v3"

// TemporalKind classifies a raw temporal scalar.
type TemporalKind string

// Temporal kinds. The date profile writes profile fields as calendar dates,
// the instant profile as RFC 3339 datetimes with an explicit offset.
const (
	TemporalDate    TemporalKind = "date"
	TemporalInstant TemporalKind = "instant"
	TemporalInvalid TemporalKind = "invalid"
)

// ClassifyTemporal classifies a raw scalar: YYYY-MM-DD naming a real
// calendar date is date; an RFC 3339 datetime with 'T' separator, optional
// fractional seconds and an explicit offset (Z or ±hh:mm) is instant;
// anything else (including a datetime without offset, surrounding spaces or
// a lowercase 't'/'z') is invalid.
func ClassifyTemporal(s string) TemporalKind {
	if len(s) < 10 || !validDate(s[:10]) {
		return TemporalInvalid
	}
	if len(s) == 10 {
		return TemporalDate
	}
	// YYYY-MM-DDTHH:MM:SS
	if len(s) < 20 || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return TemporalInvalid
	}
	hh, ok1 := num2(s[11:13])
	mm, ok2 := num2(s[14:16])
	ss, ok3 := num2(s[17:19])
	if !ok1 || !ok2 || !ok3 || hh > 23 || mm > 59 || ss > 59 {
		return TemporalInvalid
	}
	rest := s[19:]
	if rest[0] == '.' {
		i := 1
		for i < len(rest) && isDigit(rest[i]) {
			i++
		}
		if i == 1 {
			return TemporalInvalid
		}
		rest = rest[i:]
	}
	switch {
	case rest == "Z":
		return TemporalInstant
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := num2(rest[1:3])
		om, ok2 := num2(rest[4:6])
		if ok1 && ok2 && oh <= 23 && om <= 59 {
			return TemporalInstant
		}
	}
	return TemporalInvalid
}

// validDate reports whether s is YYYY-MM-DD naming a real calendar date.
func validDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9} {
		if !isDigit(s[i]) {
			return false
		}
	}
	year := int(s[0]-'0')*1000 + int(s[1]-'0')*100 + int(s[2]-'0')*10 + int(s[3]-'0')
	month, _ := num2(s[5:7])
	day, _ := num2(s[8:10])
	if month < 1 || month > 12 || day < 1 {
		return false
	}
	return day <= daysIn(year, month)
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func num2(s string) (int, bool) {
	if len(s) != 2 || !isDigit(s[0]) || !isDigit(s[1]) {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

// TemporalField is one profile-dependent value of a document.
type TemporalField struct {
	Path  string       `json:"path" schema:"max=100000"`                // e.g. "stale_after", "sources[1].last_modified"
	Value string       `json:"value" schema:"max=100000"`               // raw scalar text ("" when not a scalar)
	Kind  TemporalKind `json:"kind" schema:"enum=date|instant|invalid"` // classification of Value
}

// ProfileFields lists the profile-dependent values present in d, in
// document order of families: stale_after, usage_window.from/to, then for
// each sources[i]: last_modified and usage_window.from/to. Present values of
// the wrong shape (null, collections, a non-mapping usage_window) are
// listed with an empty Value and Kind invalid.
func (d *Document) ProfileFields() []TemporalField {
	if d.root == nil {
		return nil
	}
	var out []TemporalField
	out = appendTemporal(out, "stale_after", d.Lookup("stale_after"))
	out = appendWindow(out, "usage_window", d.Lookup("usage_window"))
	if s := d.Lookup("sources"); s != nil && s.Kind == yaml.SequenceNode {
		for i, e := range s.Content {
			if e.Kind != yaml.MappingNode {
				continue
			}
			p := indexPath("sources", i)
			out = appendTemporal(out, p+".last_modified", mapGet(e, "last_modified"))
			out = appendWindow(out, p+".usage_window", mapGet(e, "usage_window"))
		}
	}
	return out
}

func appendTemporal(out []TemporalField, path string, n *yaml.Node) []TemporalField {
	if n == nil {
		return out
	}
	v, ok := text(n)
	if !ok {
		return append(out, TemporalField{Path: path, Kind: TemporalInvalid})
	}
	return append(out, TemporalField{Path: path, Value: v, Kind: ClassifyTemporal(v)})
}

func appendWindow(out []TemporalField, path string, n *yaml.Node) []TemporalField {
	if n == nil {
		return out
	}
	if n.Kind != yaml.MappingNode {
		return append(out, TemporalField{Path: path, Kind: TemporalInvalid})
	}
	out = appendTemporal(out, path+".from", mapGet(n, "from"))
	return appendTemporal(out, path+".to", mapGet(n, "to"))
}
