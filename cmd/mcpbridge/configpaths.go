package main

import (
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// configPaths are the keys whose values are file or directory names.
func configPaths(cfg *Config) map[string]*string {
	return map[string]*string{
		"spec":                 &cfg.Spec,
		"whitelist":            &cfg.Whitelist,
		"api-key-file":         &cfg.APIKeyFile,
		"upstream-ca-file":     &cfg.UpstreamCAFile,
		"upstream-client-cert": &cfg.UpstreamClientCert,
		"upstream-client-key":  &cfg.UpstreamClientKey,
		"cache-dir":            &cfg.CacheDir,
	}
}

// resolveConfigPaths makes the relative paths the config file gave
// relative to the file's own directory, so that a config file and the
// files beside it work from any working directory. Paths from flags and
// the environment stay relative to the working directory, as a shell user
// expects; URLs and absolute paths are left alone.
func resolveConfigPaths(cfg *Config, v *viper.Viper, fs *pflag.FlagSet, environ []string) {
	if cfg.Config == "" {
		return
	}
	dir := filepath.Dir(cfg.Config)
	for key, p := range configPaths(cfg) {
		if *p == "" || !v.InConfig(key) || fs.Changed(key) {
			continue
		}
		if _, fromEnv := lookupEnv(environ, "MCPBRIDGE_"+strings.ToUpper(strings.ReplaceAll(key, "-", "_"))); fromEnv {
			continue
		}
		if filepath.IsAbs(*p) || isURL(*p) {
			continue
		}
		*p = filepath.Join(dir, *p)
	}
}

// isURL reports whether s names a document by URL (http://, https://,
// file://) or by the embedded scheme, rather than by a file path.
func isURL(s string) bool {
	scheme, _, ok := strings.Cut(s, ":")
	if !ok || len(scheme) < 2 { // "C:\spec.yaml" is a path
		return false
	}
	for _, r := range scheme {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '+' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}
