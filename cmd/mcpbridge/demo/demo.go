// Package demo is the example REST API embedded in mcpbridge: its OpenAPI
// document, its whitelist, and an in-memory implementation served on a
// loopback port by "mcpbridge demo". It must not import other mcpbridge
// packages.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	_ "embed"
)

// Spec is the demo API's OpenAPI 3.0 document.
//
//go:embed openapi.yaml
var Spec []byte

// Whitelist selects the demo tools.
//
//go:embed whitelist.yaml
var Whitelist []byte

type note struct {
	ID        int       `json:"id"`
	Title     string    `json:"title"`
	Body      string    `json:"body,omitempty"`
	Tags      []string  `json:"tags,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// store is the in-memory notes database.
type store struct {
	mu    sync.Mutex
	next  int
	notes map[int]note
}

// NewHandler returns the demo API, seeded with two notes.
func NewHandler() http.Handler {
	s := &store{next: 1, notes: map[int]note{}}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s.add(note{Title: "Welcome", Body: "This note comes from the demo API behind mcpbridge.", Tags: []string{"intro"}, CreatedAt: t0})
	s.add(note{Title: "Try a call", Body: "Ask your assistant to create, list or delete notes.", Tags: []string{"intro", "howto"}, CreatedAt: t0.Add(time.Minute)})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /notes", s.list)
	mux.HandleFunc("POST /notes", s.create)
	mux.HandleFunc("GET /notes/{id}", s.get)
	mux.HandleFunc("DELETE /notes/{id}", s.delete)
	mux.HandleFunc("GET /account", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{
			"user":    "demo@example.com",
			"plan":    "free",
			"api_key": "demo-key-7f3a9c1e5b",
			"session": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZW1vIn0.c2lnbmF0dXJlLW5vdC1yZWFs",
		})
	})
	return mux
}

// Serve runs the demo API on a free loopback port until ctx ends. It
// returns the base URL once listening, and a channel closed when stopped.
func Serve(ctx context.Context) (string, <-chan struct{}, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("demo API: %w", err)
	}
	srv := &http.Server{Handler: NewHandler(), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) // best effort at exit
	}()
	return "http://" + ln.Addr().String(), done, nil
}

func (s *store) add(n note) note {
	s.mu.Lock()
	defer s.mu.Unlock()
	n.ID = s.next
	s.next++
	if n.CreatedAt.IsZero() {
		n.CreatedAt = time.Now().UTC().Truncate(time.Second)
	}
	s.notes[n.ID] = n
	return n
}

func (s *store) list(w http.ResponseWriter, r *http.Request) {
	limit := 20
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "limit must be an integer from 1 to 100"})
			return
		}
		limit = n
	}
	tag := r.URL.Query().Get("tag")
	s.mu.Lock()
	out := make([]note, 0, len(s.notes))
	for _, n := range s.notes {
		if tag == "" || contains(n.Tags, tag) {
			out = append(out, n)
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	if len(out) > limit {
		out = out[:limit]
	}
	writeJSON(w, http.StatusOK, map[string]any{"notes": out})
}

func (s *store) create(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title string   `json:"title"`
		Body  string   `json:"body"`
		Tags  []string `json:"tags"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil || in.Title == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "a note needs a JSON body with a non-empty title"})
		return
	}
	n := s.add(note{Title: in.Title, Body: in.Body, Tags: in.Tags})
	writeJSON(w, http.StatusCreated, n)
}

func (s *store) get(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	s.mu.Lock()
	n, ok := s.notes[id]
	s.mu.Unlock()
	if err != nil || !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no note with id " + r.PathValue("id")})
		return
	}
	writeJSON(w, http.StatusOK, n)
}

func (s *store) delete(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	s.mu.Lock()
	_, ok := s.notes[id]
	delete(s.notes, id)
	s.mu.Unlock()
	if err != nil || !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no note with id " + r.PathValue("id")})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client went away; nothing to do
}
