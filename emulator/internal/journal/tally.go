package journal

// Tally counts the entries a filter selects as they are recorded, for an await of a
// number of requests: each call looks only at the entries recorded since the last one,
// so an await that wakes at every journaled request evaluates its filter once per
// entry, not once per entry per wake. The count is what Count would say: the selected
// entries the journal still holds (a clear, or the ring dropping the oldest, takes them
// away; a Reset or Load starts the tally afresh). A Tally is for one goroutine.
type Tally struct {
	j     *Journal
	f     Filter
	epoch uint64
	next  uint64 // entries after this Seq are still to be looked at
	// seen holds the Seqs of the newest selected entries, oldest first, in a ring of
	// at most min(want, the journal's size): no more can count.
	seen       []uint64
	head, held int
}

// Tally starts a tally of the entries f selects (f.Limit aside), to be counted up to
// want.
func (j *Journal) Tally(f Filter, want int) *Tally {
	f.Limit = 0
	j.mu.Lock()
	epoch := j.epoch
	j.mu.Unlock()
	return &Tally{j: j, f: f, epoch: epoch, next: f.Since, seen: make([]uint64, max(1, min(want, j.size)))}
}

// Count looks at the entries recorded since the last call and returns how many of the
// selected ones the journal holds now, at most want.
func (t *Tally) Count() int {
	j := t.j
	j.mu.Lock()
	upto, epoch := j.seq, j.epoch
	j.mu.Unlock()
	if epoch != t.epoch { // renumbered: every entry is new
		t.epoch, t.next, t.head, t.held = epoch, t.f.Since, 0, 0
	}
	j.scanEpoch(t.next, upto, epoch, func(e *Entry) bool {
		t.next = e.Seq
		if t.f.matches(e) {
			t.push(e.Seq)
		}
		return true
	})
	j.mu.Lock()
	first, same := j.firstLocked(), j.epoch == t.epoch
	j.mu.Unlock()
	if !same {
		return 0 // the next call starts afresh
	}
	for t.held > 0 && t.seen[t.head] < first { // cleared, or dropped from the ring
		t.head = (t.head + 1) % len(t.seen)
		t.held--
	}
	return t.held
}

// push records a selected Seq, forgetting the oldest when the ring is full.
func (t *Tally) push(seq uint64) {
	if t.held == len(t.seen) {
		t.head = (t.head + 1) % len(t.seen)
		t.held--
	}
	t.seen[(t.head+t.held)%len(t.seen)] = seq
	t.held++
}

// firstLocked is the Seq of the oldest entry held, or the next Seq when none is;
// j.mu is held.
func (j *Journal) firstLocked() uint64 {
	if len(j.ring) == 0 {
		return j.seq + 1
	}
	return j.ring[j.head].Seq
}
