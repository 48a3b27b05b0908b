package quota

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The bounds of a [MemoryStore], exported for help texts.
const (
	// MemoryMaxKeys caps the callers a MemoryStore tracks at once.
	MemoryMaxKeys = 100_000
	// MemorySweepEvery is how often, at most, a MemoryStore drops the
	// callers whose quota has fully refilled.
	MemorySweepEvery = time.Minute
)

// MemoryStore counts calls in this process: each replica of the bridge
// counts on its own, so with N replicas behind a load balancer a caller may
// make up to N times its quota. Use [RedisStore] to share one count.
//
// It keeps, per key, only the GCRA theoretical arrival time (TAT). A key
// whose TAT has passed has its full quota again and is indistinguishable
// from a key never seen, so dropping it loses nothing: idle keys are swept
// at most every MemorySweepEvery, and whenever the map reaches a size twice
// what the last sweep left. Memory is bounded by MemoryMaxKeys: when that
// many keys are all in debt, some (chosen at random) are forgiven to make
// room, a trade-off in favour of never refusing a new caller for want of
// space.
//
// The zero MemoryStore is not usable; call [NewMemoryStore].
type MemoryStore struct {
	mu        sync.Mutex
	tat       map[string]time.Time
	lastSweep time.Time
	nextSweep int // sweep when len(tat) reaches this
	maxKeys   int
}

// NewMemoryStore returns an empty in-process store. It starts no goroutine
// and needs no Close.
func NewMemoryStore() *MemoryStore { return newMemoryStore(MemoryMaxKeys) }

func newMemoryStore(maxKeys int) *MemoryStore {
	return &MemoryStore{tat: make(map[string]time.Time), lastSweep: time.Now(), nextSweep: 1024, maxKeys: maxKeys}
}

// Allow implements [Store] with GCRA: burst Calls, one call refilled every
// Period/Calls. It fails only for an invalid limit.
func (s *MemoryStore) Allow(_ context.Context, key string, l Limit) (bool, time.Duration, error) {
	if err := l.Validate(); err != nil || l.IsZero() {
		if err == nil {
			err = fmt.Errorf("%w: zero limit", ErrInvalidLimit)
		}
		return false, 0, err
	}
	now := time.Now()
	interval := l.interval()
	burst := interval * time.Duration(l.Calls)

	s.mu.Lock()
	defer s.mu.Unlock()
	tat, seen := s.tat[key]
	if !seen || tat.Before(now) {
		tat = now
	}
	newTAT := tat.Add(interval)
	if allowAt := newTAT.Add(-burst); now.Before(allowAt) {
		return false, allowAt.Sub(now), nil
	}
	if !seen {
		s.makeRoom(now)
	}
	s.tat[key] = newTAT
	return true, 0, nil
}

// makeRoom runs before a new key is added: it sweeps the refilled keys when
// due, and forgives keys in debt when the store is still full.
func (s *MemoryStore) makeRoom(now time.Time) {
	if len(s.tat) >= s.nextSweep || len(s.tat) >= s.maxKeys || now.Sub(s.lastSweep) >= MemorySweepEvery {
		for k, t := range s.tat {
			if !t.After(now) {
				delete(s.tat, k)
			}
		}
		s.lastSweep = now
		s.nextSweep = max(1024, 2*len(s.tat))
	}
	if len(s.tat) < s.maxKeys {
		return
	}
	drop := max(1, s.maxKeys/16)
	for k := range s.tat { // map order is random
		delete(s.tat, k)
		if drop--; drop == 0 {
			break
		}
	}
}

// Len is how many keys the store tracks, refilled ones not yet swept
// included.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tat)
}
