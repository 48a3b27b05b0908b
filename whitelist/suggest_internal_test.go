package whitelist

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"getPetById", "getPetById", 0},
		{"/pets", "/pets/", 1},
		{"héllo", "hello", 1}, // runes, not bytes
	}
	for _, tt := range tests {
		if got := levenshtein(tt.a, tt.b); got != tt.want {
			t.Errorf("levenshtein(%q, %q) = %d; want %d", tt.a, tt.b, got, tt.want)
		}
		if got := levenshtein(tt.b, tt.a); got != tt.want {
			t.Errorf("levenshtein(%q, %q) = %d; want %d", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"store", "pet", "user", "storage", "stores"}
	tests := []struct {
		query string
		want  []string
	}{
		{"storag", []string{"storage", "store", "stores"}}, // nearest first, ties in key order
		{"STORE", []string{"store", "stores", "storage"}},  // case is ignored
		{"stor", []string{"store", "stores"}},              // storage is 3 away: too far for 4 letters
		{"xtorage", []string{"storage", "store"}},
		{"users", []string{"user"}},
		{"zzzzzzzz", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, closest(tt.query, keys, keys)); diff != "" {
			t.Errorf("closest(%q) mismatch (-want +got):\n%s", tt.query, diff)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a"}, `; did you mean "a"?`},
		{[]string{"a", "b"}, `; did you mean "a" or "b"?`},
		{[]string{"a", "b", "c"}, `; did you mean "a", "b" or "c"?`},
	}
	for _, tt := range tests {
		if got := didYouMean(tt.in); got != tt.want {
			t.Errorf("didYouMean(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestShape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/pets", "/pets"},
		{"/pets/", "/pets/"},
		{"/pets/{petId}", "/pets/{}"},
		{"/pets/:id", "/pets/{}"},
		{"/pets/{}", "/pets/{}"},
		{"/files/{name}.{ext}", "/files/{}.{}"},
		{"/v1/{name}:cancel", "/v1/{}:cancel"},
		{"/a/:", "/a/:"},
		{"/a/{open", "/a/{open"},
		{"/a/:x/{y}/z", "/a/{}/{}/z"},
	}
	for _, tt := range tests {
		if got := shape(tt.in); got != tt.want {
			t.Errorf("shape(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestBracePath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/pets/:petId", "/pets/{petId}"},
		{"/pets/{petId}", "/pets/{petId}"},
		{"/v1/{name}:cancel", "/v1/{name}:cancel"},
		{"/a/:", "/a/:"},
	}
	for _, tt := range tests {
		if got := bracePath(tt.in); got != tt.want {
			t.Errorf("bracePath(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
