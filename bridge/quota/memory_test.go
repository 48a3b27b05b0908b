package quota_test

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbridge/mcpbridge/bridge/quota"
)

// TestMemoryStoreGCRA checks the exact arithmetic on a fake clock: a full
// quota is spent at once, the next call waits exactly Period/Calls, and the
// quota refills one call per Period/Calls until full again.
func TestMemoryStoreGCRA(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := quota.NewMemoryStore()
		l := quota.Limit{Calls: 4, Period: time.Minute} // one call every 15s
		allow := func(key string) (bool, time.Duration) {
			t.Helper()
			ok, retry, err := s.Allow(t.Context(), key, l)
			if err != nil {
				t.Fatal(err)
			}
			return ok, retry
		}
		for i := range 4 {
			if ok, _ := allow("a"); !ok {
				t.Fatalf("call %d of 4 refused", i+1)
			}
		}
		ok, retry := allow("a")
		if ok || retry != 15*time.Second {
			t.Fatalf("5th call: allowed=%v retry=%v; want refused, retry 15s", ok, retry)
		}
		// A refusal is not counted: asking again gives the same answer.
		if ok, again := allow("a"); ok || again != retry {
			t.Fatalf("repeated refusal: allowed=%v retry=%v; want refused, %v", ok, again, retry)
		}
		if ok, _ := allow("b"); !ok {
			t.Fatal("another key is refused")
		}

		time.Sleep(14 * time.Second)
		if ok, retry := allow("a"); ok || retry != time.Second {
			t.Fatalf("at 14s: allowed=%v retry=%v; want refused, retry 1s", ok, retry)
		}
		time.Sleep(time.Second)
		if ok, _ := allow("a"); !ok {
			t.Fatal("at 15s one call has refilled, but it is refused")
		}
		if ok, _ := allow("a"); ok {
			t.Fatal("at 15s only one call has refilled, but two are allowed")
		}

		time.Sleep(time.Minute) // fully refilled, and no more than full
		for i := range 4 {
			if ok, _ := allow("a"); !ok {
				t.Fatalf("after a period, call %d of 4 refused", i+1)
			}
		}
		if ok, _ := allow("a"); ok {
			t.Fatal("an idle key refilled beyond its burst")
		}
	})
}

// TestMemoryStoreEvictsIdle checks that keys whose quota has refilled are
// dropped, and that the key bound holds when every key is in debt.
func TestMemoryStoreEvictsIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := quota.NewMemoryStore()
		l := quota.Limit{Calls: 1, Period: time.Second}
		for i := range 5000 {
			if ok, _, err := s.Allow(t.Context(), fmt.Sprint("k", i), l); !ok || err != nil {
				t.Fatalf("first call of k%d: %v %v", i, ok, err)
			}
		}
		if n := s.Len(); n != 5000 {
			t.Fatalf("Len = %d, want 5000 keys in debt", n)
		}
		time.Sleep(quota.MemorySweepEvery)
		if ok, _, _ := s.Allow(t.Context(), "new", l); !ok {
			t.Fatal("a new key is refused")
		}
		if n := s.Len(); n != 1 {
			t.Errorf("after a sweep Len = %d, want 1 (the refilled keys dropped)", n)
		}

		small := quota.NewMemoryStoreMax(64)
		slow := quota.Limit{Calls: 1, Period: time.Hour}
		for i := range 1000 {
			if ok, _, err := small.Allow(t.Context(), fmt.Sprint("k", i), slow); !ok || err != nil {
				t.Fatalf("first call of k%d: %v %v", i, ok, err)
			}
			if n := small.Len(); n > 64 {
				t.Fatalf("Len = %d past the bound of 64", n)
			}
		}
	})
}

func TestMemoryStoreInvalidLimit(t *testing.T) {
	s := quota.NewMemoryStore()
	for _, l := range []quota.Limit{{}, {Calls: 1}, {Calls: -1, Period: time.Second}} {
		if _, _, err := s.Allow(t.Context(), "k", l); !errors.Is(err, quota.ErrInvalidLimit) {
			t.Errorf("Allow(%+v) = %v, want ErrInvalidLimit", l, err)
		}
	}
}

func BenchmarkMemoryStore(b *testing.B) {
	s := quota.NewMemoryStore()
	l := quota.Limit{Calls: 1 << 30, Period: time.Second}
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			s.Allow(b.Context(), fmt.Sprint("k", i%1024), l)
		}
	})
}
