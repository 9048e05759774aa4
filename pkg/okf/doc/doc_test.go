package doc

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParseErrors(t *testing.T) {
	deep := "a: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n"
	many := "a: [" + strings.Repeat("x, ", 200) + "x]\n"
	tests := []struct {
		name string
		src  string
		lim  Limits
		code string
		line int
	}{
		{"not utf8 in body", "---\ntype: A\n---\nok\n\xff\n", Limits{}, CodeNotUTF8, 5},
		{"not utf8 in frontmatter", "---\ntype: \xc3\x28\n---\n", Limits{}, CodeNotUTF8, 2},
		{"unterminated", "---\ntype: A\nbody\n", Limits{}, CodeUnterminatedFrontmatter, 1},
		{"unterminated empty", "---\n", Limits{}, CodeUnterminatedFrontmatter, 1},
		{"fence with text is not closing", "---\ntype: A\n--- x\n", Limits{}, CodeUnterminatedFrontmatter, 1},
		{"too large", "---\ntype: " + strings.Repeat("a", 100) + "\n---\n", Limits{MaxFrontmatterBytes: 64}, CodeFrontmatterTooLarge, 1},
		{"too large unterminated", "---\n" + strings.Repeat("a: b\n", 100), Limits{MaxFrontmatterBytes: 64}, CodeFrontmatterTooLarge, 1},
		{"too large invalid yaml", "---\n" + strings.Repeat("{[", 100) + "\n---\n", Limits{MaxFrontmatterBytes: 64}, CodeFrontmatterTooLarge, 1},
		{"yaml syntax", "---\ntype: A\ntitle: [unclosed\n---\n", Limits{}, CodeYAMLSyntax, 0},
		{"yaml syntax bad indent", "---\ntype: A\n  title: x\n b: c\n---\n", Limits{}, CodeYAMLSyntax, 0},
		{"two documents", "---\ntype: A\n--- # two\ntype: B\n---\n", Limits{}, CodeYAMLSyntax, 0},
		{"scalar root", "---\njust text\n---\n", Limits{}, CodeFrontmatterNotMapping, 2},
		{"sequence root", "---\n- a\n- b\n---\n", Limits{}, CodeFrontmatterNotMapping, 2},
		{"null root", "---\n~\n---\n", Limits{}, CodeFrontmatterNotMapping, 2},
		{"too deep", "---\n" + deep + "---\n", Limits{}, CodeTooDeep, 2},
		{"too deep custom", "---\na: {b: {c: 1}}\n---\n", Limits{MaxDepth: 2}, CodeTooDeep, 2},
		{"too many nodes", "---\n" + many + "---\n", Limits{MaxNodes: 100}, CodeTooManyNodes, 2},
		{"duplicate top key", "---\ntype: A\ntitle: x\ntype: B\n---\n", Limits{}, CodeDuplicateKey, 4},
		{"duplicate nested key", "---\ntype: A\ngenerated: {by: x/y, by: z/w}\n---\n", Limits{}, CodeDuplicateKey, 3},
		{"duplicate quoted vs plain", "---\n\"type\": A\ntype: B\n---\n", Limits{}, CodeDuplicateKey, 3},
		{"duplicate in list item", "---\ntype: A\nsources:\n  - id: a\n    id: b\n---\n", Limits{}, CodeDuplicateKey, 5},
		{"duplicate in large mapping", "---\n" + manyKeys(40) + "k7: dup\n---\n", Limits{}, CodeDuplicateKey, 42},
		{"alias", "---\ntype: &t A\ntitle: *t\n---\n", Limits{}, CodeAliasNotAllowed, 3},
		{"alias root", "---\n*a\n---\n", Limits{}, "", 0}, // yaml rejects an unknown anchor; any code is fine
		{"merge key", "---\nbase: &b {x: 1}\nother:\n  <<: *b\n---\n", Limits{}, CodeMergeKeyNotAllowed, 4},
		{"merge key inline", "---\ntype: A\nx: {<<: {a: 1}}\n---\n", Limits{}, CodeMergeKeyNotAllowed, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.src), tt.lim)
			if err == nil {
				t.Fatalf("Parse succeeded, want %s (doc has fm=%v)", tt.code, d.HasFrontmatter())
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not *ParseError", err)
			}
			if tt.code != "" && pe.Code != tt.code {
				t.Fatalf("code = %s, want %s (%v)", pe.Code, tt.code, err)
			}
			if tt.line != 0 && pe.Line != tt.line {
				t.Errorf("line = %d, want %d", pe.Line, tt.line)
			}
			if strings.Contains(pe.Msg, "unclosed") || strings.Contains(pe.Error(), "title") {
				t.Errorf("message echoes document content: %q", pe.Error())
			}
			// ParseFrontmatterOnly agrees, except for invalid UTF-8 in the body.
			if tt.code != CodeNotUTF8 {
				_, ferr := ParseFrontmatterOnly(iotest.OneByteReader(strings.NewReader(tt.src)), tt.lim)
				var fpe *ParseError
				if !errors.As(ferr, &fpe) || fpe.Code != pe.Code {
					t.Errorf("ParseFrontmatterOnly error = %v, want code %s", ferr, pe.Code)
				}
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("k" + strconv.Itoa(i) + ": v\n")
	}
	return b.String()
}

func TestParseShapes(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		hasFM     bool
		fm, body  string
		keys      []string
		bodyStart int
	}{
		{"no frontmatter", "# Title\n\ntext\n", false, "", "# Title\n\ntext\n", nil, 1},
		{"empty file", "", false, "", "", nil, 1},
		{"dashes without newline", "---", false, "", "---", nil, 1},
		{"dashes with text", "--- \ntype: A\n---\n", false, "", "--- \ntype: A\n---\n", nil, 1},
		{"indented fence", " ---\ntype: A\n---\n", false, "", " ---\ntype: A\n---\n", nil, 1},
		{"empty frontmatter", "---\n---\nbody\n", true, "", "body\n", []string{}, 3},
		{"blank frontmatter", "---\n\n  \n---\n", true, "\n  \n", "", []string{}, 5},
		{"comment-only frontmatter", "---\n# just a comment\n---\n", true, "# just a comment\n", "", []string{}, 4},
		{"simple", "---\ntype: A\ntitle: B\n---\n# Body\n", true, "type: A\ntitle: B\n", "# Body\n", []string{"type", "title"}, 5},
		{"crlf", "---\r\ntype: A\r\n---\r\nbody\r\n", true, "type: A\r\n", "body\r\n", []string{"type"}, 4},
		{"bom", "\ufeff---\ntype: A\n---\nbody", true, "type: A\n", "body", []string{"type"}, 4},
		{"bom without frontmatter", "\ufeff# x\n", false, "", "\ufeff# x\n", nil, 1},
		{"dots close", "---\ntype: A\n...\nbody\n", true, "type: A\n", "body\n", []string{"type"}, 4},
		{"trailing blanks on close", "---\ntype: A\n--- \t\nbody\n", true, "type: A\n", "body\n", []string{"type"}, 4},
		{"close at eof", "---\ntype: A\n---", true, "type: A\n", "", []string{"type"}, 3},
		{"close at eof with blanks", "---\ntype: A\n---  ", true, "type: A\n", "", []string{"type"}, 3},
		{"body has fences", "---\ntype: A\n---\n---\nmore\n---\n", true, "type: A\n", "---\nmore\n---\n", []string{"type"}, 4},
		{"block scalar with dashes", "---\ntype: A\nd: |\n  ---\n---\nb", true, "type: A\nd: |\n  ---\n", "b", []string{"type", "d"}, 6},
		{"explicit document start inside", "--- \n", false, "", "--- \n", nil, 1},
		{"unused anchor allowed", "---\ntype: &t A\n---\n", true, "type: &t A\n", "", []string{"type"}, 4},
		{"quoted merge-looking key allowed", "---\n\"<<\": x\n---\n", true, "\"<<\": x\n", "", []string{"<<"}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.src), Limits{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if d.HasFrontmatter() != tt.hasFM {
				t.Fatalf("HasFrontmatter = %v", d.HasFrontmatter())
			}
			if string(d.Frontmatter()) != tt.fm {
				t.Errorf("Frontmatter = %q, want %q", d.Frontmatter(), tt.fm)
			}
			if string(d.Body()) != tt.body {
				t.Errorf("Body = %q, want %q", d.Body(), tt.body)
			}
			if string(d.Bytes()) != tt.src {
				t.Errorf("Bytes = %q, want input", d.Bytes())
			}
			if tt.keys != nil && !equalStrings(d.Keys(), tt.keys) {
				t.Errorf("Keys = %q, want %q", d.Keys(), tt.keys)
			}
			if tt.hasFM == (d.Root() == nil) {
				t.Errorf("Root() nil = %v", d.Root() == nil)
			}
			if got := d.BodyStartLine(); got != tt.bodyStart {
				t.Errorf("BodyStartLine = %d, want %d", got, tt.bodyStart)
			}
			fo, err := ParseFrontmatterOnly(iotest.OneByteReader(strings.NewReader(tt.src)), Limits{})
			if err != nil {
				t.Fatalf("ParseFrontmatterOnly: %v", err)
			}
			if fo.HasFrontmatter() != tt.hasFM || string(fo.Frontmatter()) != tt.fm || len(fo.Body()) != 0 || !fo.BodyOmitted() {
				t.Errorf("ParseFrontmatterOnly mismatch: fm=%q body=%q", fo.Frontmatter(), fo.Body())
			}
		})
	}
}

func TestParseCopiesInput(t *testing.T) {
	src := []byte("---\ntype: A\n---\nbody\n")
	d, err := Parse(src, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	src[5] = 'X'
	if string(d.Bytes()) != "---\ntype: A\n---\nbody\n" {
		t.Fatal("document aliases the caller's buffer")
	}
	b := d.Bytes()
	b[0] = 'X'
	if d.Bytes()[0] != '-' {
		t.Fatal("Bytes returns internal storage")
	}
}

func TestLookupAndLines(t *testing.T) {
	d, err := Parse([]byte("---\ntype: Metric\nstale_after: 2026-09-23\n---\n"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	n := d.Lookup("stale_after")
	if n == nil || n.Value != "2026-09-23" {
		t.Fatalf("Lookup(stale_after) = %+v", n)
	}
	if n.Line != 3 {
		t.Errorf("node line = %d, want file line 3", n.Line)
	}
	if d.Lookup("missing") != nil {
		t.Error("Lookup(missing) != nil")
	}
}

// stopReader fails the test if more than max bytes are read.
type stopReader struct {
	t   *testing.T
	r   io.Reader
	n   int
	max int
}

func (s *stopReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += n
	if s.n > s.max {
		s.t.Fatalf("read %d bytes, limit %d", s.n, s.max)
	}
	return n, err
}

func TestParseFrontmatterOnlyStopsEarly(t *testing.T) {
	body := strings.Repeat("body line with [a link](x.md)\n", 1<<16) // ~2 MB
	src := "---\ntype: A\n---\n" + body
	lim := Limits{MaxFrontmatterBytes: 4096}
	sr := &stopReader{t: t, r: strings.NewReader(src), max: headerLimit(lim.normalized()) + 1}
	d, err := ParseFrontmatterOnly(sr, lim)
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Bytes()) != "---\ntype: A\n---\n" {
		t.Errorf("Bytes = %q", d.Bytes())
	}
	// A huge frontmatter is refused without reading the whole input.
	sr = &stopReader{t: t, r: strings.NewReader("---\n" + body), max: headerLimit(lim.normalized()) + 1}
	_, err = ParseFrontmatterOnly(sr, lim)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Code != CodeFrontmatterTooLarge {
		t.Fatalf("err = %v, want frontmatter_too_large", err)
	}
}

func TestParseFrontmatterOnlyReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := ParseFrontmatterOnly(io.MultiReader(strings.NewReader("---\ntype: A\n"), iotest.ErrReader(boom)), Limits{})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want wrapped boom", err)
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		t.Fatal("I/O error must not be a ParseError")
	}
}

func TestDefaultLimitsApplied(t *testing.T) {
	big := "---\ntype: A\nd: " + strings.Repeat("a", 70<<10) + "\n---\n"
	_, err := Parse([]byte(big), Limits{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Code != CodeFrontmatterTooLarge {
		t.Fatalf("err = %v, want frontmatter_too_large under default limits", err)
	}
	if _, err := Parse([]byte(big), Limits{MaxFrontmatterBytes: 1 << 20}); err != nil {
		t.Fatalf("raised limit: %v", err)
	}
	if DefaultLimits.normalized() != DefaultLimits {
		t.Fatal("normalized changed DefaultLimits")
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestParseFrontmatterOnlyNoProgress(t *testing.T) {
	_, err := ParseFrontmatterOnly(zeroReader{}, Limits{})
	if !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}
