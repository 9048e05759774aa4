// Package embedtest is a stub embedding provider for tests: an HTTP
// server speaking OpenAI's POST /v1/embeddings that answers with a
// deterministic concept embedder, and can be made to fail, stall, rate
// limit, refuse long inputs or change its vector length.
package embedtest

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Concepts maps words to a shared concept: words of one concept embed
// close together, so a paraphrase finds the note without sharing a word.
var Concepts = map[string][]string{
	"kitchen":  {"kitchen", "cooking", "cook", "stove", "oven", "worktop", "cupboards"},
	"renovate": {"renovation", "renovating", "remodel", "remodelling", "redo", "redoing", "rebuild", "refit", "works"},
	"money":    {"budget", "cost", "costs", "money", "spend", "price", "euros", "quote", "afford", "expensive", "cheap"},
	"decide":   {"decided", "decide", "decision", "agreed", "settled", "chose", "choice"},
	"travel":   {"trip", "travel", "journey", "holiday", "vacation", "flight", "flights", "train"},
	"japan":    {"japan", "tokyo", "kyoto", "osaka", "japanese"},
	"health":   {"doctor", "physician", "gp", "appointment", "checkup", "clinic", "health", "medical"},
	"garden":   {"garden", "plants", "tomatoes", "seedlings", "compost", "vegetables", "growing"},
	"car":      {"car", "vehicle", "tyres", "tires", "garage", "mechanic", "service"},
	"child":    {"school", "teacher", "kids", "children", "son", "daughter", "homework"},
	"music":    {"guitar", "piano", "lessons", "practice", "chords", "music", "song"},
	"work":     {"meeting", "project", "deadline", "client", "colleague", "office", "report"},
}

var conceptOf = func() map[string]int {
	names := make([]string, 0, len(Concepts))
	for n := range Concepts {
		names = append(names, n)
	}
	slices.Sort(names)
	m := map[string]int{}
	for i, n := range names {
		for _, w := range Concepts[n] {
			m[w] = i
		}
	}
	return m
}()

// Vector embeds text in dim dimensions (dim > len(Concepts)): each word of
// a concept adds 1 to its concept's dimension, any other word 0.3 to a
// dimension chosen by its hash; the result has unit length.
func Vector(text string, dim int) []float32 {
	v := make([]float32, dim)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		if c, ok := conceptOf[w]; ok {
			v[c]++
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[len(Concepts)+int(h.Sum32()%uint32(dim-len(Concepts)))] += 0.3
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n > 0 {
		for i := range v {
			v[i] /= float32(math.Sqrt(n))
		}
	}
	return v
}

// Server is the stub provider. Set its fields before or between requests.
type Server struct {
	*httptest.Server

	mu sync.Mutex
	// Dim is the vector length answered (default 64).
	Dim int
	// Key, when set, is the bearer token required (401 otherwise).
	Key string
	// Fail makes every request answer HTTP 503.
	Fail bool
	// RateLimit answers the next RateLimit requests with HTTP 429.
	RateLimit int
	// MaxInput refuses, with HTTP 400 naming the context length, a
	// request holding an input longer than this many bytes (0: none).
	MaxInput int
	// Stall, when not nil, holds each request until it is closed or the
	// client gives up.
	Stall chan struct{}
	// Calls counts every request received; Requests and Inputs the
	// requests and inputs answered with vectors; Texts holds every input
	// embedded.
	Calls, Requests, Inputs int
	Texts                   []string
	// Auth is the Authorization header of the last request.
	Auth string
}

// New starts a stub provider; its base URL is URL+"/v1".
func New() *Server {
	s := &Server{Dim: 64}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the API base URL a client takes.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Set changes the stub under its lock.
func (s *Server) Set(f func(s *Server)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// Count returns Requests and Inputs.
func (s *Server) Count() (requests, inputs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Requests, s.Inputs
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	stall := s.Stall
	s.Calls++
	s.mu.Unlock()
	if stall != nil {
		select {
		case <-stall:
		case <-r.Context().Done():
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Auth = r.Header.Get("Authorization")
	switch {
	case s.Key != "" && s.Auth != "Bearer "+s.Key:
		http.Error(w, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
		return
	case s.Fail:
		http.Error(w, `{"error":{"message":"model not loaded"}}`, http.StatusServiceUnavailable)
		return
	case s.RateLimit > 0:
		s.RateLimit--
		http.Error(w, `{"error":{"message":"rate limit reached"}}`, http.StatusTooManyRequests)
		return
	}
	for _, in := range req.Input {
		if s.MaxInput > 0 && len(in) > s.MaxInput {
			http.Error(w, `{"error":{"message":"the input length exceeds the context length"}}`, http.StatusBadRequest)
			return
		}
	}
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []datum `json:"data"`
		Model  string  `json:"model"`
	}{Object: "list", Model: req.Model}
	// Answer in reverse order: clients must order by index.
	for i := len(req.Input) - 1; i >= 0; i-- {
		out.Data = append(out.Data, datum{"embedding", i, Vector(req.Input[i], s.Dim)})
	}
	s.Requests++
	s.Inputs += len(req.Input)
	s.Texts = append(s.Texts, req.Input...)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}
