package quota

import "time"

// FormatRetry is formatRetry, for the message tests.
func FormatRetry(d time.Duration) string { return formatRetry(d) }

// NewMemoryStoreMax is a MemoryStore tracking at most maxKeys keys, so
// tests reach the bound without 100 000 callers.
func NewMemoryStoreMax(maxKeys int) *MemoryStore { return newMemoryStore(maxKeys) }
