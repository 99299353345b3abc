package server

import (
	"container/list"
	"sync"
)

// lru is a concurrency-safe least-recently-used map bounded by the total
// cost of its values (their size in bytes, for the render cache).
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	max   int64
	used  int64
	cost  func(V) int64
	order *list.List // front is most recently used; values are *lruEntry
	items map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key   K
	value V
	cost  int64
}

// newLRU returns an lru holding values of at most maxCost in total, each
// costing cost(value) (at least 1).
func newLRU[K comparable, V any](maxCost int64, cost func(V) int64) *lru[K, V] {
	return &lru[K, V]{max: max(1, maxCost), cost: cost, order: list.New(), items: map[K]*list.Element{}}
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

// Add stores value under key, evicting the least recently used entries
// until the total cost fits. A value that alone costs more than the bound
// is not kept.
func (c *lru[K, V]) Add(key K, value V) {
	cost := max(1, c.cost(value))
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
	if cost > c.max {
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry[K, V]{key: key, value: value, cost: cost})
	c.used += cost
	for c.used > c.max {
		c.remove(c.order.Back())
	}
}

// remove drops an entry; the caller holds mu.
func (c *lru[K, V]) remove(el *list.Element) {
	e := c.order.Remove(el).(*lruEntry[K, V])
	delete(c.items, e.key)
	c.used -= e.cost
}

// Len returns the number of entries.
func (c *lru[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Cost returns the total cost of the entries.
func (c *lru[K, V]) Cost() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}
