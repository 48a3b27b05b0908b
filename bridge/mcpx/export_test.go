package mcpx

import "github.com/mcpbridge/mcpbridge/bridge"

// SpecViews is how many reduced openapi://spec documents s keeps.
func (s *Server) SpecViews() int { return s.specs.size() }

// KeptSpecView is the document s keeps for cat and key, or nil; it never
// makes one.
func (s *Server) KeptSpecView(cat *bridge.Catalog, key string) []byte {
	s.specs.mu.Lock()
	e := s.specs.byKey[key]
	if s.specs.cat != cat {
		e = nil
	}
	s.specs.mu.Unlock()
	if e == nil {
		return nil
	}
	e.once.Do(func() {}) // orders the read after the making
	return e.spec
}
