package shard

import "hash/fnv"

// Owner returns the member that owns key: the one with the highest
// rendezvous score, "" when there are no members. Every member computes
// the same owner from the same members, whatever their order.
func Owner(members []string, key string) string {
	var owner string
	var best uint64
	for _, m := range members {
		if s := score(m, key); owner == "" || s > best || (s == best && m < owner) {
			owner, best = m, s
		}
	}
	return owner
}

// score is member's rendezvous score for key: FNV-1a of both, mixed by
// splitmix64's finalizer so that members whose names differ in one
// character score independently.
func score(member, key string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(member))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(key))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
