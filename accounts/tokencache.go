package accounts

import (
	"sync"

	"github.com/marketplace/marketplace/storage"
)

// TokensTopic is announced (storage.Announce) by every Update that revokes
// tokens, so that the other servers on a shared store forget the tokens
// they remember.
const TokensTopic = "accounts/tokens"

// maxCachedTokens bounds the tokens a server remembers; past it the cache
// starts again empty.
const maxCachedTokens = 10000

// tokenCache remembers, on a store shared by several servers at network
// distance, the tokens this server has found, so that an authenticated
// request costs no round trip for its token. It is kept only where the
// store tells of changes (storage.Changes): a revocation anywhere is
// announced, and every server forgets what it remembers once the word
// arrives (milliseconds; at worst the store's listener notices a lost
// connection within about a second and then wakes every subscriber). A
// revocation made through this server is forgotten at once. Expiry is
// checked on every use against the engine's clock.
type tokenCache struct {
	changed <-chan struct{}

	mu     sync.Mutex
	byHash map[string]tokenRecord
	// generation changes whenever the cache is emptied, so that a lookup
	// that read the store before a revocation does not store what it read
	// after the cache was emptied.
	generation uint64
}

// newTokenCache returns a cache for store, or nil where the store does not
// tell of changes (one process's store: its reads cost no round trip).
func newTokenCache(store storage.Store) *tokenCache {
	changed, _, ok := storage.Subscribe(store, TokensTopic)
	if !ok {
		return nil
	}
	return &tokenCache{changed: changed, byHash: map[string]tokenRecord{}}
}

// catchUpLocked empties the cache when a revocation has been announced
// since it last looked.
func (c *tokenCache) catchUpLocked() {
	select {
	case <-c.changed:
		c.forgetLocked()
	default:
	}
}

func (c *tokenCache) forgetLocked() {
	clear(c.byHash)
	c.generation++
}

// get returns the record remembered for hash, and the generation to pass
// to put after a read of the store.
func (c *tokenCache) get(hash string) (tokenRecord, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.catchUpLocked()
	rec, ok := c.byHash[hash]
	return rec, ok, c.generation
}

// put remembers rec, read from the store while the cache was at
// generation.
func (c *tokenCache) put(hash string, rec tokenRecord, generation uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.catchUpLocked()
	if c.generation != generation {
		return
	}
	if len(c.byHash) >= maxCachedTokens {
		c.forgetLocked()
		return
	}
	c.byHash[hash] = rec
}

// forget empties the cache.
func (c *tokenCache) forget() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.forgetLocked()
	c.mu.Unlock()
}
