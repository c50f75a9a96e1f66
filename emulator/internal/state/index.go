package state

import (
	"slices"
	"sort"
	"time"
)

// Key is the sort key of a listed item: newest first, then by id descending, so two
// items created in the same nanosecond still have one order.
type Key struct {
	At int64 // Unix nanoseconds of created_at
	ID string
}

// before reports whether k sorts before o (newer first).
func (k Key) before(o Key) bool {
	if k.At != o.At {
		return k.At > o.At
	}
	return k.ID > o.ID
}

func keyOf(t time.Time, id string) Key { return Key{At: t.UnixNano(), ID: id} }

// index keeps keys sorted. It stores them oldest first and is read backwards, so that
// inserting a new item, usually the newest, is an append.
type index struct {
	keys []Key // oldest first
}

// olderCount is the number of keys strictly older than k, that is, listed after it.
func (x *index) olderCount(k Key) int {
	return sort.Search(len(x.keys), func(i int) bool { return !k.before(x.keys[i]) })
}

func (x *index) insert(k Key) {
	if n := len(x.keys); n == 0 || k.before(x.keys[n-1]) { // the newest: a create's
		if n == cap(x.keys) && n >= 1024 {
			// double a long index, where append would grow it by a quarter: each
			// growth copies every key, and a world of creates grows its two indexes
			// without end (120 bytes allocated an insert at a quarter, 48 at double)
			x.keys = slices.Grow(x.keys, n)
		}
		x.keys = append(x.keys, k)
		return
	}
	// Not the newest, but usually among the last few: creates in the same instant as
	// the newest (a real clock's reading is often shared by several), ordered by id.
	// Its place is found by walking back from the end, where a binary search of a
	// long index compares about twenty ids; past 32 keys, the search after all.
	n := len(x.keys)
	i := n
	for i > 0 && n-i < 32 && !k.before(x.keys[i-1]) {
		i--
	}
	if i > 0 && !k.before(x.keys[i-1]) {
		i = x.olderCount(k)
	}
	x.keys = append(x.keys, Key{})
	copy(x.keys[i+1:], x.keys[i:])
	x.keys[i] = k
}

// keyOrder compares keys oldest first.
func keyOrder(a, b Key) int {
	switch {
	case a == b:
		return 0
	case b.before(a):
		return -1
	}
	return 1
}

// sort orders keys appended out of order (oldest first).
func (x *index) sort() { slices.SortFunc(x.keys, keyOrder) }

func (x *index) remove(k Key) {
	i := x.olderCount(k)
	if i < len(x.keys) && x.keys[i] == k {
		x.keys = append(x.keys[:i], x.keys[i+1:]...)
	}
}

// Range bounds a walk of an index.
type Range struct {
	After  *Key      // the cursor: start strictly after this key in listing order
	Newest time.Time // only items created strictly before this (zero: no bound)
	Oldest time.Time // only items created strictly after this (zero: no bound)
}

// walk calls fn on keys in listing order (newest first) within r until fn returns false.
// Finding the start costs O(log n); each step after it O(1).
func (x *index) walk(r Range, fn func(Key) bool) {
	end := len(x.keys) // exclusive, in the oldest-first slice
	if r.After != nil {
		end = x.olderCount(*r.After)
	}
	if !r.Newest.IsZero() {
		end = min(end, x.olderCount(Key{At: r.Newest.UnixNano(), ID: ""}))
	}
	for i := end - 1; i >= 0; i-- {
		k := x.keys[i]
		if !r.Oldest.IsZero() && k.At <= r.Oldest.UnixNano() {
			return
		}
		if !fn(k) {
			return
		}
	}
}
