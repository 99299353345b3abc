package render

import (
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

// arena holds the nodes of fastYAML parses and their Content slices, cut
// from blocks, and the children of the collections being parsed. A
// decode that keeps no syntax tree (every one but DecodeFileLines')
// converts its nodes, resets the arena and hands it to the next file, so
// reading a repository reuses the blocks of its largest file per core
// instead of allocating a node for every key and value of every file.
type arena struct {
	nodes blocks[yaml.Node]
	ptrs  blocks[*yaml.Node]
	// stack holds the children of the collections being parsed, the
	// innermost last; a finished collection moves its own to Content.
	stack []*yaml.Node
}

var arenas = sync.Pool{New: func() any { return new(arena) }}

// node returns a new zero node.
func (a *arena) node() *yaml.Node { return &a.nodes.take(1)[0] }

// push adds children to the collection being parsed.
func (a *arena) push(ns ...*yaml.Node) { a.stack = append(a.stack, ns...) }

// content returns the children pushed since len(stack) was base, and
// takes them off the stack.
func (a *arena) content(base int) []*yaml.Node {
	kids := a.stack[base:]
	if len(kids) == 0 {
		return nil
	}
	c := a.ptrs.take(len(kids))
	copy(c, kids)
	clear(kids)
	a.stack = a.stack[:base]
	return c
}

// reset forgets every node handed out, for the next parse.
func (a *arena) reset() {
	a.nodes.reset()
	a.ptrs.reset()
	clear(a.stack)
	a.stack = a.stack[:0]
}

// Block sizes: blocks grow from minBlock to maxBlock items; a request
// larger than maxBlock gets a slice of its own. An arena back in the pool
// keeps at most maxBlocks blocks.
const (
	minBlock  = 32
	maxBlock  = 1024
	maxBlocks = 64
)

// blocks hands out slices of T cut from a list of blocks.
type blocks[T any] struct {
	list [][]T
	// cur is the block being cut, used how much of it is handed out.
	cur, used int
}

// take returns n zero items.
func (b *blocks[T]) take(n int) []T {
	if n > maxBlock {
		return make([]T, n)
	}
	for {
		if b.cur < len(b.list) {
			if blk := b.list[b.cur]; b.used+n <= len(blk) {
				s := blk[b.used : b.used+n : b.used+n]
				b.used += n
				return s
			}
			b.cur, b.used = b.cur+1, 0
		}
		if b.cur == len(b.list) {
			b.list = append(b.list, make([]T, max(n, min(minBlock<<min(len(b.list), 5), maxBlock))))
		}
	}
}

// reset zeroes what was handed out and makes it available again.
func (b *blocks[T]) reset() {
	for i := 0; i <= b.cur && i < len(b.list); i++ {
		clear(b.list[i])
	}
	if len(b.list) > maxBlocks {
		clear(b.list[maxBlocks:])
		b.list = b.list[:maxBlocks]
	}
	b.cur, b.used = 0, 0
}
