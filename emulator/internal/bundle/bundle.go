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

	"github.com/klauspost/compress/gzip"

	"github.com/hostemu/hostemu/emulator/internal/events"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/state"
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
	// maxSmall bounds each member but state.json and files/.
	maxSmall = 64 << 20
)

// The members.
const (
	ManifestName   = "manifest.json"
	StateName      = "state.json"
	FaultsName     = "faults.json"
	LifecyclesName = "lifecycles.json"
	JournalName    = "journal.ndjson"
	EventsName     = "events.ndjson"
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
	// Files are uploaded contents by SHA-256 (hex).
	Files map[string][]byte
}

// Error is what is wrong with an archive, worded for its user.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func problem(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }

// Write writes b as a gzipped tar archive to w, member by member: state.json is encoded
// once into a temporary file (its size goes first in the archive) rather than held whole.
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

	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed) // a valid level
	tw := tar.NewWriter(gz)
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
	// state.json is encoded once, into a temporary file: a tar member's size comes
	// before its bytes, and the text of a big world is not held in memory
	tmp, err := os.CreateTemp("", "hostemu-bundle-state-*.json")
	if err != nil {
		return err
	}
	defer func() { tmp.Close(); os.Remove(tmp.Name()) }()
	tbw := bufio.NewWriterSize(tmp, 256<<10)
	if err := state.WriteSnapshot(tbw, &b.State, ""); err != nil {
		return err
	}
	if err := tbw.Flush(); err != nil {
		return err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: StateName, Mode: 0o644, Size: size, ModTime: mod, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return err
	}
	if _, err := io.CopyBuffer(tw, tmp, make([]byte, 256<<10)); err != nil {
		return err
	}
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
	// JSONError words a JSON decoding error of state.json.
	JSONError func(error) error
	// Version is this hostemu's version, named when a bundle is too new.
	Version string
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
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, problem("not a failure bundle: the body is not gzip (%v); a bundle is what GET /_emulator/bundle answers", gzipErr(err))
	}
	gz.Multistream(false)
	left := opt.MaxBytes
	tr := tar.NewReader(gz)
	b := &Bundle{Scenarios: map[string][]byte{}, Files: map[string][]byte{}}
	seen := map[string]bool{}
	members := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, problem("the archive is truncated or not a tar archive: %v", gzipErr(err))
		}
		members++
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
		if err := b.member(name, h.Size, tr, opt); err != nil {
			return nil, err
		}
	}
	// the rest of the gzip stream: a bundle cut after the tar's end is still truncated
	if _, err := io.Copy(io.Discard, io.LimitReader(gz, 1<<20)); err != nil {
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
	return b, nil
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
	if strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || slices.Contains(strings.Split(name, "/"), "..") || path.Clean(name) != name {
		return problem("the archive holds %q, a path that escapes the archive or is not clean: refused", name)
	}
	if typ != tar.TypeReg {
		return problem("the archive holds %q, which is not a regular file (links and devices are refused)", name)
	}
	switch name {
	case ManifestName, StateName, FaultsName, LifecyclesName, JournalName, EventsName:
		return nil
	}
	if s, ok := strings.CutPrefix(name, scenariosDir); ok && strings.HasSuffix(s, ".yaml") && !strings.Contains(s, "/") && len(s) > len(".yaml") {
		return nil
	}
	if s, ok := strings.CutPrefix(name, filesDir); ok && state.ValidFileHash(s) {
		return nil
	}
	return problem("the archive holds %q, which is not a member of a failure bundle (manifest.json, state.json, faults.json, lifecycles.json, journal.ndjson, events.ndjson, scenarios/<name>.yaml, files/<sha256>)", name)
}

// member reads one member into b.
func (b *Bundle) member(name string, size int64, r io.Reader, opt ReadOptions) error {
	if name == StateName {
		if size > opt.StateMax {
			return problem("state.json is %d bytes, over the bound of %d (--max-state-bytes)", size, opt.StateMax)
		}
		snap, err := state.ReadSnapshot(r, state.ReadOptions{Max: opt.StateMax, Charge: opt.Charge, JSONError: opt.JSONError})
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
	if !strings.HasPrefix(name, filesDir) && size > maxSmall {
		return problem("%s is %d bytes, over the bound of %d", name, size, maxSmall)
	}
	data, err := io.ReadAll(io.LimitReader(r, size))
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
	case name == JournalName:
		entries, err := readNDJSON[journal.Entry](data)
		if err != nil {
			return problem("journal.ndjson: %v", err)
		}
		b.Journal = entries
	case name == EventsName:
		evs, err := readNDJSON[recordedJSON](data)
		if err != nil {
			return problem("events.ndjson: %v", err)
		}
		for _, e := range evs {
			b.Events = append(b.Events, events.Recorded{Seq: e.Seq, Type: e.Type, Data: e.Data})
		}
	case strings.HasPrefix(name, scenariosDir):
		b.Scenarios[strings.TrimSuffix(strings.TrimPrefix(name, scenariosDir), ".yaml")] = data
	case strings.HasPrefix(name, filesDir):
		digest := strings.TrimPrefix(name, filesDir)
		if got := sha256Hex(data); got != digest {
			return problem("%s: its bytes hash to %s", name, got)
		}
		b.Files[digest] = data
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
		return problem("manifest.json is not JSON: %v", err)
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
	case m.Clock.Mode != "real" && m.Clock.Mode != "manual":
		return problem("manifest.json: clock.mode %q: want real or manual", m.Clock.Mode)
	case m.Clock.Now.IsZero():
		return problem("manifest.json: clock.now is missing")
	case m.RateLimits != "on" && m.RateLimits != "off":
		return problem("manifest.json: rate_limits %q: want on or off", m.RateLimits)
	}
	return nil
}

func orUnknown(v string) string {
	if v == "" {
		return "(unknown version)"
	}
	return v
}

// strict decodes one JSON value refusing unknown keys and anything after it.
func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// readNDJSON decodes one JSON object per line.
func readNDJSON[T any](data []byte) ([]T, error) {
	var out []T
	line := 0
	for len(data) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var v T
		if err := strict(l, &v); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
