package embed

import (
	"path"
	"strings"
)

// Prefixes are the texts a model expects before what it embeds: retrieval
// models are trained with one marker on queries and another (or none) on
// the passages searched. Sent without them, the model still answers, only
// worse, and nothing says so.
type Prefixes struct {
	Query    string `json:"query"`
	Document string `json:"document"`
}

// bgeQuery is the instruction BGE's English v1.5 models (and the models
// trained after them: mxbai-embed-large, snowflake-arctic-embed) put before
// a query; their passages go without one.
const bgeQuery = "Represent this sentence for searching relevant passages: "

// e5Instruct is the instruction of e5's instruct models for web-search
// style retrieval; their passages go without a prefix.
const e5Instruct = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "

// knownPrefixes is the table of model families, matched against the model
// name with its organisation, tag and quantisation removed (see family);
// the first entry whose name the family holds wins, so the longer name of
// a family comes first. Models not listed get no prefixes.
var knownPrefixes = []struct {
	family   string
	prefixes Prefixes
}{
	// intfloat's e5 family: multilingual-e5-small/base/large (and -instruct's
	// passages), e5-small-v2, e5-base-v2, e5-large-v2.
	{"multilingual-e5-large-instruct", Prefixes{Query: e5Instruct}},
	{"e5-mistral", Prefixes{Query: e5Instruct}},
	{"multilingual-e5", Prefixes{Query: "query: ", Document: "passage: "}},
	{"e5-", Prefixes{Query: "query: ", Document: "passage: "}},
	// Nomic's task prefixes (nomic-embed-text v1, v1.5, v2-moe).
	{"nomic-embed-text", Prefixes{Query: "search_query: ", Document: "search_document: "}},
	{"nomic-embed", Prefixes{Query: "search_query: ", Document: "search_document: "}},
	// BGE v1.5 English models; bge-m3 and the multilingual BGE models need none.
	{"bge-small-en", Prefixes{Query: bgeQuery}},
	{"bge-base-en", Prefixes{Query: bgeQuery}},
	{"bge-large-en", Prefixes{Query: bgeQuery}},
	{"mxbai-embed-large", Prefixes{Query: bgeQuery}},
	{"snowflake-arctic-embed", Prefixes{Query: bgeQuery}},
}

// KnownPrefixes returns the prefixes the table gives model, and whether
// the model's family is in it.
func KnownPrefixes(model string) (Prefixes, bool) {
	f := family(model)
	for _, k := range knownPrefixes {
		if strings.Contains(f, k.family) {
			return k.prefixes, true
		}
	}
	return Prefixes{}, false
}

// family reduces a model name as providers spell it to the name of its
// family: lower case, without the organisation or path
// ("intfloat/multilingual-e5-small", "models/x.gguf"), the Ollama tag
// (":latest", ":v1.5"), a ".gguf" suffix, or a quantisation suffix
// ("-q8_0", "-f16").
func family(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	m = path.Base(m)
	if i := strings.IndexByte(m, ':'); i >= 0 {
		m = m[:i]
	}
	m = strings.TrimSuffix(m, ".gguf")
	if i := strings.LastIndexAny(m, "-."); i >= 0 {
		switch q := m[i+1:]; {
		case strings.HasPrefix(q, "q") && len(q) > 1 && q[1] >= '0' && q[1] <= '9',
			q == "f16", q == "f32", q == "bf16", q == "fp16":
			m = m[:i]
		}
	}
	return m
}
