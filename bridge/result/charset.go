package result

import (
	"bytes"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
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
	if cs := strings.ToLower(strings.TrimSpace(params["charset"])); cs != "" && cs != "utf-8" && cs != "utf8" && cs != "us-ascii" {
		enc, _ = htmlindex.Get(cs) // nil when unknown
	} else if cs == "" && len(body) >= 2 && (body[0] == 0xfe && body[1] == 0xff || body[0] == 0xff && body[1] == 0xfe) {
		enc = unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM)
	}
	if enc != nil {
		// A BOM, when there is one, decides the byte order (BOMOverride).
		if out, _, err := transform.Bytes(unicode.BOMOverride(enc.NewDecoder()), body); err == nil {
			body = out
		}
	}
	return bytes.TrimPrefix(body, utf8BOM)
}
