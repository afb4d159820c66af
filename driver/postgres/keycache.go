package postgres

import "sync"

// keyCache remembers, per world, the public key the epoch's grant carries
// (journal.State.HolderKey) as the append function last answered it. It is
// only a hint: the function compares the key a verdict was made against
// with the head's under the row lock, and answers the right one when they
// differ. A key is fixed for the life of an epoch, so an entry is exact
// until the world's epoch moves on.
type keyCache struct {
	mu sync.Mutex
	m  map[string]epochKey
}

type epochKey struct {
	epoch int64
	key   []byte
}

// keyCacheMax bounds the cache; when full it starts over (a miss costs one
// more call of the append function, once per world and epoch).
const keyCacheMax = 4096

func (c *keyCache) get(world string, epoch int64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.m[world]
	if !ok || k.epoch != epoch {
		return nil, false
	}
	return k.key, true
}

func (c *keyCache) put(world string, epoch int64, key []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= keyCacheMax {
		c.m = map[string]epochKey{}
	}
	c.m[world] = epochKey{epoch, key}
}
