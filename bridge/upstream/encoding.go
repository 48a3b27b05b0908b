package upstream

import (
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// ErrEncoding reports an answer in a Content-Encoding the bridge cannot
// decode (br, compress, or an unknown name).
var ErrEncoding = errors.New("upstream answered in a content encoding the bridge cannot decode")

// ErrCorrupt reports a compressed answer that does not decompress.
var ErrCorrupt = errors.New("the upstream's compressed answer is corrupt")

// Decoded is resp's body as the upstream meant it, and its length (-1 when
// unknown). Go's transport already undoes the gzip it asked for (and then
// drops the header); what is left is an encoding the upstream chose on its
// own: gzip, deflate (zlib, or raw deflate as some servers send it) and
// zstd (RFC 9659: a window of 8 MiB at most) are undone here, in the order they were applied; anything else is
// ErrEncoding, not bytes the agent would read as garbage. Limits apply to
// what the reader delivers, so a compression bomb stops at the caller's
// size limit; more than maxCodings codings are ErrEncoding (a gzip or
// deflate decoder holds a window of 32 KiB, whatever it is given to read),
// and so is zstd listed twice: its decoder may hold the 8 MiB window a
// frame asks for, and four stacked ones asked 37 MiB of a few-KB answer.
func Decoded(resp *http.Response) (io.Reader, int64, error) {
	ce := resp.Header.Get("Content-Encoding")
	if ce == "" || resp.ContentLength == 0 || resp.StatusCode == http.StatusNoContent ||
		resp.StatusCode == http.StatusNotModified || resp.Request != nil && resp.Request.Method == http.MethodHead {
		return resp.Body, resp.ContentLength, nil // nothing to decode
	}
	if n := strings.Count(ce, ",") + 1; n > maxCodings {
		return nil, 0, fmt.Errorf("%w: %d codings stacked, more than the %d it undoes", ErrEncoding, n, maxCodings)
	}
	codings := strings.Split(ce, ",")
	zstds := 0
	var r io.Reader = resp.Body
	for i := len(codings) - 1; i >= 0; i-- {
		switch c := strings.ToLower(strings.TrimSpace(codings[i])); c {
		case "identity", "":
		case "gzip", "x-gzip":
			zr, err := gzip.NewReader(r)
			if err == io.EOF {
				return strings.NewReader(""), 0, nil // an empty body, labelled
			}
			if err != nil {
				return nil, 0, fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			r = zr
		case "deflate":
			r = deflateReader(r)
		case "zstd":
			if zstds++; zstds > 1 {
				return nil, 0, fmt.Errorf("%w: zstd applied %d times; the bridge undoes it once", ErrEncoding, strings.Count(strings.ToLower(ce), "zstd"))
			}
			zr, err := newZstdReader(r)
			if err != nil {
				return nil, 0, fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			r = zr
		default:
			return nil, 0, fmt.Errorf("%w: %q", ErrEncoding, safeToken(c))
		}
	}
	if r == io.Reader(resp.Body) {
		return r, resp.ContentLength, nil
	}
	return r, -1, nil
}

// maxCodings is the most codings a Content-Encoding may list: servers
// compress once, a proxy at most once more.
const maxCodings = 4

// deflateReader reads HTTP's deflate: zlib-wrapped as RFC 9110 says, or
// the raw deflate stream some servers send instead.
func deflateReader(r io.Reader) io.Reader {
	var head [2]byte
	n, _ := io.ReadFull(r, head[:])
	r = io.MultiReader(strings.NewReader(string(head[:n])), r)
	// A zlib header: CM 8, a window of at most 32 KiB, and a check sum.
	if n == 2 && head[0]&0x0f == 8 && head[0]>>4 <= 7 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
		if zr, err := zlib.NewReader(r); err == nil {
			return zr
		}
	}
	return flate.NewReader(r)
}

// safeToken is s cut to 32 bytes of printable ASCII, to quote an
// upstream's header in a message.
func safeToken(s string) string {
	b := make([]byte, 0, min(len(s), 32))
	for i := 0; i < len(s) && len(b) < 32; i++ {
		if c := s[i]; c > ' ' && c < 0x7f {
			b = append(b, c)
		}
	}
	return string(b)
}

// zstdWindow is the largest window a zstd answer may use: RFC 9659 caps
// the zstd content coding at 8 MiB, so a frame asking for more (memory
// the bridge would hold per call) is refused as corrupt.
const zstdWindow = 8 << 20

// zstdReader decodes a zstd stream synchronously (no goroutines to leak
// when the caller stops reading). A read error that the stream beneath
// caused (a timeout, a reset) comes back as it is; any other is the
// stream's fault, [ErrCorrupt].
type zstdReader struct {
	dec  *zstd.Decoder
	src  *errRecorder
	done error // once set, the decoder is closed and every Read returns it
}

// errRecorder remembers the first error its reader returned.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

func newZstdReader(r io.Reader) (*zstdReader, error) {
	src := &errRecorder{r: r}
	dec, err := zstd.NewReader(src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(zstdWindow))
	if err != nil {
		return nil, err
	}
	return &zstdReader{dec: dec, src: src}, nil
}

func (z *zstdReader) Read(p []byte) (int, error) {
	if z.done != nil {
		return 0, z.done
	}
	n, err := z.dec.Read(p)
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF:
	case z.src.err != nil:
		err = z.src.err
	default:
		err = fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	z.dec.Close()
	z.done = err
	return n, err
}
