package persist

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/hostemu/hostemu/emulator/internal/notify"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// DefaultCompactMin is the size the change log may reach before a compaction, whatever
// the snapshot's size: below it, replaying the log at start costs little.
const DefaultCompactMin int64 = 16 << 20

// maxSpare bounds the queue kept from one batch for the changes after the next one.
const maxSpare = 1024

// errLogClosed answers a wait for a change made after the log closed (at shutdown).
var errLogClosed = errors.New("the --state change log is closed")

// Persister keeps --state: FILE is a snapshot of the state, FILE.log the changes made
// since, one record each, appended and synced in batches (group commit) before the
// requests that made them are answered. When the log outgrows max(compactMin, the
// snapshot), a fresh snapshot is written beside the log and the log is cut to what
// came after it. Snapshots carry the seq of the last record they include, so a crash
// between the two steps replays nothing twice.
type Persister struct {
	path, logPath string
	world         *world.World
	log           *slog.Logger
	// a change's record seq is fileBase + its Changes count - storeBase: seqs keep
	// growing across restarts, while the world counts from its start
	fileBase, storeBase uint64
	compactAt           int64 // the compactMin Open was given

	mu         sync.Mutex // guards the fields up to advanced
	pending    []state.Change
	durable    uint64 // Changes count up to which every change is durable
	err        error  // why nothing more becomes durable (sticky)
	compacting bool
	trimTo     uint64 // a snapshot including records up to this seq was written: cut the log

	advanced notify.Signal // durable or err moved

	wake    chan struct{}      // the writer has something to do
	barrier chan chan struct{} // the writer flushes, then closes the channel (tests: settle)
	done    sync.WaitGroup

	// owned by the writer goroutine, and by close once it stopped
	f     *os.File
	size  int64
	marks []logMark
	buf   []byte
	spare []state.Change // the last batch's array, cleared: the next pending queue

	snapMu   sync.Mutex // guards snapSeq and snapSize: a snapshot never replaces a newer one
	snapSeq  uint64
	snapSize int64
}

// logMark is where a synced batch ended in the log and the last seq it held.
type logMark struct {
	seq uint64
	off int64
}

// Open loads FILE and replays FILE.log into w, removes temporary files a
// crash left, writes a fresh snapshot when it replayed anything (or FILE did not
// exist), and from then on records every change of w. compactMin <= 0 means
// DefaultCompactMin.
func Open(path string, w *world.World, log *slog.Logger, compactMin int64) (*Persister, error) {
	if compactMin <= 0 {
		compactMin = DefaultCompactMin
	}
	p := &Persister{path: path, logPath: path + ".log", world: w, log: log, compactAt: compactMin, wake: make(chan struct{}, 1), barrier: make(chan chan struct{})}
	removed, err := removeTemps(path)
	if err != nil {
		return nil, fmt.Errorf("--state %s: %w", path, err)
	}
	if len(removed) > 0 {
		log.Info("removed temporary files a crash left", "files", removed)
	}
	sf, exists, err := readSnapshotFile(path)
	if err != nil {
		return nil, fmt.Errorf("--state %s: not a hostemu state file: %w", path, err)
	}
	logBytes, err := os.ReadFile(p.logPath)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("--state %s: %w", p.logPath, err)
	}
	lc := parseLog(logBytes, sf.LogSeq)
	switch {
	case !exists && len(logBytes) > 0:
		log.Warn("a change log without its state file: ignored", "file", p.logPath)
		lc = logContents{}
	case exists:
		snap := state.Replay(sf.Snapshot, lc.changes)
		// the URLs where this process's edge is: the one that wrote them may have had
		// another port (the default's fallback when 4743 was taken, or another --tls-addr)
		if n := state.RehomeURLs(&snap, w.EdgeDomain(), w.URLForm()); n > 0 {
			log.Info("deployment URLs moved to this process's edge", "deployments", n, "form", w.URLForm().String())
		}
		if err := w.Import(snap); err != nil {
			return nil, fmt.Errorf("--state %s: %w", path, err)
		}
		log.Info("state loaded", "file", path, "replayed_changes", len(lc.changes), "torn_tail_bytes", int64(len(logBytes))-lc.good)
	}
	p.fileBase, p.storeBase = max(sf.LogSeq, lc.last), w.Changes()
	p.durable = p.storeBase
	p.snapSeq = sf.LogSeq
	if st, err := os.Stat(path); err == nil {
		p.snapSize = st.Size()
	}
	if !exists || len(lc.changes) > 0 {
		snap, seq := w.ExportSeq()
		if err := p.writeSnapshot(&snap, p.fileSeq(seq)); err != nil {
			return nil, fmt.Errorf("--state %s: %w", path, err)
		}
	}
	// the log holds what the state does (minted tokens included): 0600, like the state,
	// also when an older hostemu made it 0644
	if p.f, err = os.OpenFile(p.logPath, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600); err != nil {
		return nil, fmt.Errorf("--state %s: %w", p.logPath, err)
	}
	if err := p.f.Chmod(0o600); err != nil {
		p.f.Close()
		return nil, fmt.Errorf("--state %s: %w", p.logPath, err)
	}
	if len(logBytes) > 0 { // everything in it is in the snapshot now, or torn
		if err := p.truncate(); err != nil {
			p.f.Close()
			return nil, fmt.Errorf("--state %s: %w", p.logPath, err)
		}
	}
	w.SetChangeLog(p)
	return p, nil
}

func (p *Persister) fileSeq(changes uint64) uint64 { return p.fileBase + changes - p.storeBase }

// Record queues a change for the writer. It runs under the state's lock: it only
// appends to a queue, and never waits for the writer.
func (p *Persister) Record(c state.Change) {
	p.mu.Lock()
	p.pending = append(p.pending, c)
	p.mu.Unlock()
	p.poke()
}

func (p *Persister) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// WaitDurable returns once the changes up to seq are synced to disk.
func (p *Persister) WaitDurable(ctx context.Context, seq uint64) error {
	for {
		ch := p.advanced.Next()
		p.mu.Lock()
		durable, err := p.durable, p.err
		p.mu.Unlock()
		switch {
		case durable >= seq:
			return nil
		case err != nil:
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// publish moves the durable mark (or sets the error) and wakes the waiters.
func (p *Persister) publish(durable uint64, err error) {
	p.mu.Lock()
	if err != nil && p.err == nil {
		p.err = err
	}
	p.durable = max(p.durable, durable)
	p.mu.Unlock()
	p.advanced.Notify()
}

// Run is the writer: each time changes are queued it appends them all, syncs once,
// and then answers every request waiting for them.
func (p *Persister) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
			p.flush()
		case done := <-p.barrier:
			p.flush()
			close(done)
		}
	}
}

// flush writes the queued changes, then cuts the log after a compaction, or starts
// one when the log has grown past its bound.
func (p *Persister) flush() {
	p.mu.Lock()
	batch, failed, trimTo := p.pending, p.err, p.trimTo
	p.pending, p.spare, p.trimTo = p.spare, nil, 0
	p.mu.Unlock()
	defer func() {
		// the batch's array queues the changes after the next batch's: no queue grown
		// from nothing a batch (a burst's is not kept); cleared, so that it holds no
		// deployment it wrote
		if cap(batch) <= maxSpare {
			clear(batch)
			p.spare = batch[:0]
		}
	}()
	if failed != nil {
		return
	}
	if len(batch) > 0 {
		if err := p.append(batch); err != nil {
			p.log.Error("writing the --state change log failed; writes are no longer acknowledged", "file", p.logPath, "err", err)
			p.publish(0, err)
			return
		}
	}
	// A compaction is registered (done) before the writes that made it due are
	// acknowledged, so that whoever saw them acknowledged can wait for it. With a cut
	// pending the log is about to shrink: the next flush decides.
	p.mu.Lock()
	start := trimTo == 0 && !p.compacting && p.size > max(p.compactAt, p.SnapshotSize())
	p.compacting = p.compacting || start
	p.mu.Unlock()
	if start {
		p.done.Add(1)
	}
	if len(batch) > 0 {
		p.publish(batch[len(batch)-1].Seq, nil)
	}
	if trimTo != 0 {
		if err := p.trim(trimTo); err != nil {
			p.log.Error("cutting the --state change log failed", "file", p.logPath, "err", err)
		}
	}
	if start {
		go p.compact()
	}
}

// SnapshotSize is the size of the last snapshot written, which bounds the log with
// compactMin.
func (p *Persister) SnapshotSize() int64 {
	p.snapMu.Lock()
	defer p.snapMu.Unlock()
	return p.snapSize
}

// append writes batch's records and syncs them. A whole-state load in the batch is
// written as a snapshot instead, and empties the log: what came before it is gone.
func (p *Persister) append(batch []state.Change) error {
	p.buf = p.buf[:0]
	var last uint64
	for i := range batch {
		c := &batch[i]
		seq := p.fileSeq(c.Seq)
		if c.Load != nil {
			if err := p.writeSnapshot(c.Load, seq); err != nil {
				return err
			}
			if err := p.truncate(); err != nil {
				return err
			}
			p.buf = p.buf[:0]
			continue
		}
		var err error
		if p.buf, err = AppendRecord(p.buf, seq, c); err != nil {
			return err
		}
		last = seq
	}
	if len(p.buf) == 0 {
		return nil
	}
	if _, err := p.f.Write(p.buf); err != nil {
		return err
	}
	if err := p.f.Sync(); err != nil {
		return err
	}
	p.size += int64(len(p.buf))
	p.marks = append(p.marks, logMark{seq: last, off: p.size})
	if cap(p.buf) > 4<<20 {
		p.buf = nil // a burst's buffer is not worth keeping
	}
	return nil
}

// truncate empties the log: a snapshot holds all it held.
func (p *Persister) truncate() error {
	if err := p.f.Truncate(0); err != nil {
		return err
	}
	p.size, p.marks = 0, nil
	return p.f.Sync()
}

// compact writes a snapshot of the world as it is now, beside the writer, which keeps
// appending; the writer then cuts the log (trim). Exporting holds the state's read lock
// for the copy only; encoding and writing hold nothing.
func (p *Persister) compact() {
	defer p.done.Done()
	snap, changes := p.world.ExportSeq()
	seq := p.fileSeq(changes)
	err := p.writeSnapshot(&snap, seq)
	p.mu.Lock()
	p.compacting = false
	if err == nil {
		p.trimTo = seq
	}
	p.mu.Unlock()
	if err != nil {
		p.log.Error("compacting the --state change log failed", "file", p.path, "err", err)
		return
	}
	p.poke()
}

// writeSnapshot replaces FILE with snap, the state after record seq, unless a newer
// snapshot is already there.
func (p *Persister) writeSnapshot(snap *state.Snapshot, seq uint64) error {
	p.snapMu.Lock()
	defer p.snapMu.Unlock()
	if seq < p.snapSeq {
		return nil
	}
	var n int64
	err := writeAtomic(p.path, func(w io.Writer) error {
		cw := &countingWriter{w: w}
		err := encodeSnapshot(cw, snap, seq)
		n = cw.n
		return err
	})
	if err != nil {
		return err
	}
	p.snapSeq, p.snapSize = seq, n
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// trim cuts from the log the batches a snapshot up to seq includes: the rest is
// copied to a new log that replaces it. A batch that straddles seq is kept (replay
// skips the records the snapshot has).
func (p *Persister) trim(seq uint64) error {
	k := 0
	for k < len(p.marks) && p.marks[k].seq <= seq {
		k++
	}
	if k == 0 {
		return nil
	}
	off := p.marks[k-1].off
	if off == p.size {
		return p.truncate()
	}
	tail := make([]byte, p.size-off)
	if _, err := p.f.ReadAt(tail, off); err != nil {
		return err
	}
	if err := writeAtomic(p.logPath, func(w io.Writer) error { _, err := w.Write(tail); return err }); err != nil {
		return err
	}
	f, err := os.OpenFile(p.logPath, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	p.f.Close()
	p.f = f
	p.size -= off
	p.marks = p.marks[k:]
	for i := range p.marks {
		p.marks[i].off -= off
	}
	return nil
}

// Close writes what is queued, waits for a compaction in flight, and leaves FILE
// holding the whole state (a fresh snapshot when the log is not empty) and the log
// empty. Call it after the world stopped changing.
func (p *Persister) Close() error {
	p.flush()
	p.done.Wait()
	p.flush() // the cut after that compaction
	p.mu.Lock()
	err := p.err
	p.mu.Unlock()
	if err == nil && p.size > 0 {
		snap, changes := p.world.ExportSeq()
		if err = p.writeSnapshot(&snap, p.fileSeq(changes)); err == nil {
			err = p.truncate()
		}
	}
	p.publish(0, errLogClosed)
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Settle waits until the writer is idle: no compaction in flight, no cut of the log
// pending, and the last flush found no compaction due (the log is within its bound).
// Each round waits for the compactions registered, then has the writer flush once. For
// tests.
func (p *Persister) Settle() {
	for {
		p.done.Wait()
		done := make(chan struct{})
		p.barrier <- done
		<-done
		p.mu.Lock()
		idle := !p.compacting && p.trimTo == 0 && len(p.pending) == 0
		p.mu.Unlock()
		if idle {
			return
		}
	}
}

// Compact writes a snapshot now, as a grown log would, and returns when it is written.
// For benchmarks.
func (p *Persister) Compact() {
	p.done.Add(1)
	p.compact()
}
