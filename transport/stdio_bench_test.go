package transport_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/mcpbridge/mcpbridge/transport"
)

// BenchmarkStdioCall is one small tools/call through ServeStdio and back,
// with a bare client on the pipes: the server's reading, decoding,
// dispatching, encoding and writing of a message, without an upstream.
func BenchmarkStdioCall(b *testing.B) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	benchStdio(b, inR, inW, outR, outW)
}

// BenchmarkStdioCallOSPipe is BenchmarkStdioCall over real pipes, as a
// host launches the server: the server's ends blocking (what a child
// process inherits) and used as they are, or made pollable by
// PollableStdio, which is what serve does. Here, with the client in the
// same runtime, the two modes measure the same; the gain shows across
// processes (see PollableStdio).
func BenchmarkStdioCallOSPipe(b *testing.B) {
	for _, mode := range []string{"blocking", "pollable"} {
		b.Run(mode, func(b *testing.B) {
			inR, inW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			defer inR.Close()
			defer outR.Close()
			defer outW.Close()
			// Fd switches the server's ends to blocking mode, as a child
			// process inherits them.
			_, _ = inR.Fd(), outW.Fd()
			var in io.Reader = inR
			var out io.Writer = outW
			if mode == "pollable" {
				var restore func()
				in, out, restore = transport.PollableStdio(inR, outW)
				defer restore()
			}
			benchStdio(b, in, inW, outR, out)
		})
	}
}

// benchStdio serves a session on in and out and times small calls that
// the client writes on inW and reads back from outR; it closes inW.
func benchStdio(b *testing.B, in io.Reader, inW io.WriteCloser, outR io.Reader, out io.Writer) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- transport.ServeStdio(ctx, newMCPServer(newGate()), io.NopCloser(in), nopWriteCloser{out})
	}()
	rd := bufio.NewReaderSize(outR, 64<<10)
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	read := func() {
		if _, err := rd.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`, i+1))
		read()
	}
	b.StopTimer()
	inW.Close()
	cancel()
	<-done
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
