package hugepages

import "testing"

func TestWanted(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{
		{[]string{"mcpbridge", "serve", "--spec", "x"}, "", true},
		{[]string{"mcpbridge", "demo"}, "", true},
		{[]string{"mcpbridge", "tools", "--spec", "x"}, "true", true},
		{[]string{"mcpbridge", "version"}, "", false},
		{[]string{"mcpbridge", "client", "list"}, "", false},
		{[]string{"mcpbridge"}, "", false},
		{[]string{"mcpbridge", "serve"}, "false", false},
		{[]string{"mcpbridge", "serve"}, "0", false},
		{[]string{"mcpbridge", "serve", "--startup-huge-pages=false"}, "", false},
		{[]string{"mcpbridge", "serve", "--startup-huge-pages=true"}, "", true},
		{[]string{"mcpbridge", "serve", "--", "--startup-huge-pages=false"}, "", true},
		{[]string{"mcpbridge", "serve"}, "not a bool", true},
	} {
		if got := wanted(c.args, c.env); got != c.want {
			t.Errorf("wanted(%q, %q) = %v, want %v", c.args, c.env, got, c.want)
		}
	}
}
