package bridge_test

// A small generator of strings matching a regular expression, over
// regexp/syntax: enough for the patterns of real specs (anchors, classes,
// bounded and unbounded repetition, alternation).

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// genPattern generates a string matching an RE2 pattern with a length in
// [minLen, maxLen], trying growing repetition counts. It returns false when
// no attempt fits.
func genPattern(pattern string, minLen, maxLen, variant int) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	re = re.Simplify()
	check, err := regexp.Compile(pattern)
	if err != nil {
		return "", false
	}
	for _, reps := range []int{1, 0, 2, 3, 4, 6, 8, 12, 16, 24, 32, 40, 64, 100, 128, 256} {
		var b strings.Builder
		if !genRegexp(&b, re, reps, variant) {
			continue
		}
		v := b.String()
		n := utf8.RuneCountInString(v)
		if n >= minLen && n <= maxLen && check.MatchString(v) {
			return v, true
		}
	}
	return "", false
}

// genRegexp writes a string matching re, repeating each loop reps times
// within its bounds; variant picks among character class members and
// alternatives.
func genRegexp(b *strings.Builder, re *syntax.Regexp, reps, variant int) bool {
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			b.WriteRune(r)
		}
		return true
	case syntax.OpCharClass:
		r, ok := genClassRune(re.Rune, variant)
		if !ok {
			return false
		}
		b.WriteRune(r)
		return true
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteByte("abcdefgh"[variant%8])
		return true
	case syntax.OpCapture:
		return genRegexp(b, re.Sub[0], reps, variant)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !genRegexp(b, sub, reps, variant) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		return genRegexp(b, re.Sub[variant%len(re.Sub)], reps, variant)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, -1
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
		}
		n := max(reps, lo)
		if hi >= 0 && n > hi {
			n = hi
		}
		for range n {
			if !genRegexp(b, re.Sub[0], reps, variant) {
				return false
			}
		}
		return true
	}
	return false
}

// genClassRune picks a class member, preferring letters and digits (which
// survive every serialization unescaped).
func genClassRune(ranges []rune, variant int) (rune, bool) {
	var nice []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1] && len(nice) < 64; r++ {
			if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
				nice = append(nice, r)
			}
		}
	}
	if len(nice) > 0 {
		return nice[variant%len(nice)], true
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1] && r < 0x10000; r++ {
			if unicode.IsPrint(r) && r != ' ' {
				return r, true
			}
		}
	}
	if len(ranges) >= 2 {
		return ranges[0], true
	}
	return 0, false
}

// TestGenPattern checks the generator on patterns of the corpus's kinds.
func TestGenPattern(t *testing.T) {
	tests := []struct {
		pattern        string
		minLen, maxLen int
	}{
		{`^sha256:[a-f0-9]{64}$`, 71, 71},
		{`^[A-Za-z0-9_.-]+$`, 3, 10},
		{`\d{3}-\d{4}`, 0, 100},
		{`^(foo|bar)+$`, 6, 9},
		{`^[^/\s]+/[^/\s]+$`, 0, 100},
		{`^#?[0-9a-fA-F]{6}$`, 6, 7},
		{`^$`, 0, 0},
	}
	for _, tc := range tests {
		for variant := range 3 {
			got, ok := genPattern(tc.pattern, tc.minLen, tc.maxLen, variant)
			n := utf8.RuneCountInString(got)
			if !ok || !regexp.MustCompile(tc.pattern).MatchString(got) || n < tc.minLen || n > tc.maxLen {
				t.Errorf("genPattern(%q, %d, %d, %d) = %q, %v", tc.pattern, tc.minLen, tc.maxLen, variant, got, ok)
			}
		}
	}
	if got, ok := genPattern(`^a{5}$`, 0, 3, 0); ok {
		t.Errorf("genPattern(a{5}, max 3) = %q, want no value", got)
	}
}
