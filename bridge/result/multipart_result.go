package result

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/media"
)

// maxResultParts bounds the parts of a multipart response turned into
// content blocks.
const maxResultParts = 64

// multipartContent maps a multipart/mixed (or related, alternative)
// response to one content block per part: the first textual part is the
// body (text content; JSON compact), images and audio are image and audio
// content, and every other part (later textual parts included) is an
// attachment: an embedded resource, text or base64 blob. Every textual part
// is redacted. ok is false when the body does not parse as multipart.
func (s *Shaper) multipartContent(name string, params map[string]string, body []byte) ([]mcp.Content, bool) {
	boundary := params["boundary"]
	if boundary == "" {
		return nil, false
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var out []mcp.Content
	sawBody := false
	for n := 1; ; n++ {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || n > maxResultParts {
			return nil, false
		}
		data, err := io.ReadAll(p) // bounded: the whole body already is
		if err != nil {
			return nil, false
		}
		ct := MediaType(s.Redactor, p.Header.Get("Content-Type"))
		if ct == "" {
			ct = "text/plain" // RFC 2046 default for a part
		}
		textual := media.IsText(ct)
		if !textual {
			data, _ = s.Redactor.RedactBody(ct, data) // binary parts are scanned too
		}
		var text string
		if textual {
			text = s.Redactor.RedactString(string(data))
			if media.IsJSON(ct) {
				if red, err := s.Redactor.RedactJSON(nil, data); err == nil {
					text = string(red)
				}
			}
		}
		switch {
		case textual && !sawBody:
			sawBody = true
			out = append(out, &mcp.TextContent{Text: text})
		case strings.HasPrefix(ct, "image/") && HostImageType(data) != "":
			out = append(out, &mcp.ImageContent{Data: data, MIMEType: HostImageType(data)})
		case strings.HasPrefix(ct, "audio/"):
			out = append(out, &mcp.AudioContent{Data: data, MIMEType: ct})
		default:
			uri := fmt.Sprintf("mcpbridge://%s/response/part/%d", name, n)
			if fn := p.FileName(); fn != "" {
				// The upstream's name for it: redacted like its bytes,
				// escaped to stay one segment of a URI.
				uri += "/" + url.PathEscape(s.Redactor.RedactString(fn))
			}
			rc := &mcp.ResourceContents{URI: uri, MIMEType: ct}
			if textual {
				rc.Text = text
			} else {
				rc.Blob = data
			}
			out = append(out, &mcp.EmbeddedResource{Resource: rc})
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	return out, true
}
