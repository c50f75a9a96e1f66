// Package bundle reads and writes failure bundles: one gzipped tar archive holding a
// world at one moment — its state, faults, journal, recent events, scenarios and the
// uploaded files its deployments reference — so that a failed CI test's world can be
// opened on a laptop (PUT /_emulator/bundle, hostemu replay).
//
// Write streams the archive; Read validates all of it before returning anything, within
// bounds on every member and on the whole, and never trusts a member's name: anything
// but the members below is refused, paths that could escape included.
package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/events"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/strictjson"
)

// Format is the version of the archive's layout this hostemu writes and the newest it
// reads.
const Format = 1

// Bounds.
const (
	// DefaultMaxBytes bounds what a bundle may unpack to, all members together.
	DefaultMaxBytes = 512 << 20
	// DefaultFilesBytes bounds the uploaded contents a bundle carries under files/;
	// files beyond it are listed in the manifest as omitted (state.json holds every
	// upload in any case).
	DefaultFilesBytes = 16 << 20
	// maxMembers bounds the members of an archive.
	maxMembers = 100_000
	// Bounds of each member but state.json (--max-state-bytes): a bundle written by
	// hostemu stays far below them.
	maxManifest   = 1 << 20
	maxFaults     = 8 << 20
	maxLifecycles = 32 << 20
	maxJournal    = 64 << 20
	maxEvents     = 8 << 20
	maxScenario   = 1 << 20
	maxCoverage   = 1 << 20
	maxFile       = 64 << 20
	maxFiles      = 64 << 20 // files/ together
	// MaxFailure bounds failure.txt, the message of the failed test a testkit
	// wrote the bundle for (POST /_emulator/bundle's failure).
	MaxFailure = 64 << 10
	// maxScenarios bounds the scenarios/ members, maxName a member's name.
	maxScenarios = 64
	maxName      = 255
	// maxLine bounds one line of journal.ndjson or events.ndjson.
	maxLine = 1 << 20
	// maxHeaderBytes bounds what an archive's headers take a member, on average: a
	// 512-byte header, and a PAX header of a few records (the members hostemu writes
	// have one, for their modification time's milliseconds).
	maxHeaderBytes = 4 << 10
	// DefaultJournalKeep is how many journal entries Read keeps when ReadOptions
	// does not say (the newest).
	DefaultJournalKeep = 100_000
)

// memberLimit is the bound of a member's size.
func memberLimit(name string) int64 {
	switch {
	case name == ManifestName:
		return maxManifest
	case name == FaultsName:
		return maxFaults
	case name == LifecyclesName:
		return maxLifecycles
	case name == JournalName:
		return maxJournal
	case name == EventsName:
		return maxEvents
	case name == CoverageName:
		return maxCoverage
	case name == FailureName:
		return MaxFailure
	case strings.HasPrefix(name, scenariosDir):
		return maxScenario
	}
	return maxFile
}

// The members.
const (
	ManifestName   = "manifest.json"
	StateName      = "state.json"
	FaultsName     = "faults.json"
	LifecyclesName = "lifecycles.json"
	JournalName    = "journal.ndjson"
	EventsName     = "events.ndjson"
	CoverageName   = "coverage.json"
	FailureName    = "failure.txt"
	scenariosDir   = "scenarios/"
	filesDir       = "files/"
)

// Manifest is manifest.json: what wrote the bundle, when, of which world, and the
// options that shape its answers.
type Manifest struct {
	Format         int       `json:"format"`
	HostemuVersion string    `json:"hostemu_version"`
	CreatedAt      time.Time `json:"created_at"`
	// Namespace is the world's namespace id ("ns_…"), "" for the default world.
	Namespace   string   `json:"namespace"`
	Seed        int64    `json:"seed"`
	Scenario    string   `json:"scenario"`
	Clock       Clock    `json:"clock"`
	RateLimits  string   `json:"rate_limits"` // "on" or "off" (--rate-limits)
	EdgeDomain  string   `json:"edge_domain"`
	CORSOrigins []string `json:"cors_origins"`
	// IDDice is the position of the world's id source (base64 in JSON).
	IDDice  []byte `json:"id_dice"`
	Files   Files  `json:"files"`
	Journal int    `json:"journal_entries"`
	Events  int    `json:"events"`
}

// Clock is the world's clock: its mode, emulated time, and a manual clock's start.
type Clock struct {
	Mode  string     `json:"mode"`
	Now   time.Time  `json:"now"`
	Start *time.Time `json:"start"`
}

// Files says which uploaded contents the bundle carries under files/.
type Files struct {
	Included int       `json:"included"`
	Bytes    int64     `json:"bytes"`
	Bound    int64     `json:"bound"`
	Omitted  []Omitted `json:"omitted"`
}

// Omitted is an uploaded content a deployment references that the bundle left out.
type Omitted struct {
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"`
}

// Bundle is a whole bundle.
type Bundle struct {
	Manifest   Manifest
	State      state.Snapshot
	Faults     fault.Saved
	Lifecycles map[string]time.Time
	Journal    []journal.Entry
	Events     []events.Recorded
	// Scenarios are the YAML sources of the scenarios the world knew, by name.
	Scenarios map[string][]byte
	// Files are uploaded contents by SHA-256 (hex), for Write. Read checks each
	// against its name and keeps the name with no contents: state.json holds every
	// upload.
	Files map[string][]byte
	// Coverage is the world's coverage when the bundle was taken (coverage.json), nil
	// in a bundle written before it was carried.
	Coverage *coverage.Report
	// Failure is why the test the bundle was written for failed (failure.txt, at most
	// MaxFailure bytes of UTF-8), "" when no failure was given.
	Failure string

	// read counts what Read found, for the manifest's counts to be checked against
	read struct {
		journal, events int
		fileBytes       int64
	}
}

// namespaceID reports whether s has the form of a namespace id, ^ns_[a-z0-9]{1,40}$.
func namespaceID(s string) bool {
	id, ok := strings.CutPrefix(s, "ns_")
	if !ok || len(id) < 1 || len(id) > 40 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Error is what is wrong with an archive, worded for its user.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func problem(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }

// Write writes b as a gzipped tar archive to w, member by member: state.json is encoded
// once, compressed as it is, into a temporary file (its size goes first in the archive)
// rather than held whole.
// Manifest.Files is filled from b.Files and filesBound; a referenced file over the
// bound is left out and listed.
func Write(w io.Writer, b *Bundle, filesBound int64) error {
	m := b.Manifest
	m.Format = Format
	m.Journal, m.Events = len(b.Journal), len(b.Events)
	m.Files = Files{Bound: filesBound, Omitted: []Omitted{}}
	digests := slices.Sorted(maps.Keys(b.Files))
	var keep []string
	for _, d := range digests {
		n := int64(len(b.Files[d]))
		if m.Files.Bytes+n > filesBound {
			m.Files.Omitted = append(m.Files.Omitted, Omitted{SHA256: d, Bytes: n, Reason: fmt.Sprintf("over the bundle's bound of %d bytes of files", filesBound)})
			continue
		}
		m.Files.Bytes += n
		keep = append(keep, d)
	}
	m.Files.Included = len(keep)

	// The archive is a run of gzip members, which read as one stream: the first ends
	// after state.json's tar header, then come state.json's text in blocks (blocks.go),
	// compressed as it is encoded (two goroutines) into a temporary file — its size
	// must come first in the archive, and the text of a big world is not held in
	// memory — and the last holds the rest. Under the tar writer, mid is where its
	// bytes go: while the tar counts state.json's bytes through, they go nowhere, the
	// blocks being them.
	mid := &switchWriter{}
	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed) // a valid level
	mid.w = gz
	tw := tar.NewWriter(mid)
	mod := m.CreatedAt
	put := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: mod, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := put(ManifestName, append(manifest, '\n')); err != nil {
		return err
	}
	tmp, err := os.CreateTemp("", "hostemu-bundle-state-*.json.gz")
	if err != nil {
		return err
	}
	defer func() { tmp.Close(); os.Remove(tmp.Name()) }()
	size, err := compressState(tmp, &b.State)
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: StateName, Mode: 0o644, Size: size, ModTime: mod, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return err
	}
	if err := gz.Close(); err != nil { // the first member
		return err
	}
	mid.w = io.Discard
	if err := countThrough(tw, size); err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.CopyBuffer(w, tmp, make([]byte, 256<<10)); err != nil { // the second
		return err
	}
	gz.Reset(w) // the third: the tar's padding after state.json, and the rest
	mid.w = gz
	faults, err := json.MarshalIndent(b.Faults, "", "  ")
	if err != nil {
		return err
	}
	if err := put(FaultsName, append(faults, '\n')); err != nil {
		return err
	}
	lifecycles := b.Lifecycles
	if lifecycles == nil {
		lifecycles = map[string]time.Time{}
	}
	lc, err := json.MarshalIndent(lifecycles, "", "  ") // keys sorted
	if err != nil {
		return err
	}
	if err := put(LifecyclesName, append(lc, '\n')); err != nil {
		return err
	}
	if err := put(JournalName, ndjson(b.Journal)); err != nil {
		return err
	}
	if err := put(EventsName, ndjson(b.Events)); err != nil {
		return err
	}
	if b.Coverage != nil {
		cov, err := json.MarshalIndent(b.Coverage, "", "  ")
		if err != nil {
			return err
		}
		if err := put(CoverageName, append(cov, '\n')); err != nil {
			return err
		}
	}
	if b.Failure != "" {
		if err := put(FailureName, []byte(b.Failure)); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.Scenarios)) {
		if err := put(scenariosDir+name+".yaml", b.Scenarios[name]); err != nil {
			return err
		}
	}
	for _, d := range keep {
		if err := put(filesDir+d, b.Files[d]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// members reads an archive's gzip members one after the other as one stream (the
// archive Write writes is three). What follows a member and is not one is
// *afterMembers: refused inside the tar, let be after its end.
//
// Every member is inflated beside its reader: a member of its own (ahead) on a
// goroutine, the blocks of state.json (blocks) several at once, oldest first, on
// inflater goroutines and by the reader, read where they were inflated. Stop ends the
// goroutine of the member being read and waits for it; whoever owns the reader under
// br may then use or close it.
type members struct {
	br *bufio.Reader
	gz *gzip.Reader
	// ahead, when not nil, is gz being read on a goroutine ahead of its reader: the
	// member begun last, up to its end (and not a byte of br beyond it)
	ahead *aheadReader
	// blocks, when not nil, reads the blocks that came after the last member (see
	// blocks.go), several inflated at once
	blocks *blocks
}

// newMembers reads the members from br, the first one's header read by gz.
func newMembers(br *bufio.Reader, gz *gzip.Reader) *members {
	gz.Multistream(false) // members reads them one by one
	return &members{br: br, gz: gz, ahead: newAheadReader(gz)}
}

func (m *members) Read(p []byte) (int, error) {
	for {
		if m.blocks != nil {
			n, err := m.blocks.Read(p)
			if err != io.EOF {
				return n, err
			}
			m.blocks = nil // over: what follows is read as any member
		} else if m.ahead != nil {
			n, err := m.ahead.Read(p)
			if n > 0 || err != io.EOF {
				return n, err
			}
			// the member's end: its goroutine is over, done with br
			m.ahead.Stop()
			m.ahead = nil
		}
		if blockDataLen(m.br) >= 0 {
			m.blocks = &blocks{br: m.br, more: true}
			continue
		}
		if err := m.gz.Reset(m.br); err != nil {
			if err == io.EOF {
				return 0, io.EOF
			}
			return 0, &afterMembers{err}
		}
		m.gz.Multistream(false)
		m.ahead = newAheadReader(m.gz)
	}
}

// Stop ends the goroutine of the member being read, if any, and waits for it.
func (m *members) Stop() {
	if m.ahead != nil {
		m.ahead.Stop()
	}
}

// errExpands is countedReader's error past its bound.
var errExpands = errors.New("the archive expands past its bound")

// countedReader counts the bytes read through it, and fails with errExpands once left
// are read.
type countedReader struct {
	r    io.Reader
	read int64
	left int64
}

func (c *countedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errExpands
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.read += int64(n)
	c.left -= int64(n)
	return n, err
}

// afterMembers is what members says of bytes after a member that are not one.
type afterMembers struct{ err error }

func (e *afterMembers) Error() string {
	return fmt.Sprintf("what follows a gzip member is not one (%v)", gzipErr(e.err))
}

// switchWriter writes to w, which its owner changes between writes.
type switchWriter struct{ w io.Writer }

func (s *switchWriter) Write(p []byte) (int, error) { return s.w.Write(p) }

// compressState writes snap's JSON to f as gzip members of its own (blocks: see
// blocks.go), compressing on one goroutine while encoding on another, and returns the
// JSON's length.
func compressState(f *os.File, snap *state.Snapshot) (int64, error) {
	fw := bufio.NewWriterSize(f, 256<<10)
	behind := newBehindWriter(newBlockWriter(fw)) // hands on chunks of blockSize bytes
	err := state.WriteSnapshot(behind, snap, "")
	if cerr := behind.Close(); err == nil || errors.Is(err, errBehind) {
		err = cerr
	}
	if err == nil {
		err = fw.Flush()
	}
	return behind.n, err
}

// countThrough writes n zero bytes to tw: the tar writer counts a member's bytes as
// they pass, and these go nowhere (see Write).
func countThrough(tw *tar.Writer, n int64) error {
	zeros := make([]byte, 256<<10)
	for n > 0 {
		k := int64(len(zeros))
		if n < k {
			k = n
		}
		if _, err := tw.Write(zeros[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

func ndjson[T any](items []T) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range items {
		enc.Encode(&items[i]) // plain data: always encodes
	}
	return buf.Bytes()
}

// ReadOptions bound and shape Read.
type ReadOptions struct {
	// MaxBytes bounds what the archive unpacks to, all members together
	// (DefaultMaxBytes when 0).
	MaxBytes int64
	// StateMax bounds state.json (MaxBytes when 0).
	StateMax int64
	// Charge is asked for each state element's decoded size (state.ReadOptions).
	Charge func(int64) bool
	// JSONError words a JSON decoding error of state.json (nil: strictjson.Words, as
	// the other members' errors are worded; hostemu replay reads so).
	JSONError func(error) error
	// Version is this hostemu's version, named when a bundle is too new.
	Version string
	// JournalKeep is how many of the journal's entries to keep, the newest
	// (DefaultJournalKeep when 0): the journal that takes them keeps no more.
	JournalKeep int
}

func (o ReadOptions) journalKeep() int {
	if o.JournalKeep > 0 {
		return o.JournalKeep
	}
	return DefaultJournalKeep
}

// Read reads and checks a whole bundle from r (gzipped tar). Every problem is an
// *Error naming the member and what is wrong: not gzip, truncated, a member that is not
// a bundle's (or a path that could escape the archive), one twice, one over its bound,
// a manifest missing, of a newer format or malformed, a state, fault, journal line or
// event that does not decode, a file whose bytes do not hash to its name.
func Read(r io.Reader, opt ReadOptions) (*Bundle, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.StateMax <= 0 {
		opt.StateMax = opt.MaxBytes
	}
	br := bufio.NewReaderSize(r, 64<<10)
	gz, err := gzip.NewReader(br)
	if err != nil {
		return nil, problem("not a failure bundle: the body is not gzip (%v); a bundle is what GET /_emulator/bundle answers", gzipErr(err))
	}
	// decompressed on goroutines beside the decoding of what they give; stopped (and
	// waited for) before Read returns, whoever owns r may then close it
	unzipped := newMembers(br, gz)
	defer unzipped.Stop()
	left := opt.MaxBytes
	// every byte the tar reader takes is counted, headers included: archive/tar reads
	// a PAX extended header or a GNU long name (up to 1 MiB each) itself, before Next
	// returns, so the members' sizes alone do not bound what the archive expands to
	raw := &countedReader{r: unzipped, left: opt.MaxBytes}
	tr := tar.NewReader(raw)
	var content int64 // the members' bytes so far, padding included
	b := &Bundle{Scenarios: map[string][]byte{}, Files: map[string][]byte{}}
	seen := map[string]bool{}
	members := 0
	filesLeft := int64(maxFiles)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, errExpands) {
			return nil, problem("the archive unpacks to more than its bound of %d bytes, headers included", opt.MaxBytes)
		}
		if err != nil {
			return nil, problem("the archive is truncated or not a tar archive: %v", gzipErr(err))
		}
		members++
		if meta := raw.read - content; meta > int64(members)*maxHeaderBytes {
			return nil, problem("the archive's headers take %d bytes for %d members, over %d a member (PAX records or long names a bundle does not have)", meta, members, maxHeaderBytes)
		}
		if members > maxMembers {
			return nil, problem("the archive has more than %d members", maxMembers)
		}
		name := h.Name
		if err := checkName(name, h.Typeflag); err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, problem("%s is in the archive twice", name)
		}
		seen[name] = true
		if h.Size > left {
			return nil, problem("the archive unpacks to more than its bound of %d bytes (%s alone is %d bytes)", opt.MaxBytes, name, h.Size)
		}
		left -= h.Size
		if strings.HasPrefix(name, filesDir) {
			if filesLeft -= h.Size; filesLeft < 0 {
				return nil, problem("files/ holds more than %d bytes together", maxFiles)
			}
		}
		if err := b.member(name, h.Size, tr, opt); err != nil {
			if errors.Is(err, errExpands) {
				return nil, problem("the archive unpacks to more than its bound of %d bytes, headers included", opt.MaxBytes)
			}
			return nil, err
		}
		content += (h.Size + 511) &^ 511
	}
	// the rest of the gzip stream: a bundle cut after the tar's end is still truncated;
	// bytes after the last member that are not gzip are let be, as gzip lets them be
	var after *afterMembers
	if _, err := io.Copy(io.Discard, io.LimitReader(unzipped, 1<<20)); err != nil && !errors.As(err, &after) {
		return nil, problem("the archive is truncated: %v", gzipErr(err))
	}
	if !seen[ManifestName] {
		return nil, problem("the archive has no manifest.json: it is not a failure bundle")
	}
	for _, need := range []string{StateName, FaultsName, JournalName, EventsName} {
		if !seen[need] {
			return nil, problem("the archive has no %s", need)
		}
	}
	if b.Lifecycles == nil {
		b.Lifecycles = map[string]time.Time{}
	}
	if _, ok := b.Scenarios[b.Manifest.Scenario]; !ok {
		return nil, problem("manifest.json names the scenario %q, but the archive has no scenarios/%s.yaml", b.Manifest.Scenario, b.Manifest.Scenario)
	}
	if err := b.checkCounts(); err != nil {
		return nil, err
	}
	return b, nil
}

// checkCounts holds the manifest's counts to the members: a count that lies (or is
// negative) is refused rather than believed by whoever reads the manifest.
func (b *Bundle) checkCounts() error {
	m := &b.Manifest
	f := &m.Files
	switch {
	case m.Journal != b.read.journal:
		return problem("manifest.json: journal_entries is %d, but journal.ndjson holds %d entries", m.Journal, b.read.journal)
	case m.Events != b.read.events:
		return problem("manifest.json: events is %d, but events.ndjson holds %d events", m.Events, b.read.events)
	case f.Included != len(b.Files):
		return problem("manifest.json: files.included is %d, but the archive holds %d files", f.Included, len(b.Files))
	case f.Bytes != b.read.fileBytes:
		return problem("manifest.json: files.bytes is %d, but the archive's files hold %d bytes", f.Bytes, b.read.fileBytes)
	case f.Bound < 0:
		return problem("manifest.json: files.bound is %d: want 0 or more", f.Bound)
	}
	for i, o := range f.Omitted {
		if o.Bytes < 0 || !state.ValidFileHash(o.SHA256) || len(o.Reason) > maxName {
			return problem("manifest.json: files.omitted[%d] is not a sha256, 0 or more bytes and a reason of at most %d bytes", i, maxName)
		}
	}
	return nil
}

// gzipErr words the errors of a cut-off stream.
func gzipErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("unexpected end of data")
	}
	return err
}

// checkName refuses members that are not a bundle's: a bundle's names are fixed, and a
// path that could escape the directory the archive is unpacked in (.., an absolute
// path, a link, a device) is refused before anything else.
func checkName(name string, typ byte) error {
	if len(name) > maxName {
		return problem("the archive holds a member whose name is %d bytes long, over %d: not a bundle's", len(name), maxName)
	}
	if strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || slices.Contains(strings.Split(name, "/"), "..") || path.Clean(name) != name {
		return problem("the archive holds %q, a path that escapes the archive or is not clean: refused", name)
	}
	if typ != tar.TypeReg {
		return problem("the archive holds %q, which is not a regular file (links and devices are refused)", name)
	}
	switch name {
	case ManifestName, StateName, FaultsName, LifecyclesName, JournalName, EventsName, CoverageName, FailureName:
		return nil
	}
	if s, ok := strings.CutPrefix(name, scenariosDir); ok && strings.HasSuffix(s, ".yaml") && !strings.Contains(s, "/") && len(s) > len(".yaml") {
		return nil
	}
	if s, ok := strings.CutPrefix(name, filesDir); ok && state.ValidFileHash(s) {
		return nil
	}
	return problem("the archive holds %q, which is not a member of a failure bundle (manifest.json, state.json, faults.json, lifecycles.json, journal.ndjson, events.ndjson, coverage.json, failure.txt, scenarios/<name>.yaml, files/<sha256>)", name)
}

// member reads one member into b.
func (b *Bundle) member(name string, size int64, r io.Reader, opt ReadOptions) error {
	if name == StateName {
		if size > opt.StateMax {
			return problem("state.json is %d bytes, over the bound of %d (--max-state-bytes)", size, opt.StateMax)
		}
		jsonError := opt.JSONError
		if jsonError == nil {
			jsonError = strictjson.Worded
		}
		snap, err := state.ReadSnapshot(r, state.ReadOptions{Max: opt.StateMax, Charge: opt.Charge, JSONError: jsonError})
		if err != nil {
			if errors.Is(err, state.ErrRefused) {
				return err // the caller's budget said no: not the bundle's fault
			}
			return problem("state.json: %v", err)
		}
		b.State = snap
		io.Copy(io.Discard, r) // trailing whitespace
		return nil
	}
	if limit := memberLimit(name); size > limit {
		return problem("%s is %d bytes, over the bound of %d", name, size, limit)
	}
	r = io.LimitReader(r, size)
	switch {
	case name == JournalName:
		return b.readJournal(r, opt.journalKeep())
	case name == EventsName:
		return b.readEvents(r)
	case strings.HasPrefix(name, filesDir):
		// checked as it streams, and not kept: state.json holds every upload, and the
		// files are there to be read from the archive
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			return problem("the archive is truncated in %s: %v", name, gzipErr(err))
		}
		digest := strings.TrimPrefix(name, filesDir)
		if got := hex.EncodeToString(h.Sum(nil)); got != digest {
			return problem("%s: its bytes hash to %s", name, got)
		}
		b.Files[digest] = nil
		b.read.fileBytes += size
		return nil
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return problem("the archive is truncated in %s: %v", name, gzipErr(err))
	}
	switch {
	case name == ManifestName:
		return b.manifest(data, opt.Version)
	case name == FaultsName:
		if err := strict(data, &b.Faults); err != nil {
			return problem("faults.json: %v", err)
		}
	case name == LifecyclesName:
		if err := strict(data, &b.Lifecycles); err != nil {
			return problem("lifecycles.json: %v", err)
		}
	case name == CoverageName:
		var r coverage.Report
		if err := strict(data, &r); err != nil {
			return problem("coverage.json: %v", err)
		}
		if err := checkCoverage(r); err != nil {
			return problem("coverage.json: %v", err)
		}
		b.Coverage = &r
	case name == FailureName:
		if !utf8.Valid(data) {
			return problem("failure.txt is not UTF-8 text")
		}
		b.Failure = string(data)
	case strings.HasPrefix(name, scenariosDir):
		if len(b.Scenarios) >= maxScenarios {
			return problem("the archive holds more than %d scenarios", maxScenarios)
		}
		b.Scenarios[strings.TrimSuffix(strings.TrimPrefix(name, scenariosDir), ".yaml")] = data
	}
	return nil
}

// checkCoverage refuses counts a counter cannot have had.
func checkCoverage(r coverage.Report) error {
	for _, o := range r.Operations {
		if o.Seen < 0 {
			return fmt.Errorf("%s %s: seen %d is negative", o.Method, o.Path, o.Seen)
		}
		for _, a := range o.Responses {
			if a.Seen < 0 {
				return fmt.Errorf("%s %s %d: seen %d is negative", o.Method, o.Path, a.Status, a.Seen)
			}
		}
	}
	for _, t := range r.Transitions {
		if t.Seen < 0 {
			return fmt.Errorf("%s %s → %s: seen %d is negative", t.Resource, t.From, t.To, t.Seen)
		}
	}
	for _, f := range r.Faults {
		if f.Seen < 0 {
			return fmt.Errorf("fault %s: seen %d is negative", f.Action, f.Seen)
		}
	}
	if r.OtherUndocumented < 0 {
		return fmt.Errorf("other_undocumented %d is negative", r.OtherUndocumented)
	}
	return nil
}

type recordedJSON struct {
	Seq  uint64          `json:"seq"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

func (b *Bundle) manifest(data []byte, version string) error {
	var probe struct {
		Format         *int   `json:"format"`
		HostemuVersion string `json:"hostemu_version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) {
			return problem("manifest.json is not JSON: %v", err)
		}
		return problem("manifest.json: %s", strictjson.Words(err)) // {"format":"1"}
	}
	if probe.Format == nil {
		return problem("manifest.json has no format: it is not a failure bundle's")
	}
	if *probe.Format > Format {
		return problem("the bundle is of format %d, written by hostemu %s; this hostemu (%s) reads format %d and older: replay it with hostemu %s or newer",
			*probe.Format, orUnknown(probe.HostemuVersion), orUnknown(version), Format, orUnknown(probe.HostemuVersion))
	}
	if *probe.Format < 1 {
		return problem("manifest.json: format %d is not a bundle format", *probe.Format)
	}
	if err := strict(data, &b.Manifest); err != nil {
		return problem("manifest.json: %v", err)
	}
	m := &b.Manifest
	switch {
	case m.Scenario == "":
		return problem("manifest.json: scenario is empty")
	case !validClockMode(m.Clock.Mode):
		return problem("manifest.json: clock.mode %q: want %s", m.Clock.Mode, clock.Modes)
	case m.Clock.Now.IsZero():
		return problem("manifest.json: clock.now is missing")
	case m.RateLimits != "on" && m.RateLimits != "off":
		return problem("manifest.json: rate_limits %q: want on or off", m.RateLimits)
	case m.Namespace != "" && !namespaceID(m.Namespace):
		return problem("manifest.json: namespace %.80q is not a namespace id (ns_ and up to 40 lower-case letters and digits)", m.Namespace)
	case len(m.HostemuVersion) > 128:
		return problem("manifest.json: hostemu_version is %d bytes long, over 128", len(m.HostemuVersion))
	case len(m.Scenario) > maxName:
		return problem("manifest.json: scenario is %d bytes long, over %d", len(m.Scenario), maxName)
	}
	return nil
}

func orUnknown(v string) string {
	if v == "" {
		return "(unknown version)"
	}
	return v
}

// strict decodes one JSON value refusing unknown keys and anything after it. A value
// refused is named by its key and place, as the state and the control API name it
// (strictjson's words: `field "seed" must be a number, not string`, `key "now" in clock:
// "x" is not an RFC 3339 time …`), never encoding/json's ("cannot unmarshal string
// into Go struct field Manifest.seed of type int64").
func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return strictjson.Worded(strictjson.Explain(data, v, "", err))
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// eachLine calls fn with each non-blank line of r (at most maxLine bytes) and its
// number, holding one line at a time.
func eachLine(r io.Reader, fn func(n int, line []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// a line longer than the buffer: copied out before the next read reuses it
			long := append(make([]byte, 0, 2*len(line)), line...)
			for errors.Is(err, bufio.ErrBufferFull) && len(long) <= maxLine {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > maxLine {
			return fmt.Errorf("line %d is over %d bytes", n, maxLine)
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("the archive is truncated: %v", gzipErr(err))
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := fn(n, line); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readJournal reads journal.ndjson: entries numbered from 1 and rising, of which the
// newest keep are kept (a ring: the memory is keep entries, whatever the member holds).
func (b *Bundle) readJournal(r io.Reader, keep int) error {
	ring := newestOf[journal.Entry](keep)
	var last uint64
	err := eachLine(r, func(n int, line []byte) error {
		var e journal.Entry
		if err := strict(line, &e); err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		if e.Seq == 0 || e.Seq <= last {
			return fmt.Errorf("line %d: seq %d does not follow %d (entries are numbered from 1, rising)", n, e.Seq, last)
		}
		last = e.Seq
		ring.add(e)
		b.read.journal++
		return nil
	})
	if err != nil {
		return problem("journal.ndjson: %v", err)
	}
	b.Journal = ring.list()
	return nil
}

// knownEvents are the event types a world remembers.
var knownEvents = map[string]bool{"deployment": true, "domain": true, "journal": true, "fault": true, "clock": true, "scenario": true, "token": true, "reset": true}

// maxEventsKept is how many events Read keeps, the newest: as many as a world remembers.
const maxEventsKept = 1000

// readEvents reads events.ndjson: events numbered from 1 and rising, of the types a
// world remembers, the newest maxEventsKept kept.
func (b *Bundle) readEvents(r io.Reader) error {
	var last uint64
	ring := newestOf[events.Recorded](maxEventsKept)
	err := eachLine(r, func(n int, line []byte) error {
		var e recordedJSON
		if err := strict(line, &e); err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		if e.Seq == 0 || e.Seq <= last || e.Seq > 1<<53 {
			return fmt.Errorf("line %d: seq %d does not follow %d (events are numbered from 1, rising)", n, e.Seq, last)
		}
		if !knownEvents[e.Type] {
			return fmt.Errorf("line %d: type %q is not an event type a world remembers", n, e.Type)
		}
		last = e.Seq
		b.read.events++
		ring.add(events.Recorded{Seq: e.Seq, Type: e.Type, Data: json.RawMessage(append([]byte(nil), e.Data...))})
		return nil
	})
	if err != nil {
		return problem("events.ndjson: %v", err)
	}
	b.Events = ring.list()
	return nil
}

// newest keeps the last n items added: its memory is n items, however many come.
type newest[T any] struct {
	items []T
	head  int
	n     int
}

func newestOf[T any](n int) *newest[T] { return &newest[T]{items: make([]T, 0, min(n, 1024)), n: n} }

func (r *newest[T]) add(v T) {
	if len(r.items) < r.n {
		r.items = append(r.items, v)
		return
	}
	r.items[r.head] = v
	r.head = (r.head + 1) % r.n
}

// list is the items kept, oldest first.
func (r *newest[T]) list() []T {
	return append(r.items[r.head:len(r.items):len(r.items)], r.items[:r.head]...)
}

// validClockMode reports whether a manifest's clock.mode is a mode a clock can have
// (real, manual, auto, scaled:N).
func validClockMode(s string) bool {
	m, err := clock.ParseMode(s)
	return err == nil && string(m) == s
}
