package mcpx_test

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// bigSpec has n operations cycling through GET, POST, PUT and DELETE, each
// with a summary, a description, parameters and (POST, PUT) a body: about
// GitHub's tool count and bytes per tool.
func bigSpec(n int) string {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: big, version: \"1\"}\npaths:\n")
	methods := []string{"get", "post", "put", "delete"}
	desc := strings.Repeat("Lists or changes the things of an organization & its members. ", 6)
	for i := 0; i < n; i++ {
		m := methods[i%len(methods)]
		fmt.Fprintf(&b, "  /orgs/{org}/things%d:\n    %s:\n      operationId: op%d\n      summary: Do thing %d for an organization\n      description: %q\n", i, m, i, i, desc)
		b.WriteString("      parameters:\n        - {name: org, in: path, required: true, description: The organization name. The name is not case sensitive., schema: {type: string, minLength: 1}}\n")
		b.WriteString("        - {name: per_page, in: query, description: The number of results per page (max 100)., schema: {type: integer, default: 30}}\n")
		if m == "post" || m == "put" {
			b.WriteString("      requestBody:\n        required: true\n        content:\n          application/json:\n            schema: {type: object, required: [labels], properties: {labels: {type: array, minItems: 1, maxItems: 100, description: The names of the labels., items: {type: string}}}}\n")
		}
		b.WriteString("      responses:\n        \"200\":\n          description: ok\n          content:\n            application/json:\n              schema: {type: object, properties: {total_count: {type: integer}, labels: {type: array, items: {type: object, properties: {id: {type: integer, description: Unique identifier of the label.}, name: {type: string, description: Name of the label.}}}}}}\n")
	}
	return b.String()
}

// BenchmarkToolsList measures a tools/list of 1,224 tools as the server
// answers it on the wire: the request written to the server's stdio-like
// pipe, the one-line answer read back (no client decoding).
func BenchmarkToolsList(b *testing.B) {
	for _, version := range []string{"2025-03-26", "2025-11-25"} {
		b.Run(version, func(b *testing.B) {
			res, err := specloader.LoadData(b.Context(), []byte(bigSpec(1224)), nil, specloader.Options{})
			if err != nil {
				b.Fatal(err)
			}
			ops, err := whitelist.All().Select(res.Doc)
			if err != nil {
				b.Fatal(err)
			}
			cat, err := bridge.New(ops, bridge.Options{BaseURL: "http://127.0.0.1:9", Version: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			srv := mcpx.New(bridge.NewRuntime(cat), mcpx.Options{}).MCP()
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			ss, err := srv.Connect(b.Context(), &mcp.IOTransport{Reader: sr, Writer: sw, MaxLineLength: -1}, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cw.Close(); ss.Close() })
			in := bufio.NewReaderSize(cr, 1<<20)
			send := func(line string) {
				if _, err := io.WriteString(cw, line+"\n"); err != nil {
					b.Fatal(err)
				}
			}
			recv := func() int {
				n := 0
				for {
					chunk, more, err := in.ReadLine()
					if err != nil {
						b.Fatal(err)
					}
					n += len(chunk)
					if !more {
						return n
					}
				}
			}
			send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
			recv()
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			size := 0
			for i := 0; b.Loop(); i++ {
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1))
				size = recv()
			}
			b.ReportMetric(float64(size), "bytes/list")
		})
	}
}
