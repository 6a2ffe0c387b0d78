package money

import (
	"encoding/json"
	"sync"
)

// DecodeCache remembers the records decoded from stored JSON, keyed by the
// exact bytes, so that reference records read on every lookup (currencies,
// fee rules) are not decoded again while they stay the same. A changed record
// has other bytes and is decoded afresh. Values must not be modified by the
// caller: they are shared.
type DecodeCache[T any] struct {
	mu sync.RWMutex
	m  map[string]T
}

// decodeCacheSize bounds a cache: reference data is small, and a store full
// of imports must not grow memory without end.
const decodeCacheSize = 4096

// Decode returns b decoded as T.
func (c *DecodeCache[T]) Decode(b []byte) (T, error) {
	c.mu.RLock()
	v, ok := c.m[string(b)]
	c.mu.RUnlock()
	if ok {
		return v, nil
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]T{}
	}
	if len(c.m) < decodeCacheSize {
		c.m[string(b)] = v
	}
	c.mu.Unlock()
	return v, nil
}
