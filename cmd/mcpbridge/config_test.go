package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigFileDurationNeedsUnit checks that a duration written as a bare
// number in the config file ("timeout: 30") is an error naming the key,
// not 30 nanoseconds: the flag and the environment refuse "30" already.
func TestConfigFileDurationNeedsUnit(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) (*Config, error) {
		t.Helper()
		conf := filepath.Join(dir, "mcpbridge.yaml")
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		fs := flagSet("serve")
		if err := fs.Parse([]string{"--config", conf}); err != nil {
			t.Fatal(err)
		}
		return loadConfig(fs, nil)
	}
	for _, body := range []string{"timeout: 30\n", "spec-timeout: 10\n", "session-timeout: 1.5\n", "keepalive: 15\n", "spec-refresh: 300\n"} {
		key, _, _ := strings.Cut(body, ":")
		_, err := load(body)
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "unit") {
			t.Errorf("%q: error %v; want one naming %s and asking for a unit", strings.TrimSpace(body), err, key)
		}
	}
	for body, want := range map[string]time.Duration{"timeout: 30s\n": 30 * time.Second, "spec-refresh: 0\n": 0, "timeout: 1m30s\n": 90 * time.Second} {
		cfg, err := load(body)
		if err != nil {
			t.Errorf("%q: %v", strings.TrimSpace(body), err)
			continue
		}
		if got := cfg.Timeout; strings.HasPrefix(body, "timeout") && got != want {
			t.Errorf("%q: timeout %v, want %v", strings.TrimSpace(body), got, want)
		}
	}
	// Defaults (durations from the flags) still decode.
	cfg, err := load("spec: x.yaml\n")
	if err != nil || cfg.Timeout != 30*time.Second || cfg.KeepAlive != 30*time.Second {
		t.Errorf("defaults: %v, timeout %v, keepalive %v", err, cfg.Timeout, cfg.KeepAlive)
	}
}
