package bridge

import (
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge/result"
	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// relaxed is the redaction of a tool whose whitelist entry says
// redact: {allowKeys: [...]}: its answers are shaped by a redactor built
// from the catalog's rules (credentials included) plus AllowKeys, so those
// members keep their values while credentials and secret patterns are
// still masked. Error messages, logs and truncated answers keep the
// catalog's full redaction.
type relaxed struct {
	keys   []string // the entry's allowKeys, kept for the tool cache
	shaper result.Shaper
}

// relaxRedaction gives t its relaxed redaction and says so at INFO.
func (c *Catalog) relaxRedaction(t *Tool, keys []string) error {
	rules := c.rules
	rules.AllowKeys = slices.Clone(keys)
	red, err := sanitizer.New(rules)
	if err != nil {
		return fmt.Errorf("%s: redact.allowKeys: %w", t.plan.Label, err)
	}
	t.relaxed = &relaxed{keys: rules.AllowKeys, shaper: result.Shaper{Redactor: red, Log: c.log}}
	c.log.Info("redaction relaxed for a tool: these members of its answers are not masked by key name (credentials and secret patterns still are)",
		zap.String("tool", t.def.Name), zap.Strings("keys", rules.AllowKeys))
	return nil
}

// shaperFor is the shaper of t's answers.
func (c *Catalog) shaperFor(t *Tool) *result.Shaper {
	if t.relaxed != nil {
		return &t.relaxed.shaper
	}
	return &c.shaper
}

// relaxedKeys are t's allowKeys (nil: none).
func (t *Tool) relaxedKeys() []string {
	if t.relaxed == nil {
		return nil
	}
	return t.relaxed.keys
}
