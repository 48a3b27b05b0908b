package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// latency makes the same number of sequential calls to every target, one
// call per target in turn (the order rotating), so that whatever else the
// machine does hits all targets alike.
func (b *bench) latency(ctx context.Context, targets []*target) error {
	batches := b.cfg.batches()
	warm := 3
	if b.cfg.Short {
		warm = 0 // checkResults made one call per target and size already
	}
	for _, t := range targets {
		for _, e := range b.eps {
			for range warm {
				if _, err := t.call(ctx, e); err != nil {
					return fmt.Errorf("warming up %s %s: %w", t.Name, e.Size, err)
				}
			}
		}
	}
	samples := make([][][]time.Duration, len(targets))
	for i := range samples {
		samples[i] = make([][]time.Duration, len(b.eps))
	}
	n := len(targets)
	// CPU ticks each server process spent per size, over the same calls.
	ticks := make([][]int64, len(targets))
	for i := range ticks {
		ticks[i] = make([]int64, len(b.eps))
	}
	cpuNow := func() []int64 {
		out := make([]int64, len(targets))
		for i, t := range targets {
			if t.pid != 0 {
				if m, err := readMem(t.pid); err == nil {
					out[i] = m.CPUTicks
				}
			}
		}
		return out
	}
	for r := range b.cfg.Rounds {
		for ei, e := range b.eps {
			before := cpuNow()
			for i := range batches[e.Size] {
				for j := range n {
					ti := (i + j + r) % n
					start := time.Now()
					_, err := targets[ti].call(ctx, e)
					d := time.Since(start)
					if err != nil {
						return fmt.Errorf("%s %s: %w", targets[ti].Name, e.Size, err)
					}
					samples[ti][ei] = append(samples[ti][ei], d)
				}
			}
			for ti, after := range cpuNow() {
				ticks[ti][ei] += after - before[ti]
			}
		}
	}
	for ei, e := range b.eps {
		direct := percentile(samples[0][ei], 0.5)
		for ti, t := range targets {
			s := samples[ti][ei]
			p50 := percentile(s, 0.5)
			b.rep.Latency = append(b.rep.Latency, latencyInfo{
				Target: t.Name, Size: e.Size, N: len(s),
				P50: us(p50), P90: us(percentile(s, 0.9)), P99: us(percentile(s, 0.99)),
				Mean: us(mean(s)), Overhead: us(p50 - direct),
				CPUPerCall: cpuPerCall(ticks[ti][ei], len(s)),
			})
		}
	}
	return nil
}

// cpuPerCall is the server CPU time per call in µs, from USER_HZ ticks
// (100 a second on Linux, so it needs thousands of calls to be exact).
func cpuPerCall(ticks int64, calls int) float64 {
	if calls == 0 || ticks <= 0 {
		return 0
	}
	return float64(ticks) * 1e4 / float64(calls)
}

// throughput runs c workers per target calling one endpoint back to back
// for cfg.Duration per cell, split into cfg.Rounds slices visited
// round-robin across targets.
func (b *bench) throughput(ctx context.Context, targets []*target) error {
	slice := b.cfg.Duration / time.Duration(b.cfg.Rounds)
	n := len(targets)
	for _, c := range []int{1, 8, 32} {
		// Open c connections everywhere (client→server→upstream) first.
		for _, t := range targets {
			if _, _, err := load(ctx, t, b.eps[0], c, 0); err != nil {
				return fmt.Errorf("warming up %s at c=%d: %w", t.Name, c, err)
			}
		}
		for _, e := range b.eps {
			if !b.cfg.throughputSize(e.Size) {
				continue
			}
			calls := make([]int64, n)
			took := make([]time.Duration, n)
			for r := range b.cfg.Rounds {
				for j := range n {
					ti := (j + r) % n
					k, d, err := load(ctx, targets[ti], e, c, slice)
					if err != nil {
						return fmt.Errorf("%s %s at c=%d: %w", targets[ti].Name, e.Size, c, err)
					}
					calls[ti] += k
					took[ti] += d
				}
			}
			for ti, t := range targets {
				b.rep.Throughput = append(b.rep.Throughput, throughputInfo{
					Target: t.Name, Size: e.Size, Concurrency: c,
					Calls: calls[ti], Seconds: took[ti].Seconds(), PerSecond: float64(calls[ti]) / took[ti].Seconds(),
				})
			}
		}
	}
	return nil
}

// load runs c workers that call e until d has passed (each worker makes
// at least one call) and returns the calls made and the time taken,
// including the calls in flight at the deadline.
func load(ctx context.Context, t *target, e *endpoint, c int, d time.Duration) (int64, time.Duration, error) {
	var calls atomic.Int64
	var firstErr error
	var once sync.Once
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				if _, err := t.call(ctx, e); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				calls.Add(1)
				if !time.Now().Before(deadline) {
					return
				}
			}
		})
	}
	wg.Wait()
	return calls.Load(), time.Since(start), firstErr
}

// percentile is the nearest-rank q-quantile of s (s is sorted in place).
func percentile(s []time.Duration, q float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func mean(s []time.Duration) time.Duration {
	if len(s) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return sum / time.Duration(len(s))
}

// us is d in microseconds, the unit of the JSON report.
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
