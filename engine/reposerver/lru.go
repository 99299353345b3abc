package reposerver

import (
	"container/list"
	"sync"
)

// lru is a bounded, concurrency-safe least-recently-used map.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	order *list.List // front is most recently used; values are *lruEntry
	items map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key   K
	value V
}

// newLRU returns an lru holding at most size entries (at least one).
func newLRU[K comparable, V any](size int) *lru[K, V] {
	return &lru[K, V]{max: max(1, size), order: list.New(), items: map[K]*list.Element{}}
}

// Get returns the value of key and marks it used.
func (c *lru[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruEntry[K, V]).value, true
}

// Add stores value under key, evicting the least recently used entry when
// full.
func (c *lru[K, V]) Add(key K, value V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		el.Value.(*lruEntry[K, V]).value = value
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry[K, V]{key: key, value: value})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruEntry[K, V]).key)
	}
}

// Len returns the number of entries.
func (c *lru[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
