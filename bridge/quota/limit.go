package quota

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The bounds [ParseLimit] and [Limit.Validate] accept.
const (
	MaxCalls  = 1_000_000_000
	MinPeriod = time.Millisecond
	MaxPeriod = 366 * 24 * time.Hour
)

// Unlimited is the text [ParseLimit] reads as the zero Limit (no quota),
// for exempting one identity from a default.
const Unlimited = "unlimited"

// ErrInvalidLimit reports a Limit outside the bounds; a store returns it
// (wrapped) rather than count against a limit it cannot honour.
var ErrInvalidLimit = errors.New("invalid quota limit")

// Limit is a quota: at most Calls tool calls per Period. The zero Limit
// means no quota.
type Limit struct {
	// Calls is how many calls the quota allows per Period, and also how many
	// may be made at once when the quota is full (the burst).
	Calls int
	// Period is the window over which Calls refill, one call every
	// Period/Calls.
	Period time.Duration
}

// IsZero reports the zero Limit: no quota.
func (l Limit) IsZero() bool { return l == Limit{} }

// Validate reports a non-zero Limit outside the bounds: Calls in
// 1..MaxCalls, Period in MinPeriod..MaxPeriod. The zero Limit is valid.
func (l Limit) Validate() error {
	switch {
	case l.IsZero():
		return nil
	case l.Calls < 1 || l.Calls > MaxCalls:
		return fmt.Errorf("%w: %d calls (want 1 to %d)", ErrInvalidLimit, l.Calls, MaxCalls)
	case l.Period < MinPeriod || l.Period > MaxPeriod:
		return fmt.Errorf("%w: period %v (want %v to %v)", ErrInvalidLimit, l.Period, MinPeriod, formatPeriod(MaxPeriod))
	}
	return nil
}

// String is the limit as ParseLimit reads it: "100/1m", "10/1s",
// "1000/1h", "5/200ms", "10000/1d", or "unlimited" for the zero Limit.
func (l Limit) String() string {
	if l.IsZero() {
		return Unlimited
	}
	return strconv.Itoa(l.Calls) + "/" + formatPeriod(l.Period)
}

// interval is the GCRA emission interval: one call refills every interval.
func (l Limit) interval() time.Duration { return l.Period / time.Duration(l.Calls) }

// units are the bare period units ParseLimit accepts after the slash.
var units = map[string]time.Duration{
	"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour,
}

// ParseLimit reads "CALLS/PERIOD": CALLS a positive integer, PERIOD either a
// bare unit (ms, s, m, h, d: "100/m" is 100 calls a minute) or a count with
// a unit ("100/1m", "1000/1h", "5/200ms", "10000/1d"; any Go duration such
// as "1h30m"). "unlimited" reads as the zero Limit (no quota). Spaces around
// the parts are ignored.
func ParseLimit(s string) (Limit, error) {
	text := strings.TrimSpace(s)
	if text == Unlimited {
		return Limit{}, nil
	}
	calls, period, ok := strings.Cut(text, "/")
	if !ok {
		return Limit{}, fmt.Errorf("quota %q: want CALLS/PERIOD such as 100/1m, 10/s, 1000/1h, or %q", s, Unlimited)
	}
	calls, period = strings.TrimSpace(calls), strings.TrimSpace(period)
	n, err := strconv.Atoi(calls)
	if err != nil || n < 1 {
		return Limit{}, fmt.Errorf("quota %q: calls %q is not a positive whole number", s, calls)
	}
	d, err := parsePeriod(period)
	if err != nil {
		return Limit{}, fmt.Errorf("quota %q: %w", s, err)
	}
	l := Limit{Calls: n, Period: d}
	if err := l.Validate(); err != nil {
		return Limit{}, fmt.Errorf("quota %q: %w", s, err)
	}
	return l, nil
}

// parsePeriod reads a bare unit, a whole number of days ("7d") or a Go
// duration.
func parsePeriod(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("period is missing (want a unit such as s, m, h or a duration such as 1m)")
	}
	if d, ok := units[s]; ok {
		return d, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > int(MaxPeriod/(24*time.Hour)) {
			return 0, fmt.Errorf("period %q is not a whole number of days", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("period %q is not a unit (ms, s, m, h, d) or a duration such as 1m, 30s, 1h", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("period %q is not positive", s)
	}
	return d, nil
}

// formatPeriod writes d compactly: 1m rather than 1m0s, 1d for 24h.
func formatPeriod(d time.Duration) string {
	const day = 24 * time.Hour
	if d >= day && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// formatRetry writes a wait for a person: tenths of a second below 10s,
// whole seconds above, always rounded up so that retrying then succeeds.
func formatRetry(d time.Duration) string {
	if d < 10*time.Second {
		tenths := (d + 100*time.Millisecond - 1) / (100 * time.Millisecond)
		return strconv.FormatFloat(float64(tenths)/10, 'f', 1, 64) + "s"
	}
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10) + "s"
}
