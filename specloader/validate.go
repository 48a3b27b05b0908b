package specloader

import (
	"context"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxWarnings caps Result.Warnings; a last entry says how many were left out.
const maxWarnings = 100

// validate runs doc.Validate and returns its findings as warnings, or, when
// strict, as an error.
//
// Lenient validation skips what real specs commonly get wrong without harm
// to a caller: examples, defaults, regex patterns Go cannot compile, and
// formats. Strict validation uses kin-openapi's defaults, which check the
// first three. Both collect every independent problem (EnableMultiError)
// rather than stopping at the first.
func validate(ctx context.Context, doc *openapi3.T, strict bool) ([]string, error) {
	opts := []openapi3.ValidationOption{openapi3.EnableMultiError()}
	if !strict {
		opts = append(opts,
			openapi3.DisableExamplesValidation(),
			openapi3.DisableSchemaDefaultsValidation(),
			openapi3.DisableSchemaPatternValidation(),
			openapi3.DisableSchemaFormatValidation(),
			openapi3.AllowExtensionsWithRef(),
		)
	}
	err := runValidate(ctx, doc, opts)
	if err == nil {
		return nil, nil
	}
	if ctx.Err() != nil && !strict {
		return nil, nil // abandoned on the way out: nothing to report
	}
	if strict {
		return nil, fmt.Errorf("validating (Options.Strict, --strict): %w", err)
	}
	return findings(err), nil
}

// runValidate calls doc.Validate, turning a panic into a finding: the
// document is loaded by then, and in lenient mode still usable.
//
// kin-openapi's Validate does not watch ctx: on Microsoft Graph's spec it
// runs for minutes, and a bridge whose client had gone kept running it
// (it validates in the background once serving). So it runs on its own
// goroutine, and a ctx that ends abandons it: the caller returns at
// once; the goroutine finishes on its own, or with the process.
func runValidate(ctx context.Context, doc *openapi3.T, opts []openapi3.ValidationOption) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("validation stopped: %w", panicError(r))
			}
		}()
		done <- doc.Validate(ctx, opts...)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("validation abandoned: %w", context.Cause(ctx))
	}
}

// findings flattens kin-openapi's MultiError (possibly nested) into one
// string per problem.
func findings(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		if me, ok := err.(openapi3.MultiError); ok {
			for _, e := range me {
				walk(e)
			}
			return
		}
		out = append(out, err.Error())
	}
	walk(err)
	if len(out) > maxWarnings {
		n := len(out) - maxWarnings
		out = append(out[:maxWarnings], fmt.Sprintf("... and %d more validation findings", n))
	}
	return out
}
