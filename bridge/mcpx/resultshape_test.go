package mcpx_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/bridge/result"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// shapeSpec has one operation whose 200 answer has a response schema, and
// one without.
const shapeSpec = `openapi: 3.0.3
info: {title: shape, version: "1"}
paths:
  /typed:
    get:
      operationId: typed
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  id: {type: integer}
                  name: {type: string}
  /untyped:
    get:
      operationId: untyped
      responses: {"200": {description: ok}}
`

// shapeUpstream is an upstream answering every request with answer, and
// shapeSpec's operations.
func shapeUpstream(t *testing.T, answer string) (*httptest.Server, []whitelist.Operation) {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, answer)
	}))
	t.Cleanup(up.Close)
	res, err := specloader.LoadData(t.Context(), []byte(shapeSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	return up, ops
}

// TestResultBlocks pins which blocks a client receives, for every protocol
// revision a client can negotiate, every output-schema mode and both
// result-text settings, for a client known to read structuredContent only,
// one known to read content only, and others, over an in-memory session and
// over streamable HTTP: the text a model reads is never lost, a client
// before 2025-06-18 or one that reads content only is listed no output
// schema and gets the JSON as text only, and structuredContent (when
// declared) is the whole answer.
func TestResultBlocks(t *testing.T) {
	const answer = `{"id":7,"name":"rex"}`
	up, ops := shapeUpstream(t, answer)
	versions := []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}
	for _, outMode := range []string{"tolerant", "strict", "off"} {
		cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Version: "test", OutputSchema: outMode})
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{mcpx.TextAlways, mcpx.TextKnown, mcpx.TextAuto} {
			srv := mcpx.New(bridge.NewRuntime(cat), mcpx.Options{ResultText: text}).MCP()
			h := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
			for _, version := range versions {
				for _, via := range []string{"memory", "http"} {
					for _, client := range []string{"shape", "claude-code", "claude-code (via mcp-remote 0.1.29)", "claude-codex", "codex-mcp-client", "Visual Studio Code - Insiders", "claude-ai", "kimi-code", "gemini-cli-mcp-client"} {
						name := fmt.Sprintf("%s/%s/%s/%s/%s", outMode, text, version, via, client)
						t.Run(name, func(t *testing.T) {
							var tr mcp.Transport
							if via == "http" {
								tr = &mcp.StreamableClientTransport{Endpoint: h.URL}
							} else {
								ct, st := mcp.NewInMemoryTransports()
								ss, err := srv.Connect(t.Context(), st, nil)
								if err != nil {
									t.Fatal(err)
								}
								t.Cleanup(func() { ss.Close() })
								tr = ct
							}
							c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil)
							cs, err := c.Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
							if err != nil {
								t.Fatal(err)
							}
							defer cs.Close()
							typedHasSchema := false
							for tool, err := range cs.Tools(t.Context(), nil) {
								if err != nil {
									t.Fatal(err)
								}
								if tool.Name == "typed" {
									typedHasSchema = tool.OutputSchema != nil
								}
							}
							old := version < "2025-06-18"
							// The bridge learns the name from the session's
							// initialize, or from the request's _meta from
							// 2026-07-28 on (a stateless HTTP request before has
							// neither).
							named := via == "memory" || version >= "2026-07-28"
							// Claude Desktop, Kimi Code and Gemini CLI take text alone,
							// unless every client gets both blocks: no output schema,
							// no object.
							content := (client == "claude-ai" || client == "kimi-code" || client == "gemini-cli-mcp-client") && named && text != mcpx.TextAlways
							if want := outMode != "off" && !old && !content; typedHasSchema != want {
								t.Fatalf("typed declares an output schema: %v, want %v", typedHasSchema, want)
							}
							for _, tool := range []string{"typed", "untyped"} {
								r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool})
								if err != nil || r.IsError {
									t.Fatalf("%s: %v %+v", tool, err, r)
								}
								texts := 0
								for _, c := range r.Content {
									if tc, ok := c.(*mcp.TextContent); ok {
										texts++
										if tc.Text != answer {
											t.Errorf("%s: text %q, want %q", tool, tc.Text, answer)
										}
									}
								}
								structured := r.StructuredContent != nil
								if structured {
									b, _ := json.Marshal(r.StructuredContent)
									var got, want map[string]any
									json.Unmarshal(b, &got)               //nolint:errcheck // compared below
									json.Unmarshal([]byte(answer), &want) //nolint:errcheck // constant
									if fmt.Sprint(got) != fmt.Sprint(want) {
										t.Errorf("%s: structuredContent %s, want the whole answer", tool, b)
									}
								}
								wantStructured := tool == "typed" && outMode != "off" && !old && !content
								// Known mode: Claude Code (also behind a proxy that
								// appends to its name, not a client whose name only
								// starts alike), Codex and VS Code (Insiders too), when
								// the bridge learns the name.
								known := (client == "claude-code" || client == "claude-code (via mcp-remote 0.1.29)" || client == "codex-mcp-client" || client == "Visual Studio Code - Insiders") && named
								wantText := !wantStructured || text == mcpx.TextAlways || (text == mcpx.TextKnown && !known)
								if structured != wantStructured {
									t.Errorf("%s: structuredContent present %v, want %v", tool, structured, wantStructured)
								}
								if (texts == 1) != wantText || texts > 1 {
									t.Errorf("%s: %d text blocks, want text %v", tool, texts, wantText)
								}
							}
						})
					}
				}
			}
			h.Close()
		}
	}
}

// TestCallResultWire pins the tools/call answer on the wire, as a client
// reads it: go-sdk's own fields survive the bridge's encoding of the result
// (resultjson.go): resultType and the server's identity in _meta from
// 2026-07-28 on, neither before; the text block and structuredContent as
// sent.
func TestCallResultWire(t *testing.T) {
	const answer = `{"id":7,"name":"a <b> & c"}`
	up, ops := shapeUpstream(t, answer)
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpx.New(bridge.NewRuntime(cat), mcpx.Options{}).MCP()
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			wire := &syncBuffer{}
			ct, st := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(t.Context(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ss.Close() })
			c := mcp.NewClient(&mcp.Implementation{Name: "wire", Version: "1"}, nil)
			cs, err := c.Connect(t.Context(), &mcp.LoggingTransport{Transport: ct, Writer: wire}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "typed"}); err != nil || r.IsError {
				t.Fatalf("typed: %v %+v", err, r)
			}
			got := wire.answerWith(t, "content")
			blocks, _ := got["content"].([]any)
			if len(blocks) != 1 || blocks[0].(map[string]any)["text"] != answer {
				t.Errorf("content = %v, want one text block %s", got["content"], answer)
			}
			if sc, _ := json.Marshal(got["structuredContent"]); string(sc) != `{"id":7,"name":"a \u003cb\u003e \u0026 c"}` {
				t.Errorf("structuredContent = %s", sc)
			}
			newWire := version >= "2026-07-28"
			if rt, has := got["resultType"]; has != newWire || (newWire && rt != "complete") {
				t.Errorf("resultType = %v (present %v), want present %v", rt, has, newWire)
			}
			meta, _ := got["_meta"].(map[string]any)
			if _, has := meta[mcp.MetaKeyServerInfo]; has != newWire {
				t.Errorf("_meta = %v: server info present %v, want %v", got["_meta"], has, newWire)
			}
		})
	}
}

// uaTransport sets the User-Agent of every request.
type uaTransport struct{ ua string }

func (u uaTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("User-Agent", u.ua)
	return http.DefaultTransport.RoundTrip(r)
}

// TestResultBlocksUserAgent: a stateless HTTP request before 2026-07-28
// carries no client name, so the known mode reads the User-Agent's product
// (Claude Code sends "claude-code/2.1.204 (cli)"); another product, or
// none, keeps the text.
func TestResultBlocksUserAgent(t *testing.T) {
	const answer = `{"id":7,"name":"rex"}`
	up, ops := shapeUpstream(t, answer)
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpx.New(bridge.NewRuntime(cat), mcpx.Options{ResultText: mcpx.TextKnown}).MCP()
	h := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(h.Close)
	for _, c := range []struct {
		ua       string
		wantText bool
	}{
		{"claude-code/2.1.204 (cli)", false},
		{"claude-code", false},
		{"claude-codex/1.0", true},
		{"Go-http-client/1.1", true},
		{"", true},
	} {
		t.Run(c.ua, func(t *testing.T) {
			tr := &mcp.StreamableClientTransport{Endpoint: h.URL, HTTPClient: &http.Client{Transport: uaTransport{c.ua}}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "some-host", Version: "1"}, nil).Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "typed"})
			if err != nil || r.IsError {
				t.Fatalf("typed: %v %+v", err, r)
			}
			if r.StructuredContent == nil {
				t.Fatal("no structuredContent")
			}
			if got := len(r.Content) == 1; got != c.wantText {
				t.Errorf("content %v: text block present %v, want %v", r.Content, got, c.wantText)
			}
		})
	}
}

// TestTruncatedWholeAsText: an answer cut at --max-response-bytes, to a
// client that reads structuredContent alone, goes as an error result whose
// note says it was cut; it used to say the answer did not fit because it
// was "not JSON" (a cut array is JSON) and was "given whole" (it is not).
// Other clients read why in the result's _meta.
func TestTruncatedWholeAsText(t *testing.T) {
	for _, answer := range []string{
		`{"id":7,"name":"` + strings.Repeat("n", 2000) + `"}`,
		`[{"id":1},{"id":2},{"id":3,"name":"` + strings.Repeat("n", 2000) + `"}]`,
	} {
		up, ops := shapeUpstream(t, answer)
		cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), MaxResponseBytes: 1000, Truncate: true})
		if err != nil {
			t.Fatal(err)
		}
		srv := mcpx.New(bridge.NewRuntime(cat), mcpx.Options{ResultText: mcpx.TextKnown}).MCP()
		for _, client := range []string{"claude-code", "other"} {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(t.Context(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).Connect(t.Context(), ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "typed"})
			cs.Close()
			ss.Close()
			if err != nil {
				t.Fatal(err)
			}
			info, _ := r.Meta[result.MetaKey].(map[string]any)
			if info["truncated"] != true || !strings.Contains(fmt.Sprint(info["reason"]), "--max-response-bytes") {
				t.Errorf("%s, %.20s: _meta %v, want truncated and the reason", client, answer, r.Meta)
			}
			if client != "claude-code" {
				continue
			}
			note := r.Content[0].(*mcp.TextContent).Text
			if !r.IsError || strings.Contains(note, "whole") || strings.Contains(note, "not JSON") || !strings.Contains(note, "cut") {
				t.Errorf("%.20s: error %v, note %q", answer, r.IsError, note)
			}
		}
	}
}
