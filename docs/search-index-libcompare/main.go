// Command libcompare builds the same generated corpus with bleve v2 and with SQLite
// FTS5 (modernc.org/sqlite) and prints build time, index size, text size,
// peak RSS (VmHWM) and the median of top-20 queries.
package main

import (
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	_ "modernc.org/sqlite"
)

var words []string

var vocab = 5000

func init() {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < vocab; i++ {
		n := 3 + r.Intn(7)
		b := make([]byte, n)
		for j := range b {
			b[j] = byte('a' + r.Intn(26))
		}
		words = append(words, string(b))
	}
}

type note struct{ ID, Title, Body string }

func corpus(n int) ([]note, int) {
	r := rand.New(rand.NewSource(2))
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(words)-1))
	var notes []note
	total := 0
	for i := 0; i < n; i++ {
		var t, b strings.Builder
		for j := 0; j < 5; j++ {
			t.WriteString(words[zipf.Uint64()] + " ")
		}
		for b.Len() < 2000 {
			b.WriteString(words[zipf.Uint64()] + " ")
		}
		nt := note{fmt.Sprintf("%032x", i), t.String(), b.String()}
		total += len(nt.Title) + len(nt.Body)
		notes = append(notes, nt)
	}
	return notes, total
}

func dirSize(p string) int64 {
	var s int64
	filepath.Walk(p, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			s += fi.Size()
		}
		return nil
	})
	return s
}

// hwm prints the process's peak and current RSS.
func hwm() {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM") || strings.HasPrefix(l, "VmRSS") {
			fmt.Print(l, "  ")
		}
	}
}

func median(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func main() {
	which, dir := os.Args[1], os.Args[2]
	os.RemoveAll(dir)
	fmt.Print("start: ")
	hwm()
	fmt.Println()
	notes, text := corpus(10000)
	qs := []string{words[1], words[50], words[500], words[4000], words[3] + " " + words[70], "\"" + words[2] + " " + words[1] + "\"", words[40][:3] + "*"}
	fmt.Print("corpus: ")
	hwm()
	fmt.Println("text bytes", text)
	t0 := time.Now()
	var times []time.Duration
	per := map[string][]time.Duration{}
	switch which {
	case "bleve":
		idx, err := bleve.New(dir, bleve.NewIndexMapping())
		if err != nil {
			panic(err)
		}
		b := idx.NewBatch()
		for i, n := range notes {
			b.Index(n.ID, map[string]any{"title": n.Title, "body": n.Body})
			if i%500 == 499 {
				idx.Batch(b)
				b = idx.NewBatch()
			}
		}
		idx.Batch(b)
		fmt.Println("build", time.Since(t0))
		for k := 0; k < 40; k++ {
			for _, q := range qs {
				s := time.Now()
				req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(q), 20, 0, false)
				req.Highlight = bleve.NewHighlight()
				if _, err := idx.Search(req); err != nil {
					panic(err)
				}
				times = append(times, time.Since(s))
				per[q] = append(per[q], time.Since(s))
			}
		}
		for q, d := range per {
			fmt.Println(q, median(d))
		}
		idx.Close()
	case "sqlite":
		os.MkdirAll(dir, 0o755)
		db, err := sql.Open("sqlite", filepath.Join(dir, "i.db"))
		if err != nil {
			panic(err)
		}
		db.SetMaxOpenConns(1)
		for _, s := range []string{"PRAGMA page_size=16384", "PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL",
			"CREATE VIRTUAL TABLE f USING fts5(id UNINDEXED, title, body, tokenize='unicode61 remove_diacritics 2')"} {
			if _, err := db.Exec(s); err != nil {
				panic(err)
			}
		}
		tx, _ := db.Begin()
		st, _ := tx.Prepare("INSERT INTO f(id,title,body) VALUES(?,?,?)")
		for i, n := range notes {
			if _, err := st.Exec(n.ID, n.Title, n.Body); err != nil {
				panic(err)
			}
			if i%500 == 499 {
				tx.Commit()
				tx, _ = db.Begin()
				st, _ = tx.Prepare("INSERT INTO f(id,title,body) VALUES(?,?,?)")
			}
		}
		tx.Commit()
		db.Exec("INSERT INTO f(f) VALUES('optimize')")
		db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		db.Exec("VACUUM")
		fmt.Println("build", time.Since(t0))
		for k := 0; k < 40; k++ {
			for _, q := range qs {
				s := time.Now()
				rows, err := db.Query("SELECT id, title, snippet(f, 2, '<b>', '</b>', '…', 12) FROM f WHERE f MATCH ? ORDER BY bm25(f, 10, 1) LIMIT 20", q)
				if err != nil {
					panic(err)
				}
				for rows.Next() {
					var a, b, c string
					rows.Scan(&a, &b, &c)
				}
				rows.Close()
				times = append(times, time.Since(s))
				per[q] = append(per[q], time.Since(s))
			}
		}
		for q, d := range per {
			fmt.Println(q, median(d))
		}
		db.Close()
	}
	fmt.Println("query median", median(times), "index bytes", dirSize(dir), "ratio", float64(dirSize(dir))/float64(text))
	hwm()
	fmt.Println()
}
