package transport

import (
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sdkMaxDepth is the nesting go-sdk's JSON decoder refuses beyond.
const sdkMaxDepth = 1000

// plainRequest reads data, one JSON value already known to be valid JSON
// nested no deeper than maxDepth, when it is a request of the plain shape clients send: ASCII only, with
// the members "jsonrpc": "2.0", "method" (a string without escapes), an
// optional "id" (an integer of at most 15 digits or a string of printable
// ASCII without escapes) and an optional "params", each at most once and
// nothing else. For such a message it returns what jsonrpc.DecodeMessage
// returns, without go-sdk's decoder (which copies every message into a
// fresh 32 KB buffer; go-sdk decodes the message once more anyway). ok is
// false for anything else, which then goes through jsonrpc.DecodeMessage.
func plainRequest(data []byte, maxDepth int) (req *jsonrpc.Request, ok bool) {
	for _, c := range data {
		if c >= 0x80 {
			return nil, false
		}
	}
	if maxDepth > sdkMaxDepth && exceedsDepth(data, sdkMaxDepth) {
		return nil, false
	}
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != '{' {
		return nil, false
	}
	i++
	var (
		method, params    []byte
		id                any
		sawVersion, sawID bool
	)
	for {
		i = skipSpace(data, i)
		key, j, ok := plainJSONString(data, i)
		if !ok {
			return nil, false
		}
		i = skipSpace(data, j)
		if i == len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		switch string(key) {
		case "jsonrpc":
			v, j, ok := plainJSONString(data, i)
			if !ok || sawVersion || string(v) != "2.0" {
				return nil, false
			}
			sawVersion, i = true, j
		case "method":
			v, j, ok := plainJSONString(data, i)
			if !ok || method != nil || len(v) == 0 {
				return nil, false
			}
			method, i = v, j
		case "id":
			v, j, ok := plainID(data, i)
			if !ok || sawID {
				return nil, false
			}
			id, sawID, i = v, true, j
		case "params":
			j := skipValue(data, i)
			if j <= i || params != nil {
				return nil, false
			}
			params, i = data[i:j], j
		default:
			return nil, false
		}
		i = skipSpace(data, i)
		if i == len(data) {
			return nil, false
		}
		if data[i] == ',' {
			i++
			continue
		}
		if data[i] != '}' || skipSpace(data, i+1) != len(data) || !sawVersion || method == nil {
			return nil, false
		}
		break
	}
	req = &jsonrpc.Request{Method: string(method)}
	if params != nil {
		req.Params = append([]byte(nil), params...)
	}
	if sawID {
		var err error
		if req.ID, err = jsonrpc.MakeID(id); err != nil {
			return nil, false
		}
	}
	return req, true
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// plainJSONString is the content of the string at data[i] when it has no
// escape, and the index past it.
func plainJSONString(data []byte, i int) (s []byte, end int, ok bool) {
	if i == len(data) || data[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '"':
			return data[i+1 : j], j + 1, true
		case '\\':
			return nil, i, false
		}
	}
	return nil, i, false
}

// plainID is the id at data[i] as go-sdk's decoder gives it to
// jsonrpc.MakeID: a float64 for an integer of at most 15 digits (exact, so
// that the id go-sdk answers with is the same integer), a string for a
// printable ASCII string without escapes.
func plainID(data []byte, i int) (any, int, bool) {
	if i == len(data) {
		return nil, i, false
	}
	if data[i] == '"' {
		s, j, ok := plainJSONString(data, i)
		if !ok {
			return nil, i, false
		}
		for _, c := range s {
			if c < 0x20 || c > 0x7e {
				return nil, i, false
			}
		}
		return string(s), j, true
	}
	j := i
	if data[j] == '-' {
		j++
	}
	start := j
	for j < len(data) && data[j] >= '0' && data[j] <= '9' {
		j++
	}
	digits := j - start
	if digits == 0 || digits > 15 || digits > 1 && data[start] == '0' {
		return nil, i, false
	}
	if j < len(data) && (data[j] == '.' || data[j] == 'e' || data[j] == 'E') {
		return nil, i, false
	}
	n, err := strconv.ParseInt(string(data[i:j]), 10, 64)
	if err != nil {
		return nil, i, false
	}
	return float64(n), j, true
}

// skipValue returns the index just past the JSON value at data[i], which
// is known to be valid JSON; i when there is none.
func skipValue(data []byte, i int) int {
	if i == len(data) {
		return i
	}
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return i
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				k := skipValue(data, j)
				if k == j {
					return i
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return i
	}
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

// plainResponseID is the id key ([idKey]) of an output line's prefix when
// it starts the way go-sdk writes a response: {"jsonrpc":"2.0","id":ID,
// then "result" or "error", with an integer id or a string id of plain
// printable ASCII (no escape, nothing json.Marshal would escape). ok is
// false for anything else, which outputResponseID then decodes. id aliases
// prefix.
func plainResponseID(prefix []byte) (id []byte, isResponse, ok bool) {
	const head = `{"jsonrpc":"2.0",`
	if len(prefix) < len(head) || string(prefix[:len(head)]) != head {
		return nil, false, false
	}
	rest := prefix[len(head):]
	switch {
	case hasPrefix(rest, `"method":`):
		return nil, false, true // a request or a notification
	case !hasPrefix(rest, `"id":`):
		return nil, false, false
	}
	rest = rest[len(`"id":`):]
	n := 0
	if len(rest) > 0 && rest[0] == '"' {
		for n = 1; n < len(rest) && rest[n] != '"'; n++ {
			if c := rest[n]; c < 0x20 || c > 0x7e || c == '\\' || c == '<' || c == '>' || c == '&' {
				return nil, false, false
			}
		}
		if n == len(rest) {
			return nil, false, false
		}
		n++
	} else {
		if len(rest) > 0 && rest[0] == '-' {
			n++
		}
		start := n
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == start || n-start > 1 && rest[start] == '0' {
			return nil, false, false
		}
	}
	after := rest[n:]
	if hasPrefix(after, `,"result":`) || hasPrefix(after, `,"error":`) {
		return rest[:n], true, true
	}
	if hasPrefix(after, `,"method":`) {
		return nil, false, true // a request from the server to the client
	}
	return nil, false, false
}

func hasPrefix(b []byte, s string) bool { return len(b) >= len(s) && string(b[:len(s)]) == s }
