package bridge

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// generalArgs is decodeArgs' general path, without the flat fast path.
func generalArgs(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, err
	}
	for k, v := range args {
		args[k] = normalizeNumbers(v)
	}
	return args, nil
}

var flatCases = []struct {
	raw  string
	flat bool // decodeFlat takes it
}{
	{`{}`, true},
	{` { } `, true},
	{`{"username":"octocat"}`, true},
	{"{\n\t\"owner\" : \"acme\" ,\r\n \"repo\":\"widgets\",\"per_page\":20}", true},
	{`{"a":true,"b":false,"c":null}`, true},
	{`{"n":0,"m":-0,"i":-12,"big":999999999999999999,"bigger":9223372036854775807,"over":9223372036854775808,"neg":-9223372036854775808}`, true},
	{`{"f":1.5,"g":-0.25,"e":1e3,"E":2E-2,"x":1.0,"huge":1e400,"tiny":-1e-400}`, true},
	{`{"id":123456789012345678901234567890,"amt":0.10000000000000000001,"p":12.50,"z":-0.0}`, true},
	{`{"u":"héllo wörld ✓","sym":"a/b?c=d&e#f"}`, true},
	{`{"dup":1,"dup":"two"}`, true},
	{`{"k":"v"}` + " \n", true},

	// Left to the general path, which decodes or rejects them.
	{`{"esc":"a\"b"}`, false},
	{`{"esc":"\u00e9"}`, false},
	{`{"nested":{"a":1}}`, false},
	{`{"list":[1,2]}`, false},
	{`{"bad":"` + "\xff" + `"}`, false},
	{`{"ctl":"` + "\x01" + `"}`, false},
	{`{"a":1}{"b":2}`, false},
	{`{"a":1} trailing`, false},
	{`{"a":01}`, false},
	{`{"a":+1}`, false},
	{`{"a":1.}`, false},
	{`{"a":.5}`, false},
	{`{"a":1e}`, false},
	{`{"a":-}`, false},
	{`{"a":tru}`, false},
	{`{"a":truex}`, false},
	{`{"a":nul}`, false},
	{`{"a":1,}`, false},
	{`{"a" 1}`, false},
	{`{a:1}`, false},
	{`{"a":1`, false},
	{`{"a":"open}`, false},
	{`[1,2]`, false},
	{`"text"`, false},
	{`42`, false},
	{`{`, false},
}

// TestDecodeFlat checks that the fast path decodes exactly what the
// general path does, and takes the shapes it is meant for.
func TestDecodeFlat(t *testing.T) {
	for _, tt := range flatCases {
		got, ok := decodeFlat([]byte(tt.raw))
		if ok != tt.flat {
			t.Errorf("decodeFlat(%q) ok = %v, want %v", tt.raw, ok, tt.flat)
		}
		if !ok {
			continue
		}
		want, err := generalArgs([]byte(tt.raw))
		if err != nil {
			t.Errorf("decodeFlat(%q) accepted what encoding/json rejects: %v", tt.raw, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("decodeFlat(%q) (-general +flat):\n%s", tt.raw, diff)
		}
	}
}

// TestDecodeFlatAllocs pins the fast path's cost on a typical call: the
// map (header and one group), the key and the value.
func TestDecodeFlatAllocs(t *testing.T) {
	raw := []byte(`{"username":"octocat"}`)
	if n := testing.AllocsPerRun(100, func() { decodeFlat(raw) }); n > 5 {
		t.Errorf("decodeFlat: %.0f allocations, want at most 5", n)
	}
}

// FuzzDecodeFlat: whatever the fast path accepts, the general path
// accepts too and decodes to the same arguments.
func FuzzDecodeFlat(f *testing.F) {
	for _, tt := range flatCases {
		f.Add([]byte(tt.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := decodeFlat(raw)
		if !ok {
			return
		}
		want, err := generalArgs(raw)
		if err != nil {
			// encoding/json's Decoder ignores what follows the first
			// value; decodeFlat never does, so an error here is a bug.
			t.Fatalf("decodeFlat(%q) accepted what encoding/json rejects: %v", raw, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("decodeFlat(%q) (-general +flat):\n%s", raw, diff)
		}
	})
}
