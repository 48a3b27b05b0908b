package handoff

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestPutTake: a stand-in is a JSON string that survives go-sdk's encoding
// (encoding/json compacting a MarshalJSON's output) unchanged, gives back
// the parts once, and no other taker's stand-in or other value is taken.
func TestPutTake(t *testing.T) {
	a, b := NewTaker(), NewTaker()
	parts := [][]byte{[]byte(`{"x":`), []byte(`[1,2]`), []byte(`}`)}
	s := a.Put(parts...)
	var str string
	if err := json.Unmarshal(s, &str); err != nil {
		t.Fatalf("stand-in %s is not a JSON string: %v", s, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as jsonrpc2's jsonMarshal
	if err := enc.Encode(json.RawMessage(s)); err != nil {
		t.Fatal(err)
	}
	if got := bytes.TrimRight(buf.Bytes(), "\n"); !bytes.Equal(got, s) {
		t.Fatalf("encoding changed the stand-in: %s -> %s", s, got)
	}
	if _, ok := b.Take(s); ok {
		t.Fatal("another taker took the stand-in")
	}
	for _, v := range []string{`"x"`, `{}`, `""`, string(s[:len(s)-1]), string(s) + " "} {
		if _, ok := a.Take([]byte(v)); ok {
			t.Errorf("took %q", v)
		}
	}
	got, ok := a.Take(s)
	if !ok || len(got) != 3 || !bytes.Equal(bytes.Join(got, nil), []byte(`{"x":[1,2]}`)) {
		t.Fatalf("Take = %q, %v", got, ok)
	}
	if _, ok := a.Take(s); ok {
		t.Error("taken twice")
	}
	if a.Pending() != 0 {
		t.Errorf("%d pending after the take", a.Pending())
	}
	a.Put([]byte("{}"))
	a.Drop()
	if a.Pending() != 0 {
		t.Errorf("%d pending after Drop", a.Pending())
	}
	var none *Taker
	if _, ok := none.Take(s); ok {
		t.Error("a nil taker took")
	}
	none.Drop()
}

func TestContext(t *testing.T) {
	tk := NewTaker()
	if FromContext(context.Background()) != nil {
		t.Error("a taker in a bare context")
	}
	if FromContext(WithTaker(context.Background(), tk)) != tk {
		t.Error("the taker is not carried")
	}
}

// TestCompact agrees with encoding/json's compaction on what it would
// change.
func TestCompact(t *testing.T) {
	for _, s := range []string{
		`{}`, `{"a":1}`, `{"a b":"c d"}`, `[1,2,"x"]`, `"a\"b c"`, `"\\"`, `{"a":"\\\" x"}`, `{"k":"v\\\\"}`, `[true,null,false]`, `"é \u2028"`,
		`{"a": 1}`, "{\"a\":1}\n", "[1,\t2]", "{\"a\":\r1}", `[1, 2]`, ` {}`, `{} `, `{"a":"x\\\" y","b": 2}`, `{"a":"x\\\\" ,"b":2}`, `"x \\\\" `,
	} {
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(s)); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		want := buf.String() == s
		if got := Compact([]byte(s)); got != want {
			t.Errorf("Compact(%q) = %v, want %v", s, got, want)
		}
	}
	// Cut short or unbalanced: not handed off, so go-sdk's encoding
	// refuses them as before.
	for _, s := range []string{`"unterminated`, `{"a":`, `[1,2`, `]`, `{"a":"x"}}`, `{"a":[1}`[:7], `{"a":"x\"}`} {
		if Compact([]byte(s)) {
			t.Errorf("Compact(%q) = true", s)
		}
	}
}

func BenchmarkCompact(b *testing.B) {
	doc := []byte(`{"items":[` + strings.Repeat(`{"name":"a <b> & c","url":"https://x/?a=1&b=2","note":"quote \" and \\ here","n":12345,"ok":true},`, 10000) + `{}]}`)
	b.SetBytes(int64(len(doc)))
	b.Run("Compact", func(b *testing.B) {
		for b.Loop() {
			if !Compact(doc) {
				b.Fatal("not compact")
			}
		}
	})
	b.Run("json.Compact", func(b *testing.B) {
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			if err := json.Compact(&buf, doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
