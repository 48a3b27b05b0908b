package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// hangingTokens is a token endpoint that answers only when release is
// closed (or never), recording how many requests it holds at once and
// when a request's context ends.
type hangingTokens struct {
	srv      *httptest.Server
	release  chan struct{}
	arrived  chan struct{} // one send per request
	gone     chan struct{} // one send per request whose context ended unanswered
	inFlight atomic.Int32
	maxIn    atomic.Int32
	total    atomic.Int32
}

func newHangingTokens(t *testing.T, token string, expiresIn int) *hangingTokens {
	t.Helper()
	h := &hangingTokens{release: make(chan struct{}), arrived: make(chan struct{}, 64), gone: make(chan struct{}, 64)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the form first: net/http notices that the client went away
		// (and ends r's context) only once the body has been read.
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := h.inFlight.Add(1)
		defer h.inFlight.Add(-1)
		for {
			if m := h.maxIn.Load(); n <= m || h.maxIn.CompareAndSwap(m, n) {
				break
			}
		}
		h.total.Add(1)
		h.arrived <- struct{}{}
		select {
		case <-h.release:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":%d}`, token, expiresIn)
		case <-r.Context().Done():
			h.gone <- struct{}{}
		}
	}))
	t.Cleanup(h.srv.Close)
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release) // let the server close
		}
	})
	return h
}

// testGrant is the grant of a bridge configured with tokenURL.
func testGrant(tokenURL, secret string) *oauthGrant {
	cfg := &Config{UpstreamAuth: UpstreamAuth{OAuth2: OAuth2{TokenURL: tokenURL, ClientID: "bridge", ClientSecret: secret}}}
	a := &app{cfg: cfg, log: zap.NewNop()}
	return a.newOAuthGrant(cfg.UpstreamAuth.OAuth2, "upstream-auth.oauth2", nil)
}

// waitWaiting waits until n calls wait on g's fetch in progress.
func waitWaiting(t *testing.T, g *oauthGrant, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		w := 0
		if g.flight != nil {
			w = g.flight.waiting
		}
		g.mu.Unlock()
		if w >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls wait on the token fetch, want %d", w, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// receive waits for one signal on c, failing the test after a generous
// bound (the behaviour under test takes milliseconds).
func receive(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestOAuth2GrantWaitFollowsContext checks the review's F4 at the grant:
// calls that need a token share one fetch; a call whose context ends stops
// waiting at once while the others keep waiting; the fetch stops when no
// call waits for it any more; a token is then cached until shortly before
// it expires.
func TestOAuth2GrantWaitFollowsContext(t *testing.T) {
	t.Run("shared fetch, each caller leaves on its own", func(t *testing.T) {
		h := newHangingTokens(t, "shared-token-123456", 3600)
		g := testGrant(h.srv.URL, "client-secret-abcdef")
		shortCtx, cancelShort := context.WithCancel(t.Context())
		type got struct {
			tok string
			err error
		}
		short, long := make(chan got, 1), make(chan got, 1)
		for _, c := range []struct {
			ctx context.Context
			out chan got
		}{{shortCtx, short}, {t.Context(), long}} {
			go func() {
				tok, err := g.token(c.ctx)
				if err != nil {
					c.out <- got{err: err}
					return
				}
				c.out <- got{tok: tok.AccessToken}
			}()
		}
		receive(t, h.arrived, "the token request")
		// Both callers must be waiting on the one fetch before one leaves:
		// on a loaded machine the second may not have joined yet, and the
		// first leaving alone would (rightly) abandon the fetch.
		waitWaiting(t, g, 2)
		cancelShort()
		var r got
		select {
		case r = <-short:
		case <-time.After(10 * time.Second):
			t.Fatal("a caller whose context was cancelled still waits for the token")
		}
		if !errors.Is(r.err, context.Canceled) {
			t.Errorf("cancelled caller: token %q, error %v; want an error wrapping context.Canceled", r.tok, r.err)
		}
		select {
		case r = <-long:
			t.Fatalf("the other caller stopped waiting too: %+v", r)
		default:
		}
		close(h.release)
		if r = <-long; r.err != nil || r.tok != "shared-token-123456" {
			t.Errorf("waiting caller: token %q, error %v", r.tok, r.err)
		}
		for range 3 {
			if tok, err := g.token(t.Context()); err != nil || tok.AccessToken != "shared-token-123456" {
				t.Errorf("cached token: %v, %v", tok, err)
			}
		}
		if n, m := h.total.Load(), h.maxIn.Load(); n != 1 || m != 1 {
			t.Errorf("token endpoint: %d requests, %d at once; want 1 and 1", n, m)
		}
	})

	t.Run("fetch abandoned when nobody waits", func(t *testing.T) {
		h := newHangingTokens(t, "never-sent-123456", 3600)
		g := testGrant(h.srv.URL, "client-secret-abcdef")
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := g.token(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("token() = %v; want an error wrapping context.DeadlineExceeded", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("token() returned after %s; its context ended after 50ms", took)
		}
		receive(t, h.gone, "the abandoned token request to be cancelled")
		if err == nil || !strings.Contains(err.Error(), "no upstream OAuth2 access token from "+h.srv.URL) {
			t.Errorf("error %q does not say which token endpoint failed", err)
		}
	})

	t.Run("own limit", func(t *testing.T) {
		h := newHangingTokens(t, "never-sent-123456", 3600)
		g := testGrant(h.srv.URL, "client-secret-abcdef")
		g.limit = 50 * time.Millisecond
		_, err := g.token(t.Context()) // a caller with all the time in the world
		if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timeout: the token endpoint did not answer within 50ms") {
			t.Errorf("token() = %v; want the token endpoint's timeout, not the call's", err)
		}
		receive(t, h.gone, "the token request to be cancelled at the fetch's limit")
	})

	t.Run("expiring token fetched again", func(t *testing.T) {
		h := newHangingTokens(t, "short-lived-123456", 5) // within oauth2's 10 s margin: expired at once
		close(h.release)
		g := testGrant(h.srv.URL, "client-secret-abcdef")
		for range 3 {
			if _, err := g.token(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if n := h.total.Load(); n != 3 {
			t.Errorf("token endpoint: %d requests for 3 calls with a token about to expire; want 3", n)
		}
	})
}

// TestOAuth2GrantFailure checks that a refused grant becomes a specific
// error that holds neither the client secret nor what the token endpoint
// echoed.
func TestOAuth2GrantFailure(t *testing.T) {
	const secret = "client-secret-9f86d081884c7d659a2feaa0c55ad015"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":"invalid_client","error_description":"bad client %s","request":%q}`, secret, string(body)+r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	_, err := testGrant(srv.URL+"/token?tenant=t-1234567", secret).token(t.Context())
	if err == nil {
		t.Fatal("token() succeeded against a refusing endpoint")
	}
	msg := err.Error()
	for _, want := range []string{"no upstream OAuth2 access token from " + srv.URL + "/token?tenant=REDACTED", "HTTP 401 Unauthorized", "invalid_client"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	for _, leak := range []string{secret, "bad client", "t-1234567", "Basic "} {
		if strings.Contains(msg, leak) {
			t.Errorf("error %q holds %q", msg, leak)
		}
	}
}

// TestOAuth2TokenRedirectElsewhere: a token endpoint redirecting to
// another origin does not get the client secret sent there. x/oauth2
// tries the secret in a Basic header first and, refused, in the form
// body, and a 307 makes Go's client post that body again, to the other
// host (it keeps no Authorization across hosts, but the body it keeps):
// the redirect is not followed, and the call learns the endpoint's status.
func TestOAuth2TokenRedirectElsewhere(t *testing.T) {
	const secret = "client-secret-5d41402abc4b2a76b9719d911017c592"
	var stolen atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		stolen.Store(string(body) + r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"from-elsewhere-123456","token_type":"bearer","expires_in":3600}`)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, _, ok := r.BasicAuth(); ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client"}`)
			return
		}
		http.Redirect(w, r, other.URL+"/token", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	tok, err := testGrant(srv.URL+"/token", secret).token(t.Context())
	if got, _ := stolen.Load().(string); got != "" {
		t.Errorf("the other origin received %q", got)
	}
	if err == nil {
		t.Fatalf("token() succeeded with %q from another origin", tok.AccessToken)
	}
	if msg := err.Error(); !strings.Contains(msg, "HTTP 307") || strings.Contains(msg, secret) {
		t.Errorf("error %q: want the endpoint's 307, without the secret", msg)
	}
}

// TestOAuth2TokenTimeout is the review's F4 end to end: with a token
// endpoint that never answers, calls end at --timeout (not after two
// 30-second token requests), concurrent calls do not queue behind one
// another, only one token request runs at a time, and it is cancelled once
// no call waits for it.
func TestOAuth2TokenTimeout(t *testing.T) {
	h := newHangingTokens(t, "unused-token-123456", 3600)
	rec := newRecorder(t)
	cs, _ := startBridge(t, "serve", "--config", oauthConfig(t, h.srv.URL, "client-secret-abcdef"),
		"--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml", "--upstream", rec.srv.URL+"/api",
		"--no-cache", "--timeout", "1s", "--retries", "0")
	// Bounded well below the old behaviour (60 s a call), well above 1 s.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	const calls = 4
	var wg sync.WaitGroup
	took := make([]time.Duration, calls)
	texts := make([]string, calls)
	start := time.Now()
	for i := range calls {
		wg.Go(func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"itemId": "1"}})
			took[i] = time.Since(start)
			switch {
			case err != nil:
				texts[i] = "protocol error: " + err.Error()
			case !res.IsError:
				texts[i] = "not an error: " + resultText(t, res)
			default:
				texts[i] = resultText(t, res)
			}
		})
	}
	wg.Wait()
	for i := range calls {
		if took[i] > 8*time.Second {
			t.Errorf("call %d ended after %s; want about --timeout (1s)", i, took[i])
		}
		if !strings.Contains(texts[i], "no answer within 1s") {
			t.Errorf("call %d: %s; want a timeout result", i, texts[i])
		}
	}
	receive(t, h.gone, "the token request to be cancelled after the calls gave up")
	if m := h.maxIn.Load(); m != 1 {
		t.Errorf("the token endpoint held %d requests at once; want 1 (one fetch shared)", m)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("the upstream was called without a token: %+v", got)
	}
}
