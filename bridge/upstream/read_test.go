package upstream_test

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpbridge/mcpbridge/bridge/upstream"
)

// TestReadPrefix: whatever the declared length says, right, too large,
// too small or unknown, the prefix is what the reader delivers, cut at
// max.
func TestReadPrefix(t *testing.T) {
	body := strings.Repeat("abcdefghij", 100) // 1000 bytes
	for _, tt := range []struct {
		name        string
		length, max int64
		want        int
		cut         bool
	}{
		{"exact", 1000, 4096, 1000, false},
		{"unknown", -1, 4096, 1000, false},
		{"declared larger", 3000, 4096, 1000, false},
		{"declared smaller", 10, 4096, 1000, false},
		{"declared zero", 0, 4096, 1000, false},
		{"over max, exact", 1000, 999, 999, true},
		{"over max, unknown", -1, 100, 100, true},
		{"at max", 1000, 1000, 1000, false},
	} {
		for _, r := range []struct {
			name string
			r    func() io.Reader
		}{
			{"whole", func() io.Reader { return strings.NewReader(body) }},
			{"byte by byte", func() io.Reader { return iotest.OneByteReader(strings.NewReader(body)) }},
		} {
			got, cut, err := upstream.ReadPrefix(r.r(), tt.length, tt.max)
			if err != nil {
				t.Fatalf("%s, %s: %v", tt.name, r.name, err)
			}
			if len(got) != tt.want || cut != tt.cut || !bytes.Equal(got, []byte(body[:tt.want])) {
				t.Errorf("%s, %s: got %d bytes, cut %v; want %d, %v", tt.name, r.name, len(got), cut, tt.want, tt.cut)
			}
		}
	}
	if _, _, err := upstream.ReadPrefix(iotest.ErrReader(io.ErrUnexpectedEOF), 10, 100); err != io.ErrUnexpectedEOF {
		t.Errorf("a failing reader: err = %v", err)
	}
}

// TestReadPrefixOneAllocation: a body of declared size is read into one
// buffer of that size, not grown by doubling.
func TestReadPrefixOneAllocation(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 1<<20)
	r := bytes.NewReader(body)
	allocs := testing.AllocsPerRun(10, func() {
		r.Reset(body)
		if got, _, err := upstream.ReadPrefix(r, int64(len(body)), 4<<20); err != nil || len(got) != len(body) {
			t.Fatalf("ReadPrefix: %d bytes, %v", len(got), err)
		}
	})
	if allocs > 2 { // the buffer, and the LimitedReader
		t.Errorf("ReadPrefix of a 1 MiB body of known size: %.0f allocations, want at most 2", allocs)
	}
}

func BenchmarkReadPrefix1MiB(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 1<<20)
	r := bytes.NewReader(body)
	for _, c := range []struct {
		name   string
		length int64
	}{{"known", int64(len(body))}, {"unknown", -1}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(body)
				if _, _, err := upstream.ReadPrefix(r, c.length, 4<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
