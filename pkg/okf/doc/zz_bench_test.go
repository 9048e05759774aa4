package doc

import (
	"bytes"
	"testing"

	"go.yaml.in/yaml/v3"
)

func BenchmarkZZYAMLUnmarshalNode(b *testing.B) {
	d, _ := Parse(benchConcept, Limits{})
	fm := d.Frontmatter()
	b.ReportAllocs()
	for b.Loop() {
		var n yaml.Node
		if err := yaml.Unmarshal(fm, &n); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkZZYAMLDecoderNode(b *testing.B) {
	d, _ := Parse(benchConcept, Limits{})
	fm := d.Frontmatter()
	b.ReportAllocs()
	for b.Loop() {
		var n yaml.Node
		if err := yaml.NewDecoder(bytes.NewReader(fm)).Decode(&n); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkZZAllFixtures(b *testing.B) {
	fx := loadFixtures(b)
	total := 0
	for _, f := range fx {
		d, _ := Parse(f.data, Limits{})
		total += len(d.Frontmatter())
	}
	b.Logf("files=%d avg fm=%d", len(fx), total/len(fx))
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range fx {
			if _, err := ParseFrontmatterOnly(bytes.NewReader(f.data), Limits{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
