package quota_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/quota"
)

func TestBucketKey(t *testing.T) {
	for _, tc := range []struct {
		id   *bridge.Identity
		want string
	}{
		{nil, "anonymous"},
		{&bridge.Identity{}, "anonymous"},
		{bridge.Local, "local"},
		{&bridge.Identity{ID: "api-key:0", Remote: "10.0.0.1:5000"}, "api-key:0"},
		{&bridge.Identity{ID: "jwt:https://iss|alice", Subject: "alice"}, "jwt:https://iss|alice"},
		{&bridge.Identity{Remote: "10.0.0.1:5000"}, "10.0.0.1"},
		// IPv6 by its /64: one host's many addresses are one caller.
		{&bridge.Identity{Remote: "[2001:db8::1]:443"}, "2001:db8::/64"},
		{&bridge.Identity{Remote: "[2001:db8::9:8:7:6]:443"}, "2001:db8::/64"},
		{&bridge.Identity{Remote: "[2001:db8:0:1::1]:443"}, "2001:db8:0:1::/64"},
		{&bridge.Identity{Remote: "10.0.0.1"}, "10.0.0.1"},
		{&bridge.Identity{Remote: "@"}, "@"},
	} {
		if got := quota.BucketKey(tc.id); got != tc.want {
			t.Errorf("BucketKey(%+v) = %q, want %q", tc.id, got, tc.want)
		}
	}
}

func TestPolicyLimitFor(t *testing.T) {
	def := quota.Limit{Calls: 100, Period: time.Minute}
	byID := quota.Limit{Calls: 1000, Period: time.Hour}
	bySub := quota.Limit{Calls: 10, Period: time.Second}
	byAddr := quota.Limit{Calls: 1, Period: time.Second}
	p := quota.Policy{Default: def, PerIdentity: map[string]Limit{
		"api-key:0":     byID,
		"jwt:iss|bob":   byID,
		"bob":           bySub, // shadowed by bob's ID
		"alice":         bySub,
		"api-key:9":     {}, // exempt
		"192.0.2.7":     byAddr,
		quota.Anonymous: byAddr,
	}}
	for _, tc := range []struct {
		name string
		id   *bridge.Identity
		want quota.Limit
	}{
		{"by ID", &bridge.Identity{ID: "api-key:0"}, byID},
		{"ID before subject", &bridge.Identity{ID: "jwt:iss|bob", Subject: "bob"}, byID},
		{"by subject", &bridge.Identity{ID: "jwt:other|alice", Subject: "alice"}, bySub},
		{"exempt", &bridge.Identity{ID: "api-key:9"}, quota.Limit{}},
		{"by address", &bridge.Identity{Remote: "192.0.2.7:1234"}, byAddr},
		{"anonymous", nil, byAddr},
		{"default", &bridge.Identity{ID: "api-key:1", Subject: "carol"}, def},
		{"default for an address", &bridge.Identity{Remote: "192.0.2.8:1"}, def},
	} {
		if diff := cmp.Diff(tc.want, p.LimitFor(tc.id)); diff != "" {
			t.Errorf("%s: LimitFor(%+v) mismatch (-want +got):\n%s", tc.name, tc.id, diff)
		}
	}
	if got := (quota.Policy{}).LimitFor(&bridge.Identity{ID: "x"}); !got.IsZero() {
		t.Errorf("the zero Policy sets %v", got)
	}
}

// Limit is short for quota.Limit in the tables.
type Limit = quota.Limit

func TestParsePolicy(t *testing.T) {
	p, err := quota.ParsePolicy("100/1m", map[string]string{"api-key:0": "1000/1h", "api-key:1": "unlimited"})
	if err != nil {
		t.Fatal(err)
	}
	want := quota.Policy{
		Default:     Limit{Calls: 100, Period: time.Minute},
		PerIdentity: map[string]Limit{"api-key:0": {Calls: 1000, Period: time.Hour}, "api-key:1": {}},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("ParsePolicy mismatch (-want +got):\n%s", diff)
	}
	if !p.Enabled() || p.Validate() != nil {
		t.Errorf("Enabled=%v Validate=%v", p.Enabled(), p.Validate())
	}
	if p, err := quota.ParsePolicy("", nil); err != nil || p.Enabled() {
		t.Errorf(`ParsePolicy("", nil) = %+v, %v; want no quota`, p, err)
	}

	_, err = quota.ParsePolicy("100", map[string]string{"api-key:0": "0/1m", "b": "1/1h", "": "1/s"})
	if err == nil {
		t.Fatal("bad policy accepted")
	}
	for _, want := range []string{`default: quota "100"`, `identity "api-key:0": quota "0/1m"`, "empty identity key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePolicy error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), `"b"`) {
		t.Errorf("ParsePolicy blames a good entry:\n%v", err)
	}

	bad := quota.Policy{Default: Limit{Calls: 1}, PerIdentity: map[string]Limit{"x": {Period: time.Second}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "default") || !strings.Contains(err.Error(), `identity "x"`) {
		t.Errorf("Validate = %v, want both problems", err)
	}
}

// A JWT subject is matched against the entries that name subjects, never
// against an entry naming another kind of caller: a token whose "sub" the
// IdP let its holder choose ("api-key:3", "127.0.0.1", "local") must not
// take that key's, address's or stdio user's quota (an exemption, say).
func TestPolicySubjectNamesNoOtherCaller(t *testing.T) {
	def := quota.Limit{Calls: 3, Period: time.Hour}
	other := quota.Limit{Calls: 1000, Period: time.Second}
	p := quota.Policy{Default: def, PerIdentity: map[string]Limit{
		"api-key:3":              {}, // exempt
		"jwt:https://idp|svc-42": other,
		"127.0.0.1":              {},
		"2001:db8::/64":          {},
		"local":                  {},
		quota.Anonymous:          other,
		"alice":                  other,
		"auth0|bob":              other,
	}}
	for _, sub := range []string{"api-key:3", "jwt:https://idp|svc-42", "127.0.0.1", "2001:db8::/64", "local", quota.Anonymous} {
		id := &bridge.Identity{ID: "jwt:https://idp|" + sub, Subject: sub}
		if got := p.LimitFor(id); got != def {
			t.Errorf("subject %q: LimitFor = %v, want the default %v", sub, got, def)
		}
	}
	for _, sub := range []string{"alice", "auth0|bob"} {
		id := &bridge.Identity{ID: "jwt:https://idp|" + sub, Subject: sub}
		if got := p.LimitFor(id); got != other {
			t.Errorf("subject %q: LimitFor = %v, want its entry %v", sub, got, other)
		}
	}
}

// An unauthenticated caller is counted by its bucket key (an IPv6 client by
// its /64, an IPv4-mapped one as IPv4), so an entry naming one address is
// read as that bucket; otherwise "::1" would silently match no caller.
func TestParsePolicyAddresses(t *testing.T) {
	p, err := quota.ParsePolicy("2/1h", map[string]string{
		"::1": "unlimited", "2001:db8:1::5": "10/1m", "::ffff:192.0.2.7": "5/1m", "198.51.100.1": "7/1m", "2001:db8:2::/64": "8/1m",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		remote string
		want   quota.Limit
	}{
		{"[::1]:5000", quota.Limit{}},
		{"[2001:db8:1::9]:1", quota.Limit{Calls: 10, Period: time.Minute}},
		{"192.0.2.7:80", quota.Limit{Calls: 5, Period: time.Minute}},
		{"198.51.100.1:80", quota.Limit{Calls: 7, Period: time.Minute}},
		{"[2001:db8:2::1]:80", quota.Limit{Calls: 8, Period: time.Minute}},
		{"[2001:db8:3::1]:80", quota.Limit{Calls: 2, Period: time.Hour}},
	} {
		if got := p.LimitFor(&bridge.Identity{Remote: tc.remote}); got != tc.want {
			t.Errorf("LimitFor(%s) = %v, want %v", tc.remote, got, tc.want)
		}
	}
	// Two entries for one bucket cannot both apply.
	_, err = quota.ParsePolicy("", map[string]string{"2001:db8::1": "1/s", "2001:db8::2": "2/s"})
	if err == nil || !strings.Contains(err.Error(), "2001:db8::/64") {
		t.Errorf("two entries for one /64: err = %v, want one naming 2001:db8::/64", err)
	}
}
