package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// TestKubernetesManifests parses deploy/kubernetes and checks what a
// production sidecar needs: probes on /health and /ready, a non-root,
// read-only, capability-free container with resource requests, a Service
// and an HPA for the Deployment, and a ConfigMap whose config.yaml the
// bridge itself accepts (unknown keys are errors).
func TestKubernetesManifests(t *testing.T) {
	files, err := filepath.Glob("../../deploy/kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	byKind := map[string][]map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			kind, _ := doc["kind"].(string)
			if kind == "" || doc["apiVersion"] == nil {
				t.Errorf("%s: a document without kind or apiVersion", f)
			}
			if kind != "Kustomization" {
				if name := dig(doc, "metadata", "name"); name == nil {
					t.Errorf("%s: %s without metadata.name", f, kind)
				}
			}
			byKind[kind] = append(byKind[kind], doc)
		}
	}
	var dep map[string]any
	for _, d := range byKind["Deployment"] {
		if dig(d, "metadata", "name") == "mcpbridge" {
			dep = d
		}
	}
	if dep == nil {
		t.Fatal("no Deployment named mcpbridge")
	}
	pod := dig(dep, "spec", "template", "spec").(map[string]any)
	if dig(pod, "securityContext", "runAsNonRoot") != true {
		t.Error("pod securityContext.runAsNonRoot is not true")
	}
	if sel, lbl := dig(dep, "spec", "selector", "matchLabels", "app.kubernetes.io/name"), dig(dep, "spec", "template", "metadata", "labels", "app.kubernetes.io/name"); sel == nil || sel != lbl {
		t.Errorf("selector %v does not match the pod labels %v", sel, lbl)
	}
	c := pod["containers"].([]any)[0].(map[string]any)
	for path, want := range map[string]any{
		"livenessProbe.httpGet.path":               "/health",
		"readinessProbe.httpGet.path":              "/ready",
		"securityContext.readOnlyRootFilesystem":   true,
		"securityContext.allowPrivilegeEscalation": false,
		"resources.requests.cpu":                   "100m",
		"resources.requests.memory":                "64Mi",
	} {
		if got := dig(c, strings.Split(path, ".")...); got != want {
			t.Errorf("container %s = %v; want %v", path, got, want)
		}
	}
	if drop, _ := dig(c, "securityContext", "capabilities", "drop").([]any); len(drop) != 1 || drop[0] != "ALL" {
		t.Errorf("capabilities.drop = %v; want [ALL]", drop)
	}
	if len(byKind["Service"]) == 0 || len(byKind["HorizontalPodAutoscaler"]) == 0 || len(byKind["Secret"]) == 0 {
		t.Errorf("missing Service, HPA or Secret: %v", keys(byKind))
	}
	if got := dig(byKind["HorizontalPodAutoscaler"][0], "spec", "scaleTargetRef", "name"); got != "mcpbridge" {
		t.Errorf("HPA targets %v", got)
	}
	cm := byKind["ConfigMap"][0]
	cfgText, _ := dig(cm, "data", "config.yaml").(string)
	// The files the pod mounts, at a place this test can write.
	dir := t.TempDir()
	cfgText = strings.ReplaceAll(cfgText, "/etc/mcpbridge", dir)
	wl, _ := dig(cm, "data", "whitelist.yaml").(string)
	if err := os.MkdirAll(filepath.Join(dir, "secret"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"whitelist.yaml": wl, "secret/api-keys": "k\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(p, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := flagSet("serve")
	if err := fs.Parse([]string{"--config", p}); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(fs, nil)
	if err != nil {
		t.Fatalf("the ConfigMap's config.yaml is refused: %v", err)
	}
	if err := cfg.Validate("serve"); err != nil {
		t.Errorf("the ConfigMap's config.yaml does not validate: %v", err)
	}
	if cfg.Listen != "0.0.0.0:8080" || cfg.APIKeyFile == "" || cfg.Transport != "http" {
		t.Errorf("config: listen %q, api-key-file %q, transport %q; want an authenticated HTTP listener", cfg.Listen, cfg.APIKeyFile, cfg.Transport)
	}
	// The metrics (served without a credential, naming every tool called)
	// have a port of their own, scraped there and not exposed by the
	// Service.
	_, mport, err := net.SplitHostPort(cfg.MetricsListen)
	if err != nil {
		t.Fatalf("metrics-listen %q: %v", cfg.MetricsListen, err)
	}
	if got := dig(dep, "spec", "template", "metadata", "annotations", "prometheus.io/port"); got != mport {
		t.Errorf("prometheus.io/port %v, want the metrics-listen port %s", got, mport)
	}
	for _, svc := range byKind["Service"] {
		if dig(svc, "metadata", "name") != "mcpbridge" {
			continue
		}
		ports, _ := dig(svc, "spec", "ports").([]any)
		for _, p := range ports {
			if tp := fmt.Sprint(dig(p, "targetPort")); tp == mport || tp == "metrics" {
				t.Errorf("the Service exposes the metrics port: %v", p)
			}
		}
	}
	// On SIGTERM the pod must leave the Service before its listener closes:
	// /ready answers 503 for --shutdown-delay, which must outlast the
	// readiness probe's failures, and the kubelet's SIGKILL must wait for
	// the delay and --shutdown-timeout.
	rp := c["readinessProbe"]
	rnum := func(k string, def int) int {
		if n, ok := dig(rp, k).(int); ok {
			return n
		}
		return def
	}
	if unready := time.Duration(rnum("periodSeconds", 10)*rnum("failureThreshold", 3)) * time.Second; cfg.ShutdownDelay < unready {
		t.Errorf("shutdown-delay %v is shorter than the readiness probe takes to fail (%v): requests still routed here would be refused", cfg.ShutdownDelay, unready)
	}
	tg, ok := pod["terminationGracePeriodSeconds"].(int)
	if !ok {
		tg = 30
	}
	if time.Duration(tg)*time.Second < cfg.ShutdownDelay+cfg.ShutdownTimeout {
		t.Errorf("terminationGracePeriodSeconds %d is shorter than shutdown-delay %v + shutdown-timeout %v", tg, cfg.ShutdownDelay, cfg.ShutdownTimeout)
	}
	// The listener opens once the first spec fetch has ended (loaded, or
	// failed into degraded mode), up to --spec-timeout after the start:
	// the probes must not kill the container before, or a spec host that
	// drops packets restarts the pod for ever instead of letting it serve
	// degraded and recover.
	probe := c["livenessProbe"]
	if sp, ok := c["startupProbe"]; ok {
		probe = sp
	}
	num := func(k string, def int) int {
		if n, ok := dig(probe, k).(int); ok {
			return n
		}
		return def
	}
	grace := time.Duration(num("initialDelaySeconds", 0)+num("periodSeconds", 10)*num("failureThreshold", 3)) * time.Second
	if grace < cfg.SpecTimeout+30*time.Second {
		t.Errorf("the probes give the container %v to start listening; want at least --spec-timeout (%v) and 30s to build the tools", grace, cfg.SpecTimeout)
	}
}

func dig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
