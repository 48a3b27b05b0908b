package bridge

import (
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpbridge/mcpbridge/bridge/schema"
)

// checkArgs validates decoded arguments against a tool's input schema.
// When they fail, strings that obviously stand for the number or boolean
// the schema wants ("1", "true") are converted in place and the arguments
// validated again (schema.Coerce), so the common case pays nothing. With
// intFormats (the schema declares int32 or int64), numbers are held to
// those ranges too, which the validator does not assert. It returns the
// arguments to send (the coerced ones when coercion was needed, in
// place). A failure is an *ArgumentError in the agent's words (`"limit"
// must be an integer >= 1, got "ten"`), never the validator's
// Go-flavoured text.
func checkArgs(input *jsonschema.Resolved, intFormats bool, args map[string]any) (map[string]any, error) {
	err := validateArgs(input, args)
	if err != nil && schema.Coerce(args, input.Schema()) {
		err = validateArgs(input, args)
	}
	if err != nil {
		v, _ := floatArgs(args)
		return nil, argumentError(v.(map[string]any), input.Schema(), err)
	}
	if intFormats {
		if msg := schema.IntFormatError(args, input.Schema()); msg != "" {
			return nil, &ArgumentError{Reason: msg}
		}
	}
	return args, nil
}

// validateArgs validates args, reading the numbers kept exact
// (exactNumber) as the float64 nearest to them: the validator takes a
// json.Number for a string. The arguments are sent as written.
func validateArgs(input *jsonschema.Resolved, args map[string]any) error {
	if v, ok := floatArgs(args); ok {
		return input.Validate(v)
	}
	return input.Validate(args)
}

// argumentError explains a validation failure: by the checker's walk of the
// arguments when it finds the problem, else by the schema jsonschema-go
// names (its own reason quotes Go values, e.g. "0/1 is less than
// 1.000000", and is never shown).
func argumentError(args map[string]any, root *jsonschema.Schema, err error) *ArgumentError {
	if msg := schema.Explain(args, root); msg != "" {
		return &ArgumentError{Reason: msg}
	}
	// Fallback: "validating root: validating /properties/x: minimum: ...".
	s, ptr := err.Error(), ""
	for {
		rest, ok := strings.CutPrefix(s, "validating ")
		if !ok {
			break
		}
		loc, reason, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		if loc != "root" {
			ptr = loc
		}
		s = reason
	}
	keyword, _, _ := strings.Cut(s, ":")
	if strings.ContainsAny(keyword, " \"[{") {
		keyword = ""
	}
	subject := "the arguments"
	if f := schemaPathField(ptr); f != "" {
		subject = strconv.Quote(f)
	}
	msg := subject + " do not satisfy the tool's input schema"
	if subject != "the arguments" {
		msg = subject + " does not satisfy its schema"
	}
	if keyword != "" {
		msg += " (" + keyword + ")"
	}
	if d := schema.DescribeAt(root, ptr); d != "" {
		msg += ": it must be " + d
	}
	return &ArgumentError{Reason: msg}
}
