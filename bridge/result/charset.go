package result

import (
	"bytes"
	"net/http"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"
	"golang.org/x/text/transform"

	"github.com/mcpbridge/mcpbridge/bridge/media"
)

var utf8BOM = []byte("\xef\xbb\xbf")

// utf8Body is a textual body (JSON, text, or untyped) as UTF-8: a byte
// order mark goes, a body the Content-Type's charset says is in another
// encoding (ISO-8859-1, windows-1252, Shift_JIS, UTF-16...) is decoded, and
// so is JSON that starts with a UTF-16 byte order mark and names no charset.
// Anything else, binary kinds, an unknown charset or one that does not
// decode, is left as it is (and shown as the bytes it is).
func utf8Body(kind media.Kind, mediaType string, params map[string]string, body []byte) []byte {
	if kind != media.JSON && mediaType != "" && !media.IsText(mediaType) {
		return body
	}
	var enc encoding.Encoding
	wide := false // UTF-32, which BOMOverride would take for UTF-16LE
	if cs := strings.ToLower(strings.TrimSpace(params["charset"])); cs != "" && cs != "utf-8" && cs != "utf8" && cs != "us-ascii" {
		enc, _ = htmlindex.Get(cs) // nil when unknown
		if enc == nil {
			enc = utf32Encoding(cs)
			wide = enc != nil
		}
	} else if cs == "" && len(body) >= 2 && (body[0] == 0xfe && body[1] == 0xff || body[0] == 0xff && body[1] == 0xfe) {
		enc = unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM)
	} else if cs == "" && kind != media.JSON && singleByte(body) { // JSON is UTF-8 (RFC 8259)
		enc = charmap.Windows1252
	}
	if enc != nil {
		// A BOM, when there is one, decides the byte order (BOMOverride;
		// UTF-32 reads its own).
		var dec transform.Transformer = enc.NewDecoder()
		if !wide {
			dec = unicode.BOMOverride(dec)
		}
		if out, _, err := transform.Bytes(dec, body); err == nil {
			body = out
		}
	}
	return bytes.TrimPrefix(body, utf8BOM)
}

// utf32Encoding is the UTF-32 charset cs names (which the WHATWG index
// htmlindex reads leaves out), or nil. An answer in it would otherwise
// reach the agent as NUL-riddled text that no key or value rule reads,
// a credential it echoes included.
func utf32Encoding(cs string) encoding.Encoding {
	switch cs {
	case "utf-32", "utf32", "ucs-4", "iso-10646-ucs-4":
		return utf32.UTF32(utf32.BigEndian, utf32.UseBOM) // RFC 2781's default order, a BOM overriding it
	case "utf-32be", "utf32be":
		return utf32.UTF32(utf32.BigEndian, utf32.IgnoreBOM)
	case "utf-32le", "utf32le":
		return utf32.UTF32(utf32.LittleEndian, utf32.IgnoreBOM)
	}
	return nil
}

// singleByte reports a text in a single-byte legacy encoding that names no
// charset (a spreadsheet's CSV export, an old server's text/plain): bytes
// above 0x7f, none of which starts a valid UTF-8 sequence, no control
// bytes, and no file signature. Read as UTF-8, each such byte would reach
// the agent as U+FFFD ("M\ufffdnchen"); read as windows-1252, the WHATWG
// default that ISO-8859-1 labels mean too, it is "München". A body with
// any valid multi-byte sequence is UTF-8 with a stray byte, and stays so.
func singleByte(body []byte) bool {
	high := false
	for i := 0; i < len(body); {
		c := body[i]
		if c < 0x80 {
			i++
			continue
		}
		if r, size := utf8.DecodeRune(body[i:]); r != utf8.RuneError || size > 1 {
			return false
		}
		high = true
		i++
	}
	if !high || hasControl(body) {
		return false
	}
	return strings.HasPrefix(http.DetectContentType(body), "text/")
}
