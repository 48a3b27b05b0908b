package schema

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Pattern rewrites the regular expression p of a `pattern` keyword or a
// `patternProperties` key into a form that two dialects accept with the
// same meaning: Go's RE2, which validates arguments here (jsonschema-go),
// and ECMA-262 in Unicode mode, which JavaScript clients compile (the
// TypeScript SDK's Ajv uses new RegExp(p, "u")). One pattern that
// JavaScript rejects makes that client fail tools/list for every tool.
//
// The rewrite is a small parser: it keeps what both read alike, translates
// what only one of them accepts into the form both accept (`\_` and `\-` to
// the bare character; lone `{`, `}` and `]` escaped; `(?P<name>` to
// `(?<name>`; `\uXXXX`, `\u{...}` and `\x{...}` to the character itself;
// `\A`, `\z` to `^`, `$`; `\pL` to `\p{L}`; POSIX classes such as
// `[[:alpha:]]` to ranges) and refuses, with a reason, what it cannot
// prove both read the same: inline flags (`(?i)`), lookaround,
// backreferences, `\Q…\E`, script names (`\p{Greek}`), unknown escapes.
// The result must also compile with Go's regexp. ok is false when p is to
// be dropped; why then says why.
func Pattern(p string) (out string, ok bool, why string) {
	t := patternTranslator{src: p}
	if err := t.run(); err != nil {
		return "", false, err.Error()
	}
	out = t.b.String()
	if _, err := regexp.Compile(out); err != nil {
		return "", false, "Go's regexp does not compile it: " + err.Error()
	}
	return out, true, ""
}

// PatternAsIs reports whether JavaScript (Unicode mode) reads p as Go's
// regexp does, as written: the translator accepts it and has nothing to
// change but the spelling of '.' and \s, \S (which it rewrites for
// meaning, not syntax). A "regex" format value must be such a pattern for
// a JavaScript client to accept it.
func PatternAsIs(p string) bool {
	t := patternTranslator{src: p, asIs: true}
	return t.run() == nil && t.b.String() == p
}

// patternTranslator is one run of [Pattern].
type patternTranslator struct {
	asIs   bool // keep '.', \s and \S as written (PatternAsIs)
	src    string
	i      int
	b      strings.Builder
	names  map[string]bool // capture group names seen
	groups int             // open groups
}

func (t *patternTranslator) eof() bool { return t.i >= len(t.src) }

func (t *patternTranslator) peek() rune {
	r, _ := utf8.DecodeRuneInString(t.src[t.i:])
	return r
}

func (t *patternTranslator) next() rune {
	r, n := utf8.DecodeRuneInString(t.src[t.i:])
	t.i += n
	return r
}

func (t *patternTranslator) run() error {
	if !utf8.ValidString(t.src) {
		return fmt.Errorf("not valid UTF-8")
	}
	for !t.eof() {
		c := t.next()
		switch c {
		case '\\':
			if err := t.escape(); err != nil {
				return err
			}
		case '[':
			if err := t.class(); err != nil {
				return err
			}
		case '(':
			if err := t.group(); err != nil {
				return err
			}
		case ')':
			if t.groups == 0 {
				return fmt.Errorf("unbalanced )")
			}
			t.groups--
			t.b.WriteByte(')')
		case '{':
			if q, ok := quantifier(t.src[t.i-1:]); ok {
				t.b.WriteString(q)
				t.i += len(q) - 1
			} else {
				t.b.WriteString(`\{`) // a literal brace to Go; JavaScript wants it escaped
			}
		case '}', ']':
			t.b.WriteByte('\\')
			t.b.WriteRune(c)
		case '.':
			// JavaScript's dot stops at every line terminator, Go's at \n
			// alone: spell out JavaScript's.
			if t.asIs {
				t.b.WriteByte('.')
			} else {
				t.b.WriteString(jsDot)
			}
		default:
			t.b.WriteRune(c) // ^ $ | * + ? and literals
		}
	}
	if t.groups != 0 {
		return fmt.Errorf("unbalanced (")
	}
	return nil
}

// jsDot is JavaScript's '.' (without the s flag) as a class both read
// alike: any character but the line terminators \n, \r, U+2028, U+2029.
const jsDot = "[^\\n\\r\u2028\u2029]"

// jsSpaces are the members of JavaScript's \s (WhiteSpace and
// LineTerminator), written for the inside of a class both read alike; Go's
// \s is [\t\n\f\r ] alone.
const jsSpaces = "\\t\\n\\v\\f\\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

// quantifier reports whether s starts with {n}, {n,} or {n,m}, returning
// it: Go reads any other brace as a literal, JavaScript as an error.
func quantifier(s string) (string, bool) {
	j := 1
	digits := func() int {
		k := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j - k
	}
	if digits() == 0 {
		return "", false
	}
	if j < len(s) && s[j] == ',' {
		j++
		digits()
	}
	if j < len(s) && s[j] == '}' {
		return s[:j+1], true
	}
	return "", false
}

// group handles what follows '('.
func (t *patternTranslator) group() error {
	t.groups++
	if t.eof() || t.peek() != '?' {
		t.b.WriteByte('(')
		return nil
	}
	rest := t.src[t.i:]
	switch {
	case strings.HasPrefix(rest, "?:"):
		t.i += 2
		t.b.WriteString("(?:")
		return nil
	case strings.HasPrefix(rest, "?P<"), strings.HasPrefix(rest, "?<") && !strings.HasPrefix(rest, "?<=") && !strings.HasPrefix(rest, "?<!"):
		start := strings.IndexByte(rest, '<') + 1
		end := strings.IndexByte(rest, '>')
		if end < start {
			return fmt.Errorf("unterminated group name")
		}
		name := rest[start:end]
		if !groupName(name) {
			return fmt.Errorf("group name %q is not valid in both dialects", name)
		}
		if t.names[name] {
			return fmt.Errorf("group name %q used twice", name)
		}
		if t.names == nil {
			t.names = map[string]bool{}
		}
		t.names[name] = true
		t.i += end + 1
		t.b.WriteString("(?<" + name + ">")
		return nil
	case strings.HasPrefix(rest, "?="), strings.HasPrefix(rest, "?!"), strings.HasPrefix(rest, "?<"):
		return fmt.Errorf("lookaround is not supported by Go's RE2")
	case strings.HasPrefix(rest, "?P="), strings.HasPrefix(rest, "?P>"):
		return fmt.Errorf("backreferences are not supported by Go's RE2")
	}
	return fmt.Errorf("inline flags or group modifiers (%s) are not valid in JavaScript", cut(rest, 6))
}

func cut(s string, n int) string {
	if len(s) <= n {
		return "(" + s
	}
	return "(" + s[:n] + "…"
}

// groupName reports whether a capture group name is valid in Go ([A-Za-z0-9_]+)
// and JavaScript (an identifier).
func groupName(n string) bool {
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// syntaxChar reports whether c is one of ECMA-262's SyntaxCharacter, or
// '/', the identity escapes Unicode mode allows (Go accepts them too).
func syntaxChar(c rune) bool {
	return strings.ContainsRune(`^$\.*+?()[]{}|/`, c)
}

func isAlnum(c rune) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// escape handles what follows a backslash outside a class.
func (t *patternTranslator) escape() error {
	if t.eof() {
		return fmt.Errorf("trailing backslash")
	}
	c := t.next()
	switch {
	case syntaxChar(c):
		t.b.WriteByte('\\')
		t.b.WriteRune(c)
		return nil
	case (c == 's' || c == 'S') && t.asIs:
		t.b.WriteByte('\\')
		t.b.WriteRune(c)
		return nil
	case c == 's':
		t.b.WriteString("[" + jsSpaces + "]")
		return nil
	case c == 'S':
		t.b.WriteString("[^" + jsSpaces + "]")
		return nil
	case strings.ContainsRune("dDwWbBfnrtv", c):
		t.b.WriteByte('\\')
		t.b.WriteRune(c)
		return nil
	case c == 'A':
		t.b.WriteByte('^') // without the m flag, the same in both
		return nil
	case c == 'z':
		t.b.WriteByte('$')
		return nil
	case c == 'p' || c == 'P':
		p, err := t.property(c)
		if err != nil {
			return err
		}
		t.b.WriteString(p)
		return nil
	}
	r, ok, err := t.charEscape(c)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf(`the escape \%c is not valid in both dialects`, c)
	}
	literal(&t.b, r, false)
	return nil
}

// charEscape decodes an escape that stands for one character: control
// letters, octal and hex forms, \u forms, and escaped punctuation. ok is
// false for an escape that is not one.
func (t *patternTranslator) charEscape(c rune) (r rune, ok bool, err error) {
	switch {
	case c == 'a':
		return 7, true, nil
	case c == 'x':
		if !t.eof() && t.peek() == '{' {
			end := strings.IndexByte(t.src[t.i:], '}')
			if end < 0 {
				return 0, false, fmt.Errorf(`unterminated \x{`)
			}
			return t.codePoint(t.src[t.i+1:t.i+end], end+1)
		}
		if t.i+2 <= len(t.src) {
			return t.codePoint(t.src[t.i:t.i+2], 2)
		}
		return 0, false, fmt.Errorf(`incomplete \x escape`)
	case c == 'u':
		if !t.eof() && t.peek() == '{' {
			end := strings.IndexByte(t.src[t.i:], '}')
			if end < 0 {
				return 0, false, fmt.Errorf(`unterminated \u{`)
			}
			return t.codePoint(t.src[t.i+1:t.i+end], end+1)
		}
		if t.i+4 > len(t.src) {
			return 0, false, fmt.Errorf(`incomplete \u escape`)
		}
		hi, ok, err := t.codePoint(t.src[t.i:t.i+4], 4)
		if err != nil || !ok {
			return hi, ok, err
		}
		if hi >= 0xD800 && hi <= 0xDBFF && strings.HasPrefix(t.src[t.i:], `\u`) && t.i+6 <= len(t.src) {
			if lo, err := strconv.ParseUint(t.src[t.i+2:t.i+6], 16, 32); err == nil && lo >= 0xDC00 && lo <= 0xDFFF {
				t.i += 6
				return (hi-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000, true, nil
			}
		}
		if hi >= 0xD800 && hi <= 0xDFFF {
			return 0, false, fmt.Errorf("lone surrogate escape")
		}
		return hi, true, nil
	case c == '0':
		// \0 alone is NUL in both; Go reads up to two more octal digits.
		n := 0
		for n < 2 && t.i+n < len(t.src) && t.src[t.i+n] >= '0' && t.src[t.i+n] <= '7' {
			n++
		}
		v, _ := strconv.ParseUint("0"+t.src[t.i:t.i+n], 8, 32)
		t.i += n
		return rune(v), true, nil
	case c >= '1' && c <= '7' && !t.eof() && t.peek() >= '0' && t.peek() <= '7':
		// Go's octal \12, \123; JavaScript reads a backreference.
		n := 1
		if t.i+1 < len(t.src) && t.src[t.i+1] >= '0' && t.src[t.i+1] <= '7' {
			n = 2
		}
		v, _ := strconv.ParseUint(string(c)+t.src[t.i:t.i+n], 8, 32)
		t.i += n
		return rune(v), true, nil
	case c >= '1' && c <= '9':
		return 0, false, fmt.Errorf("backreferences are not supported by Go's RE2")
	case c == 'Q':
		return 0, false, fmt.Errorf(`\Q…\E quoting is not valid in JavaScript`)
	case c < utf8.RuneSelf && !isAlnum(c):
		// Escaped punctuation (\_ \- \< \# \  …): Go reads the character,
		// Unicode-mode JavaScript allows the escape only for syntax
		// characters, so write the character itself.
		return c, true, nil
	}
	return 0, false, nil
}

// codePoint parses hex digits consumed by an escape.
func (t *patternTranslator) codePoint(hex string, consumed int) (rune, bool, error) {
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || hex == "" || v > utf8.MaxRune {
		return 0, false, fmt.Errorf("bad hex escape %q", hex)
	}
	t.i += consumed
	if v >= 0xD800 && v <= 0xDFFF && consumed != 4 {
		return 0, false, fmt.Errorf("surrogate code point escape")
	}
	return rune(v), true, nil
}

// literal writes the character r so that it is read as itself in both
// dialects, inside or outside a class.
func literal(b *strings.Builder, r rune, inClass bool) {
	switch {
	case inClass && (r == '\\' || r == ']' || r == '[' || r == '-' || r == '^'):
		b.WriteByte('\\')
		b.WriteRune(r)
	case !inClass && syntaxChar(r):
		b.WriteByte('\\')
		b.WriteRune(r)
	case r < 0x20 || r == 0x7f:
		fmt.Fprintf(b, `\x%02X`, r)
	default:
		b.WriteRune(r)
	}
}

// generalCategories are the Unicode General_Category names both Go (RE2)
// and JavaScript accept as \p{Name}. Script names (\p{Greek}) differ:
// JavaScript wants \p{Script=Greek}, which Go rejects.
var generalCategories = map[string]bool{
	"C": true, "Cc": true, "Cf": true, "Co": true, "Cs": true,
	"L": true, "Ll": true, "Lm": true, "Lo": true, "Lt": true, "Lu": true,
	"M": true, "Mc": true, "Me": true, "Mn": true,
	"N": true, "Nd": true, "Nl": true, "No": true,
	"P": true, "Pc": true, "Pd": true, "Pe": true, "Pf": true, "Pi": true, "Po": true, "Ps": true,
	"S": true, "Sc": true, "Sk": true, "Sm": true, "So": true,
	"Z": true, "Zl": true, "Zp": true, "Zs": true,
}

// property parses \pX, \p{Name} or \p{^Name} (c is 'p' or 'P') into
// \p{Name} or \P{Name}.
func (t *patternTranslator) property(c rune) (string, error) {
	if t.eof() {
		return "", fmt.Errorf(`incomplete \%c`, c)
	}
	var name string
	if t.peek() == '{' {
		end := strings.IndexByte(t.src[t.i:], '}')
		if end < 0 {
			return "", fmt.Errorf(`unterminated \%c{`, c)
		}
		name = t.src[t.i+1 : t.i+end]
		t.i += end + 1
	} else {
		name = string(t.next())
	}
	if strings.HasPrefix(name, "^") {
		name = name[1:]
		c ^= 'p' ^ 'P'
	}
	if !generalCategories[name] {
		return "", fmt.Errorf(`the property \p{%s} is not read alike by Go and JavaScript`, name)
	}
	return `\` + string(c) + "{" + name + "}", nil
}

// posixClasses are the ASCII classes Go accepts as [[:name:]], as class
// contents both dialects read alike.
var posixClasses = map[string]string{
	"alnum": `0-9A-Za-z`, "alpha": `A-Za-z`, "ascii": `\x00-\x7F`, "blank": `\x09 `,
	"cntrl": `\x00-\x1F\x7F`, "digit": `0-9`, "graph": `!-~`, "lower": `a-z`,
	"print": ` -~`, "punct": `!-/:-@\[-` + "`" + `{-~`, "space": `\x09-\x0D `, "upper": `A-Z`,
	"word": `0-9A-Za-z_`, "xdigit": `0-9A-Fa-f`,
}

// classItem is one element of a bracket class: a character r written as
// text, or a set such as \d or \p{L} (set non-empty, written as is).
type classItem struct {
	r    rune
	text string
	set  string
	dash bool // an unescaped '-'
}

// class handles a bracket expression after '['. What both dialects read
// alike is kept as written; escapes only Go accepts become the character,
// a ']' first in the class (a literal to Go) is escaped, and a '-' that
// could start a range after a set (\w-.) is written \-. Ranges are
// allowed only between two characters.
func (t *patternTranslator) class() error {
	t.b.WriteByte('[')
	if !t.eof() && t.peek() == '^' {
		t.next()
		t.b.WriteByte('^')
	}
	first := true
	var prev *classItem // last item written, a candidate range start
	for {
		if t.eof() {
			return fmt.Errorf("unterminated [")
		}
		if t.peek() == ']' && !first {
			t.next()
			t.b.WriteByte(']')
			return nil
		}
		atStart := first
		first = false
		if t.peek() == ']' { // first in the class: Go reads a literal
			t.next()
			t.b.WriteString(`\]`)
			prev = &classItem{r: ']'}
			continue
		}
		if t.peek() == '-' && prev != nil && prev.set == "" && t.i+1 < len(t.src) && t.src[t.i+1] != ']' {
			t.next()
			hi, err := t.classAtom()
			if err != nil {
				return err
			}
			if hi.set != "" {
				return fmt.Errorf("a range ends at a class escape (%s)", hi.set)
			}
			if hi.r < prev.r {
				return fmt.Errorf("range out of order")
			}
			t.b.WriteByte('-')
			t.b.WriteString(hi.text)
			prev = nil
			continue
		}
		it, err := t.classAtom()
		if err != nil {
			return err
		}
		switch {
		case it.set != "":
			t.b.WriteString(it.set)
		case it.dash && !atStart && (t.eof() || t.peek() != ']'):
			t.b.WriteString(`\-`) // after a set or a range: a literal to Go
		default:
			t.b.WriteString(it.text)
		}
		prev = &it
	}
}

// classAtom reads one class element: a character, possibly escaped, a
// set escape, or a POSIX class.
func (t *patternTranslator) classAtom() (classItem, error) {
	c := t.next()
	switch {
	case c == '[' && strings.HasPrefix(t.src[t.i:], ":"):
		end := strings.Index(t.src[t.i:], ":]")
		if end < 0 {
			return classItem{}, fmt.Errorf("unterminated POSIX class")
		}
		name := t.src[t.i+1 : t.i+end]
		set, ok := posixClasses[name]
		if !ok {
			return classItem{}, fmt.Errorf("POSIX class [:%s:] is not supported", name)
		}
		t.i += end + 2
		return classItem{set: set}, nil
	case c == '-':
		return classItem{r: c, text: "-", dash: true}, nil
	case c != '\\':
		return classItem{r: c, text: string(c)}, nil
	}
	if t.eof() {
		return classItem{}, fmt.Errorf("trailing backslash")
	}
	e := t.next()
	switch {
	case e == 's' && !t.asIs:
		return classItem{set: jsSpaces}, nil
	case e == 's':
		return classItem{set: `\s`}, nil
	case strings.ContainsRune("dDSwW", e):
		// \S inside a class stays Go's (non-space but [\t\n\f\r ]): a
		// negated set cannot join a class, and the characters on which
		// the two differ (\v, U+00A0, U+FEFF...) rarely matter there.
		return classItem{set: `\` + string(e)}, nil
	case e == 'p' || e == 'P':
		p, err := t.property(e)
		return classItem{set: p}, err
	case strings.ContainsRune("fnrtv", e):
		r := map[rune]rune{'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}[e]
		return classItem{r: r, text: `\` + string(e)}, nil
	case syntaxChar(e) || e == '-':
		return classItem{r: e, text: `\` + string(e)}, nil
	}
	r, ok, err := t.charEscape(e)
	if err != nil {
		return classItem{}, err
	}
	if !ok {
		return classItem{}, fmt.Errorf(`the escape \%c in a class is not valid in both dialects`, e)
	}
	var b strings.Builder
	literal(&b, r, true)
	return classItem{r: r, text: b.String()}, nil
}
