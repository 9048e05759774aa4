package doc

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// fenceSlack bounds the bytes allowed around the frontmatter itself: the
// BOM, the opening fence line and the closing fence line with trailing
// blanks. The whole header must fit in MaxFrontmatterBytes+fenceSlack bytes,
// for Parse and ParseFrontmatterOnly alike.
const fenceSlack = 1024

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func headerLimit(lim Limits) int { return lim.MaxFrontmatterBytes + fenceSlack }

// header locates the frontmatter in a file.
type header struct {
	hasFM     bool
	fmStart   int
	fmEnd     int
	bodyStart int
}

// scanHeader finds the fences in buf, a prefix of the file (the whole file
// when atEOF). It reports more=true when the decision depends on bytes not
// yet in buf. Decisions made with atEOF=false never change when buf grows.
func scanHeader(buf []byte, atEOF bool, maxFM int) (h header, err *ParseError, more bool) {
	off := 0
	if bytes.HasPrefix(buf, utf8BOM) {
		off = len(utf8BOM)
	} else if !atEOF && len(buf) < len(utf8BOM) && bytes.HasPrefix(utf8BOM, buf) && len(buf) > 0 {
		return h, nil, true
	}
	rest := buf[off:]
	switch {
	case bytes.HasPrefix(rest, []byte("---\n")):
		h.fmStart = off + 4
	case bytes.HasPrefix(rest, []byte("---\r\n")):
		h.fmStart = off + 5
	default:
		if !atEOF && (bytes.HasPrefix([]byte("---\n"), rest) || bytes.HasPrefix([]byte("---\r\n"), rest)) {
			return h, nil, true
		}
		if !atEOF && len(buf) == 0 {
			return h, nil, true
		}
		return header{}, nil, false // no frontmatter: the whole file is body
	}
	h.hasFM = true
	ls := h.fmStart
	for {
		if ls-h.fmStart > maxFM {
			return h, perr(CodeFrontmatterTooLarge, 1, "frontmatter exceeds the size limit"), false
		}
		if ls >= len(buf) {
			if atEOF {
				return h, perr(CodeUnterminatedFrontmatter, 1, "frontmatter has no closing fence"), false
			}
			return h, nil, true
		}
		nl := bytes.IndexByte(buf[ls:], '\n')
		var line []byte
		lineEnd := len(buf)
		if nl >= 0 {
			line = buf[ls : ls+nl]
			lineEnd = ls + nl + 1
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
		} else {
			if !atEOF {
				return h, nil, true
			}
			line = buf[ls:]
		}
		if isFenceLine(line) {
			h.fmEnd = ls
			h.bodyStart = lineEnd
			return h, nil, false
		}
		if nl < 0 {
			return h, perr(CodeUnterminatedFrontmatter, 1, "frontmatter has no closing fence"), false
		}
		ls = lineEnd
	}
}

// isFenceLine reports whether line (without its terminator) is a closing
// fence: "---" or "..." followed only by spaces or tabs.
func isFenceLine(line []byte) bool {
	if len(line) < 3 {
		return false
	}
	if !(line[0] == '-' && line[1] == '-' && line[2] == '-') &&
		!(line[0] == '.' && line[1] == '.' && line[2] == '.') {
		return false
	}
	for _, c := range line[3:] {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// decodeFrontmatter decodes fm as a single YAML document with a mapping root
// and enforces lim and the structural restrictions. Node lines are shifted
// to file lines (the opening fence is line 1).
func decodeFrontmatter(fm []byte, lim Limits) (root *yaml.Node, err error) {
	if len(bytes.TrimSpace(fm)) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 2, Column: 1}, nil
	}
	if root, ok := fastParse(fm); ok {
		return checkTree(root, lim)
	}
	defer func() {
		// The YAML library reports its own errors as values; anything that
		// escapes as a panic is treated as a syntax error, never a crash.
		if r := recover(); r != nil {
			root, err = nil, perr(CodeYAMLSyntax, 0, "frontmatter is not valid YAML")
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(fm))
	var docNode yaml.Node
	if derr := dec.Decode(&docNode); derr != nil {
		if errors.Is(derr, io.EOF) {
			// Only comments or directives: treat as empty mapping.
			return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 2, Column: 1}, nil
		}
		if strings.Contains(derr.Error(), "exceeded max depth") {
			return nil, perr(CodeTooDeep, yamlErrLine(derr), "frontmatter is nested too deeply")
		}
		return nil, perr(CodeYAMLSyntax, yamlErrLine(derr), "frontmatter is not valid YAML")
	}
	var extra yaml.Node
	if derr := dec.Decode(&extra); !errors.Is(derr, io.EOF) {
		line := 0
		if derr != nil {
			line = yamlErrLine(derr)
		} else if extra.Line > 0 {
			line = extra.Line + 1
		}
		return nil, perr(CodeYAMLSyntax, line, "frontmatter must be a single YAML document")
	}
	if docNode.Kind != yaml.DocumentNode || len(docNode.Content) != 1 {
		return nil, perr(CodeFrontmatterNotMapping, 2, "frontmatter root must be a mapping")
	}
	root = docNode.Content[0]
	if root.Kind != yaml.MappingNode {
		if root.Kind == yaml.AliasNode {
			return nil, perr(CodeAliasNotAllowed, root.Line+1, "YAML aliases are not allowed")
		}
		return nil, perr(CodeFrontmatterNotMapping, root.Line+1, "frontmatter root must be a mapping")
	}
	return checkTree(root, lim)
}

// checkTree enforces lim and the structural restrictions on a decoded root
// mapping and shifts node lines to file lines.
func checkTree(root *yaml.Node, lim Limits) (*yaml.Node, error) {
	w := walker{maxDepth: lim.MaxDepth, maxNodes: lim.MaxNodes}
	if err := w.walk(root, 1); err != nil {
		return nil, err
	}
	return root, nil
}

// yamlErrLine extracts the (approximate) frontmatter line from a yaml error
// ("yaml: line N: ...") and converts it to a file line; 0 when unknown.
func yamlErrLine(err error) int {
	const prefix = "yaml: line "
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return 0
	}
	j := len(prefix)
	k := j
	for k < len(msg) && msg[k] >= '0' && msg[k] <= '9' {
		k++
	}
	n, convErr := strconv.Atoi(msg[j:k])
	if convErr != nil || n <= 0 {
		return 0
	}
	return n + 1
}

// walker validates the decoded tree and shifts node lines to file lines.
type walker struct {
	maxDepth, maxNodes int
	nodes              int
	seen               map[string]struct{} // scratch set for large mappings
}

func (w *walker) walk(n *yaml.Node, depth int) *ParseError {
	w.nodes++
	n.Line++ // frontmatter line -> file line
	if w.nodes > w.maxNodes {
		return perr(CodeTooManyNodes, n.Line, "frontmatter has too many YAML nodes")
	}
	if depth > w.maxDepth {
		return perr(CodeTooDeep, n.Line, "frontmatter is nested too deeply")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return perr(CodeAliasNotAllowed, n.Line, "YAML aliases are not allowed")
	case yaml.MappingNode:
		if len(n.Content)%2 != 0 {
			return perr(CodeYAMLSyntax, n.Line, "frontmatter is not valid YAML")
		}
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				return perr(CodeMergeKeyNotAllowed, k.Line+1, "YAML merge keys are not allowed")
			}
		}
		if line := w.duplicateKeyLine(n); line > 0 {
			return perr(CodeDuplicateKey, line, "frontmatter has a duplicate key")
		}
		for _, c := range n.Content {
			if err := w.walk(c, depth+1); err != nil {
				return err
			}
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			if err := w.walk(c, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// duplicateKeyLine returns the (frontmatter) line+1 of the first repeated
// scalar key in mapping m, or 0. Called before m's children are shifted.
func (w *walker) duplicateKeyLine(m *yaml.Node) int {
	n := len(m.Content) / 2
	if n <= 16 {
		for i := 1; i < n; i++ {
			ki := m.Content[2*i]
			if ki.Kind != yaml.ScalarNode {
				continue
			}
			for j := 0; j < i; j++ {
				kj := m.Content[2*j]
				if kj.Kind == yaml.ScalarNode && kj.Value == ki.Value {
					return ki.Line + 1
				}
			}
		}
		return 0
	}
	if w.seen == nil {
		w.seen = make(map[string]struct{}, n)
	} else {
		clear(w.seen)
	}
	for i := 0; i < n; i++ {
		k := m.Content[2*i]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		if _, dup := w.seen[k.Value]; dup {
			return k.Line + 1
		}
		w.seen[k.Value] = struct{}{}
	}
	return 0
}
