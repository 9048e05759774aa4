// Package searchcorpus generates the deterministic note corpus of the
// search benchmarks: English-like text from a 6,000-word vocabulary with a
// Zipf distribution (as in natural language, a few words are very common),
// notes of about 2 KB.
package searchcorpus

import (
	"fmt"
	"math/rand"
	"strings"
)

// Note is one generated note.
type Note struct{ Title, Body string }

// Vocabulary returns the generated words, most frequent first.
func Vocabulary() []string {
	r := rand.New(rand.NewSource(1))
	consonants, vowels := "bcdfghjklmnprstvwz", "aeiou"
	seen := map[string]bool{}
	var words []string
	for len(words) < 6000 {
		var b strings.Builder
		for syl := 1 + r.Intn(3); syl > 0; syl-- {
			b.WriteByte(consonants[r.Intn(len(consonants))])
			b.WriteByte(vowels[r.Intn(len(vowels))])
			if r.Intn(2) == 0 {
				b.WriteByte(consonants[r.Intn(len(consonants))])
			}
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// Notes returns n notes of about 2 KB.
func Notes(n int) []Note {
	words := Vocabulary()
	r := rand.New(rand.NewSource(2))
	zipf := rand.NewZipf(r, 1.07, 2, uint64(len(words)-1))
	out := make([]Note, n)
	for i := range out {
		var t, b strings.Builder
		for j := 0; j < 4; j++ {
			t.WriteString(words[zipf.Uint64()] + " ")
		}
		fmt.Fprintf(&t, "%d", i)
		for b.Len() < 2000 {
			if r.Intn(12) == 0 {
				b.WriteString(".\n")
			}
			b.WriteString(words[zipf.Uint64()] + " ")
		}
		out[i] = Note{Title: t.String(), Body: b.String()}
	}
	return out
}

// Queries is the benchmark's query mix: words of every frequency band, a
// phrase, a prefix, a title: term, an exclusion and an any:1 pair.
func Queries() []string {
	w := Vocabulary()
	prefix := ""
	for _, v := range w[60:] {
		if len(v) >= 5 {
			prefix = v[:3] + "*"
			break
		}
	}
	return []string{
		w[0], w[5], w[40], w[300], w[2000], w[5000],
		`"` + w[0] + " " + w[1] + `"`, prefix, "title:" + w[20],
		w[30] + " " + w[90], w[50] + " -" + w[3], "any:1 " + w[700] + " " + w[800],
	}
}
