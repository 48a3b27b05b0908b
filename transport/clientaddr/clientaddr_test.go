package clientaddr

import "testing"

func TestBucket(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7:5555":                  "192.0.2.7",
		"192.0.2.7":                       "192.0.2.7",
		"[2001:db8:1::1]:443":             "2001:db8:1::/64",
		"[2001:db8:1::ffff:1234]:1":       "2001:db8:1::/64",
		"[2001:db8:1:0:dead:beef:0:1]:80": "2001:db8:1::/64",
		"[2001:db8:1:2::1]:80":            "2001:db8:1:2::/64",
		"[::ffff:192.0.2.7]:80":           "192.0.2.7",
		"[fe80::1%eth0]:80":               "fe80::/64",
		"[::1]:9":                         "::/64",
		"pipe":                            "pipe",
		"unix.sock:1":                     "unix.sock",
	} {
		if got := Bucket(in); got != want {
			t.Errorf("Bucket(%q) = %q, want %q", in, got, want)
		}
	}
}
