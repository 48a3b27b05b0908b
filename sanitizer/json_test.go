package sanitizer_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbridge/mcpbridge/sanitizer"
)

func sanitizerRules(prefixes, secrets []string) sanitizer.Rules {
	return sanitizer.Rules{Prefixes: prefixes, Secrets: secrets}
}

// cloneJSON deep-copies a decoded JSON value through encoding/json.
func cloneJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// decode decodes one JSON document, keeping numbers as json.Number.
func decode(t testing.TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding %q: %v", b, err)
	}
	return v
}

func TestRedactJSON(t *testing.T) {
	r := newRedactor(t, testRules())
	const m = `"[REDACTED]"`
	tests := []struct {
		name, in, want string
	}{
		{"compacts", "{\n  \"a\": 1,\n  \"b\": [ true, false, null ],\r\n\t\"c\": {\"d\": \"x y\"} , \"e\" : [ ] , \"f\" : { }\n}\n",
			`{"a":1,"b":[true,false,null],"c":{"d":"x y"},"e":[],"f":{}}`},
		{"surrounding space", " \n\t[1]\r\n ", `[1]`},
		{"numbers byte for byte", `[1.50, -0, 1E+2, 0.1e-7, 12345678901234567890123, -1.0e0]`,
			`[1.50,-0,1E+2,0.1e-7,12345678901234567890123,-1.0e0]`},
		{"escapes preserved", `{"a":"\u0041\/\n\"é\u00e9\ud83d\ude00<&>"}`, `{"a":"\u0041\/\n\"é\u00e9\ud83d\ude00<&>"}`},
		{"top-level scalars", ` "x" `, `"x"`},
		{"top-level number", `0`, `0`},

		{"sensitive keys", `{"password":"x","Token":1,"X-Api-Key":[1,2],"client_secret":{"a":1},"cookie":null,"apikey":true,"token_type":"bearer","tokens_used":5,"x_session":"s"}`,
			`{"password":` + m + `,"Token":` + m + `,"X-Api-Key":` + m + `,"client_secret":` + m + `,"cookie":null,"apikey":true,"token_type":"bearer","tokens_used":5,"x_session":` + m + `}`},
		{"sensitive value with space", `{ "token" : { "a" : [ 1 , 2 ] } , "b" : 2 }`, `{"token":` + m + `,"b":2}`},
		{"sensitive last", `{"a":1, "secret": [[[]]]}`, `{"a":1,"secret":` + m + `}`},
		{"nested", `{"a":[{"b":{"secret":{"password":"x"}}}],"c":[{"idToken":"t"}]}`, `{"a":[{"b":{"secret":` + m + `}}],"c":[{"idToken":` + m + `}]}`},
		{"escaped key name", `{"\u0074oken":"x","pass\u0077ord":1}`, `{"\u0074oken":` + m + `,"pass\u0077ord":` + m + `}`},
		{"masked value kept", `{"password":"MASKED:abc"}`, `{"password":"MASKED:abc"}`},
		{"masked value escaped kept", `{"password":"\u004dASKED:abc"}`, `{"password":"\u004dASKED:abc"}`},
		{"masked only as string", `{"password":["MASKED:abc"]}`, `{"password":` + m + `}`},
		{"already masked", `{"password":"[REDACTED]"}`, `{"password":"[REDACTED]"}`},

		{"url password", `{"uri":"postgresql://doadmin:AVNS_x1y2@db.example:25060/defaultdb"}`, `{"uri":"postgresql://doadmin:[REDACTED]@db.example:25060/defaultdb"}`},
		{"url password, slashes escaped", `{"uri":"https:\/\/bob:s3cr3tpw@h\/x"}`, `{"uri":"https://bob:[REDACTED]@h/x"}`},

		{"env entries", `{"Env":["PATH=/usr/bin","DB_PASSWORD=hunter2","AWS_SECRET_ACCESS_KEY=ab\/cd","TOKEN=","API_KEY=MASKED:***"]}`,
			`{"Env":["PATH=/usr/bin","DB_PASSWORD=[REDACTED]","AWS_SECRET_ACCESS_KEY=[REDACTED]","TOKEN=","API_KEY=MASKED:***"]}`},
		{"flag arguments", `{"Cmd":["--client-secret=abc","--max-tokens=5","x password=y"],"password=x":1}`,
			`{"Cmd":["--client-secret=[REDACTED]","--max-tokens=5","x password=y"],"password=x":1}`},

		{"quoted JSON", `{"Body":"{\"user\":\"bob\",\"password\":\"hunter2\"}","log":" [{\"token\":1}]","s":"{not json \"password\":1"}`,
			`{"Body":"{\"user\":\"bob\",\"password\":\"[REDACTED]\"}","log":"[{\"token\":\"[REDACTED]\"}]","s":"{not json \"password\":1"}`},
		{"quoted JSON twice", `{"m":"{\"inner\":\"{\\\"secret\\\":\\\"x\\\"}\"}"}`,
			`{"m":"{\"inner\":\"{\\\"secret\\\":\\\"[REDACTED]\\\"}\"}"}`},

		{"name/value pair", `{"name":"DB_PASSWORD","value":"hunter"}`, `{"name":"DB_PASSWORD","value":` + m + `}`},
		{"value before its label", `{"value": "hunter", "name": "api_key"}`, `{"value":` + m + `,"name":"api_key"}`},
		{"value object before its label", `{"value":{"a":[1,"x"]},"Key":"password","other":"x"}`, `{"value":` + m + `,"Key":"password","other":"x"}`},
		{"long value before its label", `{"value":"a long value, longer than the mask","n":[1,2],"name":"token","z":1}`,
			`{"value":` + m + `,"n":[1,2],"name":"token","z":1}`},
		{"several values before the label", `{"value":1,"VALUE":"x","name":"secret"}`, `{"value":` + m + `,"VALUE":` + m + `,"name":"secret"}`},
		{"har header", `[{"Name":"Authorization","Value":"Basic Zm9vOmJhcg=="},{"name":"Accept","value":"*/*"}]`,
			`[{"Name":"Authorization","Value":` + m + `},{"name":"Accept","value":"*/*"}]`},
		{"harmless label", `{"name":"DB_HOST","value":"db.local"}`, `{"name":"DB_HOST","value":"db.local"}`},
		{"label only in its own object", `{"value":"a","b":{"name":"password","value":"v","c":{"value":"w"}},"name":"host"}`,
			`{"value":"a","b":{"name":"password","value":` + m + `,"c":{"value":"w"}},"name":"host"}`},
		{"label not a string", `{"name":["password"],"value":"v"}`, `{"name":["password"],"value":"v"}`},
		{"escaped label", `{"value":"v","name":"pass\u0077ord"}`, `{"value":` + m + `,"name":"pass\u0077ord"}`},
		{"label with clean MASKED value", `{"name":"password","value":"MASKED:****"}`, `{"name":"password","value":"MASKED:****"}`},
		{"value with a token before its label", `{"value":"` + skKey + `","name":"token"}`, `{"value":` + m + `,"name":"token"}`},

		{"pattern in string", `{"msg":"use Bearer abcdefghijkl now"}`, `{"msg":"use Bearer [REDACTED] now"}`},
		{"pattern in array", `["a", "` + awsKey + `", "b"]`, `["a","[REDACTED]","b"]`},
		{"pattern in key", `{"` + ghToken + `":1}`, `{"[REDACTED]":1}`},
		{"secret in string", `"x` + secret + `x"`, `"x[REDACTED]x"`},
		{"masked string scanned", `["` + maskedStr + `"]`, `["MASKED:[REDACTED]"]`},
		{"masked value holding a secret", `{"password":"MASKED:` + secret + `"}`, `{"password":` + m + `}`},
		{"masked value holding a token", `{"token":"MASKED:x ` + jwt + `"}`, `{"token":` + m + `}`},
		{"masked value escaped holding a secret", `{"password":"MASKED:\n` + secret + `"}`, `{"password":` + m + `}`},
		{"masked value holding a pattern", `{"password":"MASKED:passwd=x"}`, `{"password":` + m + `}`},
		{"escaped string re-encoded", `{"msg":"line\nBearer abcdefghijkl <b> \u2028 \/"}`, `{"msg":"line\nBearer [REDACTED] \u003cb\u003e \u2028 /"}`},
		{"escaped string not masked kept", `{"msg":"line\nno secret <b> \/"}`, `{"msg":"line\nno secret <b> \/"}`},
		{"token split by escape", `{"k":"sk-\u0070roj-abcdefghijklmnopqrstuvwxyz"}`, `{"k":"[REDACTED]"}`},
		{"secret split by escape", `"` + secret[:3] + `\u0074` + secret[4:] + `"`, `"[REDACTED]"`},
		{"pem in json", `{"key":"` + strings.ReplaceAll(pemKey, "\n", `\n`) + `","b":1}`, `{"key":"[REDACTED]","b":1}`},
		{"token at string end", `["` + skKey + `"]`, `["[REDACTED]"]`},
		{"token not across strings", `["sk-abcdefghij","klmnopqrstuvwxyz"]`, `["sk-abcdefghij","klmnopqrstuvwxyz"]`},
		{"pem not across strings", `["-----BEGIN PRIVATE KEY-----","x","-----END PRIVATE KEY-----"]`, `["[REDACTED]","x","-----END PRIVATE KEY-----"]`},
		{"invalid UTF-8 kept", "[\"\xff " + skKey + "\"]", "[\"\xff [REDACTED]\"]"},
		{"invalid UTF-8 re-encoded", "[\"\xff\\n" + skKey + "\"]", `["\ufffd\n[REDACTED]"]`},
		{"lone surrogate re-encoded", `["\ud800 ` + skKey + `"]`, "[\"\ufffd [REDACTED]\"]"}, // U+FFFD itself is valid
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.RedactJSON(nil, []byte(tt.in))
			if err != nil {
				t.Fatalf("RedactJSON(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("RedactJSON(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			again, err := r.RedactJSON(nil, got)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("RedactJSON is not idempotent: %s then %s (%v)", got, again, err)
			}
			// The output means what Redact makes of the decoded input.
			if diff := cmp.Diff(r.Redact(decode(t, []byte(tt.in))), decode(t, got)); diff != "" {
				t.Errorf("RedactJSON(%q) differs from Redact (-Redact +RedactJSON):\n%s", tt.in, diff)
			}
		})
	}
}

func TestRedactJSONAppends(t *testing.T) {
	r := newRedactor(t, testRules())
	dst := []byte("prefix:")
	got, err := r.RedactJSON(dst, []byte(` {"token": "x"} `))
	if err != nil {
		t.Fatal(err)
	}
	if want := `prefix:{"token":"[REDACTED]"}`; string(got) != want {
		t.Errorf("RedactJSON appended %q, want %q", got, want)
	}
	got, err = r.RedactJSON(dst, []byte(`{"token": "x"`))
	if err == nil || string(got) != "prefix:" {
		t.Errorf("RedactJSON on bad input = %q, %v; want dst unchanged and an error", got, err)
	}
}

func TestRedactJSONErrors(t *testing.T) {
	r := newRedactor(t, testRules())
	tests := []struct {
		in     string
		offset int
	}{
		{``, 0},
		{`{"a":1`, 6},
		{`{"a":1}x`, 7},
		{`[1,]`, 3},
		{`"a\x"`, 3},
		{"\"a\x01\"", 2},
		{`{"a" 1}`, 5},
		{`01`, 1},
		{`"\u12G4"`, 5},
		{`{"password": tru}`, 16},
		{`"abc`, 4},
	}
	for _, tt := range tests {
		_, err := r.RedactJSON(nil, []byte(tt.in))
		var se *sanitizer.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("RedactJSON(%q) error = %v, want a *SyntaxError", tt.in, err)
			continue
		}
		if se.Offset != tt.offset {
			t.Errorf("RedactJSON(%q) error offset = %d (%v), want %d", tt.in, se.Offset, err, tt.offset)
		}
	}
}

// TestRedactJSONValidity checks that RedactJSON accepts exactly what
// json.Valid accepts, and that what it accepts without masking anything
// comes out as json.Compact writes it.
func TestRedactJSONValidity(t *testing.T) {
	r := newRedactor(t, testRules())
	inputs := []string{
		"", " ", "{", "}", "[", "]", "[]", "{}", "[1,]", "[,1]", "[1 2]", `{"a"}`, `{"a":}`, `{"a":1,}`,
		`{1:2}`, `{"a":1 "b":2}`, `{"a":1}}`, `[1]]`, `{"a" : 1 , "b" : [ ] }`,
		"0", "01", "-", "-0", "-01", "1.", ".1", "1.e1", "1e", "1e+", "1E-5", "+1", "1.5e+10", "-0.0e-0", "0x10",
		"tru", "true", "truex", "nul", "null null", "falsy", "[1] x", "NaN", "Infinity",
		`"\x"`, `"\u12"`, `"\u12G4"`, `"\uD800"`, `"\ud800\udc00"`, `"\'"`, `"\/"`, `"\a"`, `"abc`, `"\`, `["a\"]`,
		"\"\x7f\"", "\"\xff\xfe\"", "\"\t\"", "\"\x00\"", "\"\n\"", "\t1\t", "\u00a01", "1\x00", "\ufeff1", "[1]\n\n",
		`{"a":[{"b":{"c":[null,true,false,"x",1.5]}}]}`,
	}
	for c := 0; c < 256; c++ {
		s := string([]byte{byte(c)})
		inputs = append(inputs, s, `"`+s+`"`, `[`+s+`]`, `"\`+s+`"`, `{"a":`+s+`}`, `1`+s, `[1`+s+`2]`)
	}
	for _, depth := range []int{9999, 10000, 10001} {
		inputs = append(inputs, strings.Repeat("[", depth)+strings.Repeat("]", depth))
		inputs = append(inputs, strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth))
		inputs = append(inputs, strings.Repeat(`[{"password":`, depth/2)+"1"+strings.Repeat("}]", depth/2))
	}
	for _, in := range inputs {
		got, err := r.RedactJSON(nil, []byte(in))
		valid := json.Valid([]byte(in))
		if (err == nil) != valid {
			t.Errorf("RedactJSON(%.40q) error = %v; json.Valid = %t", in, err, valid)
			continue
		}
		if !valid || bytes.Contains(got, []byte(sanitizer.Mask)) {
			continue
		}
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(in)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("RedactJSON(%.40q) = %.40q, want json.Compact's %.40q", in, got, want.Bytes())
		}
	}
}

// TestConcurrentUse runs one Redactor from several goroutines (meaningful
// under -race: the JSON scratch state is pooled).
func TestConcurrentUse(t *testing.T) {
	r := newRedactor(t, testRules())
	docs := [][]byte{
		[]byte(`{"token":"x","msg":"line\nBearer abcdefghijkl","list":["` + skKey + `"]}`),
		[]byte(`[1, 2, {"a": "` + secret + `"}]`),
		[]byte(`{"body":"` + strings.Repeat(`plain text \u00e9 `, 500) + `"}`),
	}
	want := make([][]byte, len(docs))
	for i, d := range docs {
		var err error
		if want[i], err = r.RedactJSON(nil, d); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(docs))
	for g := range 8 {
		wg.Go(func() {
			for k := range 50 {
				i := (g + k) % len(docs)
				got, err := r.RedactJSON(nil, docs[i])
				if err != nil || !bytes.Equal(got, want[i]) {
					errs <- fmt.Sprintf("goroutine %d: RedactJSON(doc %d) = %s, %v; want %s", g, i, got, err, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
