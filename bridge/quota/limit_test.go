package quota_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/bridge/quota"
)

func TestParseLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want quota.Limit
		str  string // String of the result
	}{
		{"100/1m", quota.Limit{Calls: 100, Period: time.Minute}, "100/1m"},
		{"100/m", quota.Limit{Calls: 100, Period: time.Minute}, "100/1m"},
		{"1000/1h", quota.Limit{Calls: 1000, Period: time.Hour}, "1000/1h"},
		{"1000/h", quota.Limit{Calls: 1000, Period: time.Hour}, "1000/1h"},
		{"10/s", quota.Limit{Calls: 10, Period: time.Second}, "10/1s"},
		{"5/200ms", quota.Limit{Calls: 5, Period: 200 * time.Millisecond}, "5/200ms"},
		{"10000/d", quota.Limit{Calls: 10000, Period: 24 * time.Hour}, "10000/1d"},
		{"10000/7d", quota.Limit{Calls: 10000, Period: 7 * 24 * time.Hour}, "10000/7d"},
		{"90/1h30m", quota.Limit{Calls: 90, Period: 90 * time.Minute}, "90/1h30m"},
		{" 3 / 30s ", quota.Limit{Calls: 3, Period: 30 * time.Second}, "3/30s"},
		{"unlimited", quota.Limit{}, "unlimited"},
	} {
		got, err := quota.ParseLimit(tc.in)
		if err != nil {
			t.Errorf("ParseLimit(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseLimit(%q) mismatch (-want +got):\n%s", tc.in, diff)
		}
		if s := got.String(); s != tc.str {
			t.Errorf("ParseLimit(%q).String() = %q, want %q", tc.in, s, tc.str)
		}
		if back, err := quota.ParseLimit(got.String()); err != nil || back != got {
			t.Errorf("ParseLimit(%q) does not read back: %v %v", got.String(), back, err)
		}
	}
}

func TestParseLimitErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "want CALLS/PERIOD"},
		{"100", "want CALLS/PERIOD"},
		{"100/", "period is missing"},
		{"/1m", `calls "" is not a positive whole number`},
		{"0/1m", `calls "0" is not a positive whole number`},
		{"-5/1m", `calls "-5" is not a positive whole number`},
		{"1.5/m", `calls "1.5" is not a positive whole number`},
		{"abc/m", `calls "abc" is not a positive whole number`},
		{"100/1x", `period "1x" is not a unit`},
		{"100/minute", `period "minute" is not a unit`},
		{"100/0s", `period "0s" is not positive`},
		{"100/-1m", `period "-1m" is not positive`},
		{"100/0d", `period "0d" is not a whole number of days`},
		{"100/1us", "period 1µs (want 1ms to 366d)"},
		{"100/400d", `period "400d" is not a whole number of days`},
		{"100/9000h", "period 9000h0m0s (want 1ms to 366d)"},
		{"2000000000/s", "2000000000 calls (want 1 to 1000000000)"},
		{"Unlimited", "want CALLS/PERIOD"},
	} {
		_, err := quota.ParseLimit(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseLimit(%q) = %v, want an error containing %q", tc.in, err, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), `"`+tc.in+`"`) {
			t.Errorf("ParseLimit(%q) error %q does not quote the input", tc.in, err)
		}
	}
}

func TestLimitValidate(t *testing.T) {
	for _, tc := range []struct {
		l  quota.Limit
		ok bool
	}{
		{quota.Limit{}, true},
		{quota.Limit{Calls: 1, Period: time.Millisecond}, true},
		{quota.Limit{Calls: 1}, false},
		{quota.Limit{Period: time.Second}, false},
		{quota.Limit{Calls: -1, Period: time.Second}, false},
		{quota.Limit{Calls: 1, Period: -time.Second}, false},
	} {
		if err := tc.l.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v.Validate() = %v, want ok=%v", tc.l, err, tc.ok)
		}
	}
}

func TestFormatRetry(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{time.Millisecond, "0.1s"},
		{100 * time.Millisecond, "0.1s"},
		{101 * time.Millisecond, "0.2s"},
		{600 * time.Millisecond, "0.6s"},
		{time.Second, "1.0s"},
		{9900 * time.Millisecond, "9.9s"},
		{9901 * time.Millisecond, "10.0s"},
		{10 * time.Second, "10s"},
		{10*time.Second + 1, "11s"},
		{3 * time.Minute, "180s"},
	} {
		if got := quota.FormatRetry(tc.d); got != tc.want {
			t.Errorf("FormatRetry(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
