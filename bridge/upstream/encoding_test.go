package upstream

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestDecodedStackedCodings: a Content-Encoding naming deflate thousands
// of times (a header of a few KB) is refused before a decoder is made for
// each: every flate reader holds a 32 KiB window, so 100,000 of them, an
// 800 KB header, took 580 MB of one call's memory, and the 10 MB of
// header Go's client accepts would have taken ~6 GB.
func TestDecodedStackedCodings(t *testing.T) {
	ce := strings.TrimSuffix(strings.Repeat("deflate, ", 2000), ", ")
	resp := &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Header: http.Header{"Content-Encoding": {ce}},
		Body: io.NopCloser(strings.NewReader("not deflate"))}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := Decoded(resp)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrEncoding) {
		t.Errorf("error %v, want ErrEncoding", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("allocated %d bytes deciding, want under 1 MiB", alloc)
	}

	// A few stacked codings are still undone.
	resp = &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Header: http.Header{"Content-Encoding": {"identity, deflate, gzip"}},
		Body: io.NopCloser(strings.NewReader("x"))}
	if _, _, err := Decoded(resp); err == nil || errors.Is(err, ErrEncoding) {
		t.Errorf("three codings: error %v, want the corrupt gzip's", err)
	}
}

// TestZstdReadAfterEOF: a zstd answer read past its end keeps saying
// io.EOF, as an io.Reader must; the closed decoder's error came back as
// a corrupt answer.
func TestZstdReadAfterEOF(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	body := enc.EncodeAll([]byte(`{"ok":true}`), nil)
	resp := &http.Response{StatusCode: http.StatusOK, ContentLength: int64(len(body)), Header: http.Header{"Content-Encoding": {"zstd"}},
		Body: io.NopCloser(bytes.NewReader(body))}
	r, _, err := Decoded(resp)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil || string(got) != `{"ok":true}` {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	for range 2 {
		if n, err := r.Read(make([]byte, 8)); n != 0 || err != io.EOF {
			t.Errorf("Read after the end = %d, %v; want 0, io.EOF", n, err)
		}
	}
}
