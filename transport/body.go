package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"
)

// checkBody buffers a POST body of at most max bytes and rejects, before
// go-sdk sees it, what go-sdk answers in plain text or not at all:
//   - a body over max: 413 (go-sdk enforces the same limit again), before
//     any of it is read when the client awaits 100-continue;
//   - a body not received within the read deadline (bodyDeadline): 408;
//   - a JSON body that does not parse: 400 with a JSON-RPC parse error
//     (-32700), as JSON-RPC 2.0 requires;
//   - JSON nested deeper than maxDepth, or that is not a JSON-RPC message:
//     400 with -32600 (Invalid Request).
//
// A batch (an array) whose elements all pass those checks (and no two calls
// of which share an id) and non-JSON content types pass on to go-sdk, which
// owns batch support per protocol revision and the 415 answer.
//
// A notification of a method go-sdk does not know is ignored, as JSON-RPC
// has it: alone, it gets 202 without reaching go-sdk; in a batch, it is
// left out of what go-sdk gets. go-sdk would refuse either POST whole, in
// plain text.
//
// With sessions (stateful streamable HTTP), a call other than initialize
// posted without an Mcp-Session-Id gets 400 with -32600 saying to
// initialize first, as the transport's spec says a server that requires a
// session should answer: go-sdk opened a session for it that was never
// initialized and answered 200 with error code 0 ("method is invalid during
// session initialization"), which names neither the header nor the fix. A
// request declaring 2026-07-28 or later still goes to go-sdk, which tells
// such a client the revisions this server speaks.
//
// With calls (stateless streamable HTTP), a single message passes through
// calls.serve, which makes a call cancellable by notifications/cancelled;
// such a notification in a batch is applied too (the calls of a batch
// cannot be cancelled: they share one go-sdk session and POST).
func checkBody(max int64, maxDepth int, sessions bool, calls *callTable, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > max && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
			// Refused unread: the client waits for "100 Continue", which
			// reading would send, before it sends the body. (Another
			// client is already sending it: read as far as the limit, its
			// 413 is not lost in a reset of the connection.)
			writeRPCError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("request body exceeds %d bytes", max))
			return
		}
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
		if err != nil {
			if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
				writeRPCError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("request body exceeds %d bytes", max))
				return
			}
			w.Header().Set("Connection", "close") // the rest of the body is still on the wire
			if isReadTimeout(err) {
				http.Error(w, "Request Timeout: the request body did not arrive in time", http.StatusRequestTimeout)
				return
			}
			http.Error(w, "reading request body failed", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
			m, batch, code, msg := inspectMessage(data, maxDepth)
			if code != 0 {
				writeRPCErrorID(w, http.StatusBadRequest, callID(m), code, msg)
				return
			}
			if batch {
				if calls != nil {
					calls.cancelBatch(r, data)
				}
				if kept, dropped := dropUnknownNotifications(data); dropped {
					if kept == nil {
						w.WriteHeader(http.StatusAccepted)
						return
					}
					r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(kept)), int64(len(kept))
				}
			} else if unknownNotification(m) {
				w.WriteHeader(http.StatusAccepted) // ignored, unanswered
				return
			} else if sessions && needsSession(r, m) {
				writeRPCErrorID(w, http.StatusBadRequest, callID(m), jsonrpc.CodeInvalidRequest,
					"Bad Request: this server keeps sessions: send initialize first, then the Mcp-Session-Id header it answers with on every request")
				return
			}
			if calls != nil && m != nil {
				calls.serve(w, r, m, next)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// needsSession reports whether m, posted as r to a stateful server, is a
// call that only a session may make: not initialize (nor ping, which
// go-sdk answers without one, and a health check may send), no Mcp-Session-Id,
// and no revision from 2026-07-28 on (no handshake, no session) declared in
// MCP-Protocol-Version.
func needsSession(r *http.Request, m jsonrpc.Message) bool {
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsCall() || req.Method == "initialize" || req.Method == "ping" || r.Header.Get("Mcp-Session-Id") != "" {
		return false
	}
	v := r.Header.Get("Mcp-Protocol-Version")
	return v == "" || (v < "2026-07-28" && v[0] >= '0' && v[0] <= '9')
}

// sdkNotifications are the notifications go-sdk's server takes (its
// serverMethodInfos); it refuses a POST that holds any other.
var sdkNotifications = map[string]bool{
	"notifications/cancelled":          true,
	"notifications/initialized":        true,
	"notifications/progress":           true,
	"notifications/roots/list_changed": true,
}

// unknownNotification reports whether m is a notification of a method
// go-sdk does not know.
func unknownNotification(m jsonrpc.Message) bool {
	req, ok := m.(*jsonrpc.Request)
	return ok && !req.IsCall() && !sdkNotifications[req.Method]
}

// dropUnknownNotifications returns the batch data (checked by
// inspectBatch) without its unknown notifications, and whether it held
// any; kept is nil when nothing else is left.
func dropUnknownNotifications(data []byte) (kept []byte, dropped bool) {
	var elems []json.RawMessage
	if json.Unmarshal(data, &elems) != nil {
		return nil, false
	}
	rest := elems[:0]
	for _, e := range elems {
		if m, err := jsonrpc.DecodeMessage(e); err == nil && unknownNotification(m) {
			continue
		}
		rest = append(rest, e)
	}
	if len(rest) == len(elems) {
		return nil, false
	}
	if len(rest) == 0 {
		return nil, true
	}
	kept, err := json.Marshal(rest)
	if err != nil {
		return nil, false // cannot happen: valid raw JSON
	}
	return kept, true
}

// inspectMessage checks data, one JSON-RPC message or a batch, the way
// go-sdk would decode it, so that what go-sdk would refuse (or, over stdio,
// die on) is answered here instead. It returns batch for a JSON array (whose
// elements it does not check), the decoded message for an object, or a
// JSON-RPC error code and message. With the code, msg may be the decoded
// message when its id is the one to answer under.
//
// The nesting depth is checked first, with a byte scan that allocates
// nothing, so a deeply nested message is never handed to a decoder.
func inspectMessage(data []byte, maxDepth int) (msg jsonrpc.Message, batch bool, code int64, text string) {
	if exceedsDepth(data, maxDepth) {
		return nil, false, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("Invalid Request: JSON nested deeper than %d levels", maxDepth)
	}
	if !json.Valid(data) {
		return nil, false, jsonrpc.CodeParseError, "Parse error: not valid JSON"
	}
	switch t := bytes.TrimLeft(data, " \t\r\n"); t[0] {
	case '[':
		code, text := inspectBatch(data, maxDepth)
		return nil, true, code, text
	case '{':
		if req, ok := plainRequest(data, maxDepth); ok {
			if text := badInitialize(req); text != "" {
				return req, false, jsonrpc.CodeInvalidParams, text
			}
			return req, false, 0, ""
		}
		m, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return nil, false, jsonrpc.CodeInvalidRequest, "Invalid Request: " + err.Error()
		}
		id := rawID(data)
		switch m := m.(type) {
		case *jsonrpc.Request:
			if !m.ID.IsValid() && id != nil {
				// go-sdk takes "id":null for no id, a notification, and
				// answers nothing (or, over HTTP, in plain text).
				return nil, false, jsonrpc.CodeInvalidRequest, "Invalid Request: an id must be a string or an integer, not null (a notification has no id)"
			}
		case *jsonrpc.Response:
			if m.Result == nil && m.Error == nil {
				// Neither a request nor a response: go-sdk drops it as the
				// answer to no call of its own, and the client waits.
				return m, false, jsonrpc.CodeInvalidRequest, "Invalid Request: a message with an id needs a method (a request), or a result or an error (a response)"
			}
		}
		if !exactID(id) {
			// go-sdk reads a numeric id through a float64 into an int64
			// (1.5 as 1, 2^53+1 as 2^53, 2^64 as -2^63) and would answer
			// under another id than the one sent.
			return nil, false, jsonrpc.CodeInvalidRequest, "Invalid Request: an id must be a string or an integer of at most 2^53 in magnitude, so that the answer can carry it exactly"
		}
		if req, ok := m.(*jsonrpc.Request); ok {
			if text := badInitialize(req); text != "" {
				return req, false, jsonrpc.CodeInvalidParams, text
			}
		}
		return m, false, 0, ""
	default:
		return nil, false, jsonrpc.CodeInvalidRequest, "Invalid Request: not a JSON-RPC message"
	}
}

// initializeParams is what go-sdk decodes initialize params into (its
// initializeParamsV2: the roots capability as a pointer).
type initializeParams struct {
	mcp.InitializeParams
	Capabilities *struct {
		mcp.ClientCapabilities
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	} `json:"capabilities"`
}

// badInitialize returns why go-sdk cannot decode the params of req, an
// initialize call ("" when it can, or req is something else): go-sdk
// answers such params with error code 0 instead of Invalid params. No
// params at all go-sdk refuses itself, as an invalid request.
func badInitialize(req *jsonrpc.Request) string {
	if req.Method != "initialize" || !req.IsCall() || req.Params == nil {
		return ""
	}
	var p *initializeParams
	if _, err := sjson.Parse(req.Params, &p, sjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return "Invalid params: initialize takes an object with protocolVersion, capabilities and clientInfo: " + err.Error()
	}
	if p == nil {
		return "Invalid params: initialize takes an object with protocolVersion, capabilities and clientInfo, not null"
	}
	return ""
}

// rawID returns the id of the message in data as written (`null` for an
// explicit null), nil when it has none. It reads the keys as go-sdk does:
// with segmentio's decoder, case-sensitively, the last of repeated keys.
func rawID(data []byte) json.RawMessage {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if _, err := sjson.Parse(data, &probe, sjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return nil // the decoder's error stands
	}
	return probe.ID
}

// exactID reports whether id (rawID), if it is a number, is an integer
// literal go-sdk reads exactly (|n| <= 2^53). Only the general path asks
// (plainRequest takes plain integer ids itself).
func exactID(id json.RawMessage) bool {
	if len(id) == 0 {
		return true // no id
	}
	switch c := id[0]; {
	case c == '-' || c >= '0' && c <= '9':
		// go-sdk decodes it through a float64: exact up to 2^53.
		n, err := strconv.ParseInt(string(id), 10, 64)
		return err == nil && n >= -1<<53 && n <= 1<<53
	case c == '"':
		// go-sdk decodes it into a Go string: invalid UTF-8 and a lone
		// surrogate (\ud800) become U+FFFD.
		return exactString(id)
	}
	return true
}

// exactString reports whether the JSON string literal s (valid JSON) is
// valid UTF-8 with no unpaired surrogate escape, so that decoding it loses
// nothing.
func exactString(s []byte) bool {
	if !utf8.Valid(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		i++
		if s[i] != 'u' {
			continue
		}
		r, err := strconv.ParseUint(string(s[i+1:i+5]), 16, 16)
		if err != nil {
			return false
		}
		i += 4
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return false // a low surrogate first
		case r >= 0xd800 && r <= 0xdbff:
			// A high surrogate: a low one must follow.
			if i+6 >= len(s) || s[i+1] != '\\' || s[i+2] != 'u' {
				return false
			}
			lo, err := strconv.ParseUint(string(s[i+3:i+7]), 16, 16)
			if err != nil || lo < 0xdc00 || lo > 0xdfff {
				return false
			}
			i += 6
		}
	}
	return true
}

// exceedsDepth reports whether arrays and objects in data nest deeper than
// limit. Brackets inside strings do not count; data need not be valid JSON.
func exceedsDepth(data []byte, limit int) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// callID is the id of m when it is a call, to answer it under; nil (null)
// otherwise.
func callID(m jsonrpc.Message) any {
	if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
		return req.ID.Raw()
	}
	return nil
}

// rpcErrorBody is a JSON-RPC error response to a request whose id could not
// be read, so id is null (JSON-RPC 2.0 §5).
type rpcErrorBody struct {
	JSONRPC string   `json:"jsonrpc"`
	ID      any      `json:"id"`
	Error   rpcError `json:"error"`
}

type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func writeRPCError(w http.ResponseWriter, status int, code int64, msg string) {
	writeRPCErrorID(w, status, nil, code, msg)
}

// writeRPCErrorID is writeRPCError under id (nil: null).
func writeRPCErrorID(w http.ResponseWriter, status int, id any, code int64, msg string) {
	body, err := json.Marshal(rpcErrorBody{JSONRPC: "2.0", ID: id, Error: rpcError{Code: code, Message: msg}})
	if err != nil { // cannot happen: fixed types
		http.Error(w, msg, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// inspectBatch checks each element of a batch as inspectMessage checks a
// single message, and that no two calls in it share an id; it returns the
// error for the first element that fails, which refuses the batch (as
// go-sdk refuses it for an element it cannot decode). go-sdk would
// otherwise answer a call in a batch under an inexact id, drop a second
// call of the same id, and answer an empty batch in plain text. data is a
// valid JSON array no deeper than maxDepth.
func inspectBatch(data []byte, maxDepth int) (code int64, text string) {
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		return jsonrpc.CodeParseError, "Parse error: " + err.Error()
	}
	if len(elems) == 0 {
		return jsonrpc.CodeInvalidRequest, "Invalid Request: an empty batch"
	}
	ids := map[string]bool{}
	for i, e := range elems {
		m, batch, code, text := inspectMessage(e, maxDepth)
		switch {
		case batch:
			return jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: batch element %d is a batch", i)
		case code != 0:
			return code, fmt.Sprintf("%s (batch element %d)", text, i)
		}
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			key := string(idKey(req.ID.Raw()))
			if ids[key] {
				return jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: batch element %d repeats the id %s of another call in the batch", i, key)
			}
			ids[key] = true
		}
	}
	return 0, ""
}
