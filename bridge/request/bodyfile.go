package request

// File arguments of request bodies: multipart file parts and binary bodies
// take a base64 string (or data: URL) or a file object.

import (
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/mcpbridge/mcpbridge/bridge/media"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
)

func writeFilePart(w *multipart.Writer, name string, v any, plan FilePlan) error {
	f, err := parseFile(v, plan.Kind)
	if err != nil {
		return err
	}
	h := textproto.MIMEHeader{}
	if plan.Kind == FileBase64 {
		// Base64 text is an ordinary text field; a filename is kept if given.
		if f.filename != "" {
			h.Set("Content-Disposition", multipart.FileContentDisposition(name, f.filename))
		} else {
			h.Set("Content-Disposition", `form-data; name="`+quoteParam(name)+`"`)
		}
	} else {
		filename := f.filename
		if filename == "" {
			filename = name // many servers only treat a part with a filename as a file
		}
		h.Set("Content-Disposition", multipart.FileContentDisposition(name, filename))
		ct := f.contentType
		if ct == "" {
			ct = plan.ContentType
			// The encoding names several types (or a range): the one the
			// bytes name, when it is among them, rather than the first.
			if plan.Accepts != "" {
				if sniffed := sniffType(f.data); sniffed != "" && matchesAny(strings.Split(plan.Accepts, ","), sniffed) {
					ct = sniffed
				}
			}
		}
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.Set("Content-Type", ct)
	}
	pw, err := w.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = pw.Write(f.data)
	return err
}

// fileArg is a decoded file argument.
type fileArg struct {
	data         []byte
	filename     string
	contentType  string
	explicitType bool // contentType came from the file object, not a data: URL
}

// parseFile decodes a file argument: a base64 string (or data: URL), or
// a fileSchema object. For FileBase64 the data stays base64 text.
func parseFile(v any, kind FileKind) (fileArg, error) {
	var f fileArg
	switch x := v.(type) {
	case string:
		data, ct, err := bodyDecodeBase64(x)
		if err != nil {
			return f, err
		}
		f.data, f.contentType = data, ct
	case map[string]any:
		content, encoding := "", "base64"
		for k, val := range x {
			s, ok := val.(string)
			if !ok && val != nil {
				return f, fmt.Errorf("file field %q must be a string", k)
			}
			switch k {
			case "content":
				content = s
			case "encoding":
				if s != "" {
					encoding = s
				}
			case "filename":
				f.filename = s
			case "contentType":
				f.contentType = s
				f.explicitType = s != ""
			default:
				return f, fmt.Errorf("unknown file field %q (want content, encoding, filename, contentType)", k)
			}
		}
		if _, ok := x["content"].(string); !ok {
			return f, errors.New("file object needs a string content")
		}
		switch encoding {
		case "text":
			f.data = []byte(content)
		case "base64":
			data, ct, err := bodyDecodeBase64(content)
			if err != nil {
				return f, err
			}
			f.data = data
			if f.contentType == "" {
				f.contentType = ct
			}
		default:
			return f, fmt.Errorf("file encoding %q is not base64 or text", encoding)
		}
	default:
		return f, errors.New("expected a base64 string or a file object {content, encoding, filename, contentType}")
	}
	if hasControl(f.filename) {
		return f, errors.New("filename must not contain control characters")
	}
	if f.contentType != "" {
		// mime.ParseMediaType takes a bare token ("png") too; a part or body
		// needs a concrete type/subtype.
		mt, params, err := mime.ParseMediaType(f.contentType)
		typ, sub, _ := strings.Cut(mt, "/")
		if err != nil || typ == "" || sub == "" || strings.Contains(mt, "*") {
			return f, fmt.Errorf("invalid contentType %q: want a media type such as image/png", f.contentType)
		}
		f.contentType = mime.FormatMediaType(mt, params)
	}
	if kind == FileBase64 {
		f.data = []byte(base64.StdEncoding.EncodeToString(f.data))
	}
	return f, nil
}

// bodyDecodeBase64 decodes standard or URL-safe base64, padded or not,
// ignoring whitespace; a data: URL ("data:image/png;base64,...") also gives
// its media type.
func bodyDecodeBase64(s string) ([]byte, string, error) {
	var ct string
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		meta, payload, found := strings.Cut(rest, ",")
		mt, isB64 := strings.CutSuffix(meta, ";base64")
		if !found || !isB64 {
			return nil, "", errors.New("a data: URL must be base64 (data:<type>;base64,<data>)")
		}
		s, ct = payload, mt
	}
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, s)
	var firstErr error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		data, err := enc.DecodeString(s)
		if err == nil {
			return data, ct, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, "", fmt.Errorf("invalid base64: %w", firstErr)
}

// matchesAny reports whether media type ct is one of the ranges
// (type/subtype, type/*, */*), ignoring parameters.
func matchesAny(ranges []string, ct string) bool {
	mt := media.Type(ct)
	typ, _, _ := strings.Cut(mt, "/")
	for _, r := range ranges {
		if r = media.Type(r); r == mt || r == "*/*" || r == typ+"/*" {
			return true
		}
	}
	return false
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// quoteParam escapes a Content-Disposition parameter value as mime/multipart
// does.
func quoteParam(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// mediaTypePattern matches a concrete media type with optional
// parameters (RFC 6838 names), as parseFile requires.
const mediaTypePattern = `^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*( *; *[A-Za-z0-9!#$&^_.+-]+=([A-Za-z0-9!#$&^_.+-]+|"[^"\\]*"))*$`

// fileSchema is the JSON Schema of the file-object alternative a file
// argument may take instead of a plain base64 string: content (base64 unless
// encoding is "text"), optional filename and contentType. Unknown fields are
// rejected by encode, hence additionalProperties false.
func fileSchema() map[string]any {
	return map[string]any{
		"type":        "object",
		"description": "A file. content is base64-encoded unless encoding is \"text\"; filename and contentType are sent with the part.",
		"properties": map[string]any{
			"content":     map[string]any{"type": "string", "description": "File content: base64 (standard or URL-safe) unless encoding is \"text\"."},
			"encoding":    map[string]any{"type": "string", "enum": []any{"base64", "text"}, "default": "base64"},
			"filename":    map[string]any{"type": "string", "description": "File name sent in Content-Disposition; defaults to the property name."},
			"contentType": map[string]any{"type": "string", "pattern": mediaTypePattern, "description": "Media type of the file, e.g. image/png; defaults to the type the API declares."},
		},
		"required":             []any{"content"},
		"additionalProperties": false,
	}
}
