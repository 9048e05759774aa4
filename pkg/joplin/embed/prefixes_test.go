package embed

import (
	"context"
	"testing"

	"github.com/notebridge/notebridge/pkg/testkit/embedtest"
)

func TestKnownPrefixesByModelName(t *testing.T) {
	e5 := Prefixes{Query: "query: ", Document: "passage: "}
	nomic := Prefixes{Query: "search_query: ", Document: "search_document: "}
	bge := Prefixes{Query: bgeQuery}
	for model, want := range map[string]Prefixes{
		"multilingual-e5-small":                     e5,
		"intfloat/multilingual-e5-base":             e5,
		"multilingual-e5-small-q8_0.gguf":           e5,
		"jeffh/intfloat-multilingual-e5-small:q8_0": e5,
		"Multilingual-E5-Large":                     e5,
		"e5-base-v2":                                e5,
		"multilingual-e5-large-instruct":            {Query: e5Instruct},
		"nomic-embed-text":                          nomic,
		"nomic-embed-text:latest":                   nomic,
		"nomic-ai/nomic-embed-text-v1.5":            nomic,
		"nomic-embed-text-v1.5.f16.gguf":            nomic,
		"BAAI/bge-small-en-v1.5":                    bge,
		"bge-large-en-v1.5-q4_k_m":                  bge,
		"mxbai-embed-large:335m":                    bge,
		"snowflake-arctic-embed:l":                  bge,
		"bge-m3":                                    {},
		"all-minilm":                                {},
		"text-embedding-3-small":                    {},
		"":                                          {},
	} {
		got, known := KnownPrefixes(model)
		if got != want || known != (want != Prefixes{}) {
			t.Errorf("KnownPrefixes(%q) = %+v, %v; want %+v", model, got, known, want)
		}
	}
}

func TestClientSendsPrefixesAndOverrides(t *testing.T) {
	p := embedtest.New()
	defer p.Close()
	empty, mine := "", "doc> "
	for _, c := range []struct {
		name          string
		cfg           Config
		query, passes string
	}{
		{"known model", Config{Model: "nomic-embed-text"}, "search_query: x", "search_document: y"},
		{"unknown model", Config{Model: "concepts"}, "x", "y"},
		{"overridden", Config{Model: "nomic-embed-text", QueryPrefix: &empty, DocumentPrefix: &mine}, "x", "doc> y"},
	} {
		c.cfg.BaseURL = p.BaseURL()
		client, err := New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		var from int
		p.Set(func(s *embedtest.Server) { from = len(s.Texts) })
		if _, err := client.EmbedQuery(context.Background(), "x"); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Embed(context.Background(), []string{"y"}); err != nil {
			t.Fatal(err)
		}
		var got []string
		p.Set(func(s *embedtest.Server) { got = s.Texts[from:] })
		if len(got) != 2 || got[0] != c.query || got[1] != c.passes {
			t.Errorf("%s: the provider got %q, want [%q %q]", c.name, got, c.query, c.passes)
		}
	}
}
