package state

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Reading a big state is mostly reading deployments (their build logs above all), and
// encoding/json reads each through reflection, looking every key up among the fields
// case-insensitively. decodeDeployment reads a deployment as hostemu writes it — any key
// order, any whitespace, any escapes — in one pass, and gives up on anything else (a
// key it does not know, or knows in another case or written with escapes, a key given
// twice in any of its objects, a null where a string goes, a number, anything
// malformed); the strict decoder then reads that deployment, or refuses it, as every
// other element of the state (decodeElement). What it does read, it reads as the strict
// decoder would: FuzzDecodeDeployment holds the two to the same result.

// decodeDeployment decodes text into d, or says it gave up (d is then partly written).
// Its strings are cut from a's blocks (nil: each allocated on its own).
func decodeDeployment(text []byte, d *Deployment, a *arena) bool {
	p := dparser{b: text, a: a}
	if !p.deployment(d) {
		return false
	}
	p.ws()
	return p.i == len(p.b)
}

// deployment reads one deployment object at p.i (whitespace before it skipped), and
// leaves p.i after its closing brace; false when it gives up.
func (p *dparser) deployment(d *Deployment) bool {
	return p.members(&deploymentKeys, func(key int) bool {
		var ok bool
		switch key {
		case 0:
			d.ID, ok = p.str()
		case 1:
			d.ProjectID, ok = p.str()
			p.r = p.a.recentOf(d.ProjectID)
		case 2:
			d.URL, ok = p.str()
		case 3:
			d.Target, ok = p.str()
		case 4:
			d.Status, ok = p.str()
		case 5:
			d.Env, ok = p.stringMap(nil, nil)
		case 6:
			var like *[]seen // the files of the project's last deployment
			var valid bool   // whether like's are valid, then d.Files's
			checked := &valid
			if p.r != nil {
				like, checked = &p.r.files, &p.r.filesValid
			}
			d.Files, ok = p.stringMap(like, checked)
			if ok {
				// no pair (null or {}): none wrong; a null is FilesProblem's "required",
				// which Check says (the verdict holds no nil map)
				p.a.readFiles(d.Files, *checked || len(d.Files) == 0)
			}
		case 7:
			ok = p.timings(&d.Timings)
		case 8:
			d.Error, ok = p.errorInfo()
		case 9:
			d.Logs, ok = p.logs()
		case 10:
			ok = p.time(&d.CreatedAt)
		}
		return ok
	})
}

// The keys of the objects decodeDeployment reads, in the order hostemu writes them
// (as appendDeployment writes them): members finds the one that comes next
// without reading it as any key first.
var (
	deploymentKeys = newKeys("id", "project_id", "url", "target", "status", "env", "files", "timings", "error", "logs", "created_at")
	timingsKeys    = newKeys("queued_at", "building_at", "ready_at", "error_at")
	errorKeys      = newKeys("code", "message")
	logLineKeys    = newKeys("text", "created_at")
)

// keys are an object's known keys, in the order hostemu writes them, and each quoted.
type keys struct {
	names  []string
	quoted []string
}

func newKeys(names ...string) keys {
	k := keys{names: names}
	for _, n := range names {
		k.quoted = append(k.quoted, `"`+n+`"`)
	}
	return k
}

// dparser reads JSON text from b at i.
type dparser struct {
	b []byte
	i int
	a *arena
	r *recent // the deployment's project's last deployment (once its project_id is read)
}

// arena hands out strings cut from blocks of 64 KiB, one allocation for many strings,
// and log lines, times and error details from slabs of their own, and lends a scratch
// list of log lines. A block lives as long as any of its strings: right for a state
// being read, whose strings live and die with the world they make (deployments are
// never deleted one by one; a world is replaced whole). What it hands out is never
// written again by the arena; log lists are capped, so that an append copies.
type arena struct {
	block []byte
	logs  []LogLine
	lines []LogLine
	times []time.Time
	errs  []ErrorInfo
	// stamp is the last timestamp of the usual form read (when stamped), stampTime
	// what it reads as
	stamp     [len(stampForm)]byte
	stampTime time.Time
	stamped   bool
	// stampHour is stampTime at the start of its hour: a timestamp of the usual form
	// in the same hour (stamp's first stampHourLen bytes) is that plus its minutes,
	// seconds and milliseconds, without time.Date
	stampHour time.Time
	// empty is the one empty map the state's empty objects share (a deployment's env
	// and files are never written after creation, as fixtures share theirs)
	empty map[string]string
	// recents is, by project id, what its last deployment read held (recentOf)
	recents map[string]*recent
	// pending is the files of the deployment being read, verdict what is known of
	// the files of those read (filesread.go)
	pending filesRead
	verdict filesVerdict
}

// recent is what the last deployment of a project read held, in the order read: its
// files' names and digests (name, digest, name, digest…) and its build log's lines
// (files or lines empty or null, or files read before the project_id, leave the last
// ones kept; a deployment decodeDeployment gives up on may have replaced them). A
// project's deployments mostly hold the same files under the same names and write the
// same lines, in the same places: a string read where the project's last deployment
// had the same one is that string (dparser.strLike), not a copy. In the
// 100,000-deployment world of emulator/testdata/big that is 27.8 of its 42 MB of
// repeated strings, about as much as tables of strings by their hash kept (27.7 MB),
// without hashing 1.4 million strings and looking each up in a table that the read's
// stream of text keeps out of the processor's cache (8 % of a replay's CPU).
type recent struct {
	files []seen
	logs  []seen
	// filesValid is whether files are the pairs of a map of files found valid
	// (dparser.stringMap)
	filesValid bool
}

// seen is a string read and its first eight bytes (fewer when it is shorter): a
// string read is compared with a seen one's bytes only when those agree, so that a
// string unlike the last one (most digests) is told apart without reading the seen
// one, which lies in memory written a while ago.
type seen struct {
	w uint64
	s string
}

func seenOf(s string) seen { return seen{firstWord(s), s} }

// firstWord is s's first eight bytes, little-endian, zeros past its end.
func firstWord(s string) uint64 {
	if len(s) >= 8 {
		return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), 8))
	}
	var w uint64
	for i := len(s) - 1; i >= 0; i-- {
		w = w<<8 | uint64(s[i])
	}
	return w
}

// maxRecent bounds the projects whose last deployment an arena keeps (recentOf): a
// state of more projects shares the strings of the first maxRecent project ids its
// deployments name (a project_id that is not a string counts as the empty id). A
// deployment of more than maxRecentItems files or log lines is not kept (its project's
// next deployment then shares nothing with it): what an arena keeps is at most maxRecent ×
// 3 × maxRecentItems seen strings of 24 bytes (a file's name and digest, a line), 4.5
// MiB, besides the strings themselves, which are the world's (or, of a deployment that
// decodeDeployment gave up on and the strict decoder read, copies of them). An arena
// is one array's read (readArray): all of it is garbage once the array is read.
const (
	maxRecent      = 1024
	maxRecentItems = 64
)

// recentOf is the project's last deployment read, nil when the arena keeps none.
func (a *arena) recentOf(project string) *recent {
	if a == nil {
		return nil
	}
	r := a.recents[project]
	if r == nil && len(a.recents) < maxRecent {
		if a.recents == nil {
			a.recents = map[string]*recent{}
		}
		r = &recent{}
		a.recents[project] = r
	}
	return r
}

// stampForm is the form of the timestamps hostemu writes.
const stampForm = "2006-01-02T15:04:05.000Z"

// stampHourLen is the length of stampForm's date and hour, with the colon after it.
const stampHourLen = len("2006-01-02T15:")

// slabItems is how many items a slab of log lines, times or error details holds.
const slabItems = 1024

// line copies ls into the arena's slab of log lines (a list of its own when long).
func (a *arena) line(ls []LogLine) []LogLine {
	if len(ls) > slabItems/8 {
		return slices.Clone(ls)
	}
	if cap(a.lines)-len(a.lines) < len(ls) {
		a.lines = make([]LogLine, 0, slabItems)
	}
	n := len(a.lines)
	a.lines = append(a.lines, ls...)
	return a.lines[n : n+len(ls) : n+len(ls)]
}

// time is a fresh time from the arena's slab.
func (a *arena) time() *time.Time {
	if a == nil {
		return new(time.Time)
	}
	if len(a.times) == cap(a.times) {
		a.times = make([]time.Time, 0, slabItems)
	}
	a.times = a.times[:len(a.times)+1]
	return &a.times[len(a.times)-1]
}

// errorInfo is a fresh error detail from the arena's slab.
func (a *arena) errorInfo() *ErrorInfo {
	if a == nil {
		return new(ErrorInfo)
	}
	if len(a.errs) == cap(a.errs) {
		a.errs = make([]ErrorInfo, 0, slabItems/8)
	}
	a.errs = a.errs[:len(a.errs)+1]
	return &a.errs[len(a.errs)-1]
}

// emptyMap is an empty map, shared by the arena's callers.
func (a *arena) emptyMap() map[string]string {
	if a == nil {
		return map[string]string{}
	}
	if a.empty == nil {
		a.empty = map[string]string{}
	}
	return a.empty
}

// str is string(b), from the arena's block when it fits.
func (a *arena) str(b []byte) string {
	if a == nil || len(b) == 0 || len(b) > 4<<10 {
		return string(b)
	}
	if cap(a.block)-len(a.block) < len(b) {
		a.block = make([]byte, 0, 64<<10)
	}
	n := len(a.block)
	a.block = append(a.block, b...)
	return unsafe.String(&a.block[n], len(b)) // never written again: only appended after
}

func (p *dparser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// is consumes c, after whitespace, when it comes next.
func (p *dparser) is(c byte) bool {
	// c is never whitespace: hostemu writes none, so c is most often the very next byte
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// null consumes a null literal when it comes next.
func (p *dparser) null() bool {
	p.ws()
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// members reads an object whose keys are among k's, calling field with each key's
// index in k, positioned at its value; field reads the value or says no. It gives up
// on any other key, a key written with escapes or in another case, and a key twice.
// The key hostemu writes after the one just read is compared first, quotes included,
// so that a key is mostly read by one comparison (an object written in another order
// reads the same, its keys looked up one by one).
func (p *dparser) members(k *keys, field func(key int) bool) bool {
	if !p.is('{') {
		return false
	}
	if p.is('}') {
		return true
	}
	var seen uint32
	next := 0
	for {
		i := -1
		if next < len(k.quoted) && len(p.b)-p.i >= len(k.quoted[next]) && string(p.b[p.i:p.i+len(k.quoted[next])]) == k.quoted[next] {
			i = next
			p.i += len(k.quoted[next])
		} else {
			key, ok := p.rawKey()
			if !ok {
				return false
			}
			for j, n := range k.names {
				if string(key) == n {
					i = j
					break
				}
			}
		}
		if i < 0 || seen&(1<<i) != 0 || !p.is(':') || !field(i) {
			return false
		}
		seen |= 1 << i
		next = i + 1
		if p.is(',') {
			continue
		}
		return p.is('}')
	}
}

// skipPlain moves on, eight bytes at a time, to the first byte that ends a plain run
// of a string (special's: a quote, a backslash, a control or non-ASCII byte), or to
// where fewer than eight bytes are left, which the caller reads a byte at a time.
func (p *dparser) skipPlain() { p.i = plainEnd(p.b, p.i) }

// plainEnd is skipPlain from b[i], on an index of its own: inlined, it stays in a
// register (str's loop), where p.i was stored at each word.
func plainEnd(b []byte, i int) int {
	for i+8 <= len(b) {
		if m := special(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	return i
}

// rawKey reads a key with no escapes in it.
func (p *dparser) rawKey() ([]byte, bool) {
	if !p.is('"') {
		return nil, false
	}
	start := p.i
	p.skipPlain() // to a key's closing quote, or what makes rawKey give up
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			p.i++
			return p.b[start : p.i-1], true
		}
		if c == '\\' || c < ' ' || c >= utf8.RuneSelf {
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// str reads a string (not null).
func (p *dparser) str() (string, bool) { return p.strLike(seen{}) }

// strLike is str, and like's string itself when the string read is the same (recent).
func (p *dparser) strLike(like seen) (string, bool) {
	if !p.is('"') {
		return "", false
	}
	// on a local index, written back to p.i once
	b, i := p.b, p.i
	start, ascii, escaped := i, true, false
	for i < len(b) {
		i = plainEnd(b, i)
		if i == len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			s := b[start:i]
			p.i = i + 1
			switch {
			case ascii && !escaped:
				if v, ok := internString(s); ok {
					return v, true
				}
				fallthrough
			case !escaped && utf8.Valid(s):
				if len(s) == len(like.s) && len(s) > 0 && firstWord(unsafe.String(&s[0], len(s))) == like.w && string(s) == like.s {
					return like.s, true
				}
				return p.a.str(s), true
			}
			return unquoteJSON(s, p.a)
		case c == '\\':
			escaped = true
			i++ // the escaped byte, a quote included
			if i == len(b) {
				p.i = i
				return "", false
			}
		case c < ' ':
			p.i = i
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		i++
	}
	p.i = i
	return "", false
}

// Bytes repeated in each of a word's eight bytes.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special has the high bit set of each byte of w (eight bytes of a string, the first
// in the lowest) that may end a run of plain ASCII: a quote, a backslash, a control
// character, or a byte of a multi-byte character. Bytes above the first such byte may
// be marked when they are not (a borrow carries up), never the first one nor any below.
func special(w uint64) uint64 {
	q := w ^ (ones * '"')
	b := w ^ (ones * '\\')
	return ((q-ones)&^q | (b-ones)&^b | (w - ones*0x20) | w) & highs
}

// internString is string(s) without a copy, for the values that most deployments
// share; false for any other.
func internString(s []byte) (string, bool) {
	switch string(s) {
	case TargetPreview:
		return TargetPreview, true
	case TargetProduction:
		return TargetProduction, true
	case StatusQueued:
		return StatusQueued, true
	case StatusBuilding:
		return StatusBuilding, true
	case StatusReady:
		return StatusReady, true
	case StatusError:
		return StatusError, true
	}
	return "", false
}

// unquoteJSON is the inside of a JSON string as encoding/json reads it: escapes
// decoded (a lone or broken surrogate as U+FFFD), invalid UTF-8 as U+FFFD. It refuses
// what encoding/json's scanner refuses: a control character, an unknown escape.
func unquoteJSON(s []byte, a *arena) (string, bool) {
	b := make([]byte, 0, len(s)+2*utf8.UTFMax)
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			r++
			if r >= len(s) {
				return "", false
			}
			switch s[r] {
			case '"', '\\', '/':
				b = append(b, s[r])
				r++
			case 'b':
				b = append(b, '\b')
				r++
			case 'f':
				b = append(b, '\f')
				r++
			case 'n':
				b = append(b, '\n')
				r++
			case 'r':
				b = append(b, '\r')
				r++
			case 't':
				b = append(b, '\t')
				r++
			case 'u':
				rr := getu4(s[r-1:])
				if rr < 0 {
					return "", false
				}
				r += 5
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != unicode.ReplacementChar {
						r += 6
						b = utf8.AppendRune(b, dec)
						break
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
			default:
				return "", false
			}
		case c == '"' || c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return a.str(b), true
}

// getu4 decodes \uXXXX from the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// time reads a time string as time.Time's UnmarshalJSON does (not null: for a time
// that is not a pointer, encoding/json leaves a null alone).
func (p *dparser) time(t *time.Time) bool {
	p.ws()
	if p.i == len(p.b) || p.b[p.i] != '"' {
		return false
	}
	start := p.i
	// the usual form, "2006-01-02T15:04:05.000Z": parseTimestamp checks every byte of
	// it, so no quote, backslash or control character is among them
	if end := start + 1 + len(stampForm); end < len(p.b) && p.b[end] == '"' {
		s := p.b[start+1 : end]
		if p.a != nil && p.a.stamped && string(s[:stampHourLen]) == string(p.a.stamp[:stampHourLen]) {
			if string(s) == string(p.a.stamp[:]) {
				*t = p.a.stampTime // the lifecycle's steps share their instants: a log line and its timing
				p.i = end + 1
				return true
			}
			// a lifecycle's instants are seconds apart: the same date and hour
			if d, ok := withinHour(s[stampHourLen:]); ok {
				*t = p.a.stampHour.Add(d)
				copy(p.a.stamp[:], s)
				p.a.stampTime = *t
				p.i = end + 1
				return true
			}
		}
		if parseTimestamp(s, t) {
			if p.a != nil {
				copy(p.a.stamp[:], s)
				d, _ := withinHour(s[stampHourLen:]) // parseTimestamp checked it
				p.a.stampTime, p.a.stampHour, p.a.stamped = *t, t.Add(-d), true
			}
			p.i = end + 1
			return true
		}
	}
	p.i++
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			raw := p.b[start:p.i]
			if parseTimestamp(raw[1:len(raw)-1], t) {
				return true
			}
			return t.UnmarshalJSON(raw) == nil
		case c == '\\' || c < ' ':
			return false // as encoding/json would hand it to UnmarshalJSON: leave it to them
		}
		p.i++
	}
	return false
}

// parseTimestamp reads "YYYY-MM-DDTHH:MM:SS[.fraction]Z" as time.Time's UnmarshalJSON
// reads it, or says no (for the UnmarshalJSON to read, or refuse).
func parseTimestamp(s []byte, t *time.Time) bool {
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[len(s)-1] != 'Z' {
		return false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return false
	}
	nsec := 0
	if frac := s[19 : len(s)-1]; len(frac) > 0 {
		if len(frac) < 2 || len(frac) > 10 || frac[0] != '.' {
			return false
		}
		n, ok := digits(frac[1:])
		if !ok {
			return false
		}
		for range 10 - len(frac) {
			n *= 10
		}
		nsec = n
	}
	*t = time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	return true
}

// withinHour reads the rest of a timestamp of the usual form after its hour,
// "04:05.000Z", as the time since the start of the hour; false when it is not of that
// form or out of range (what parseTimestamp refuses, or reads as another form).
func withinHour(s []byte) (time.Duration, bool) {
	if len(s) != len("04:05.000Z") || s[2] != ':' || s[5] != '.' || s[9] != 'Z' {
		return 0, false
	}
	minute, ok1 := digits(s[0:2])
	sec, ok2 := digits(s[3:5])
	ms, ok3 := digits(s[6:9])
	if !(ok1 && ok2 && ok3) || minute > 59 || sec > 59 {
		return 0, false
	}
	return time.Duration(minute*60+sec)*time.Second + time.Duration(ms)*time.Millisecond, true
}

// digits reads s as a decimal number, every byte a digit.
func digits(s []byte) (int, bool) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// timePtr reads a time or null.
func (p *dparser) timePtr(dst **time.Time) bool {
	if p.null() {
		*dst = nil
		return true
	}
	t := p.a.time()
	if !p.time(t) {
		return false
	}
	*dst = t
	return true
}

// stringMap reads an object of strings, or null; it gives up on a key given twice.
// When like is not nil, a pair's name and value are like's at the pair's place when
// the same (dparser.strLike), and like is then the pairs read.
//
// checked, when not nil, reads a deployment's files: it says whether like's pairs
// were found valid, and then whether the map read is (no name empty, every value a
// ValidFileHash: FilesProblem says nothing). A value that is like's string itself at
// its place (not only equal: strLike returned it) is not read again when like's were
// valid: most digests of a big state (filesread.go). A null or {}, no pair to find
// wrong, leaves like and checked as they were: the next deployment's digests are
// compared with those before it, and trusted only when those were found valid (a null
// or {} that said they were would have a wrong digest shared with them taken on trust).
func (p *dparser) stringMap(like *[]seen, checked *bool) (map[string]string, bool) {
	files := checked != nil
	if p.null() {
		return nil, true
	}
	if !p.is('{') {
		return nil, false
	}
	if p.is('}') {
		return p.a.emptyMap(), true
	}
	trusted := files && *checked && like != nil // like's strings were found valid
	// the pairs first, then a map of their number: no growing it on the way
	var room [32]string
	kv := room[:0]
	problem := false // files, and a name or a value found wrong
	var was []seen
	if like != nil {
		was = *like
	}
	for {
		var lk, lv seen
		if n := len(kv); n+1 < len(was) {
			lk, lv = was[n], was[n+1]
		}
		k, ok := p.strLike(lk) // a map's keys may be anything
		if !ok || !p.is(':') {
			return nil, false
		}
		v, ok := p.strLike(lv)
		if !ok {
			return nil, false
		}
		kv = append(kv, k, v)
		if files && (k == "" || !(trusted && sameString(v, lv.s)) && !ValidFileHash(v)) {
			files = false // a problem found: none looked for any more
			problem = true
		}
		if p.is(',') {
			continue
		}
		if !p.is('}') {
			return nil, false
		}
		m := make(map[string]string, len(kv)/2)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		if like != nil {
			*like = was[:0]
			if len(kv) > 2*maxRecentItems {
				*like = nil
			} else {
				for _, x := range kv {
					*like = append(*like, seenOf(x))
				}
			}
		}
		// a key given twice (as written, or once escaped) would keep the last: give up,
		// for decodeElement's strict reading to refuse it; the map's size tells, at no
		// cost to a map without one
		if checked != nil {
			*checked = !problem // like's too
		}
		return m, len(m) == len(kv)/2
	}
}

// sameString reports whether a and b are one string in memory (not only equal).
func sameString(a, b string) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.StringData(a) == unsafe.StringData(b)
}

func (p *dparser) timings(t *Timings) bool {
	return p.members(&timingsKeys, func(key int) bool {
		switch key {
		case 0:
			return p.timePtr(&t.QueuedAt)
		case 1:
			return p.timePtr(&t.BuildingAt)
		case 2:
			return p.timePtr(&t.ReadyAt)
		default:
			return p.timePtr(&t.ErrorAt)
		}
	})
}

func (p *dparser) errorInfo() (*ErrorInfo, bool) {
	if p.null() {
		return nil, true
	}
	e := p.a.errorInfo()
	ok := p.members(&errorKeys, func(key int) bool {
		var ok bool
		if key == 0 {
			e.Code, ok = p.str()
		} else {
			e.Message, ok = p.str()
		}
		return ok
	})
	return e, ok
}

func (p *dparser) logs() ([]LogLine, bool) {
	if p.null() {
		return nil, true
	}
	if !p.is('[') {
		return nil, false
	}
	if p.is(']') {
		return []LogLine{}, true
	}
	var logs []LogLine // gathered in the arena's scratch, then copied once
	if p.a != nil {
		logs = p.a.logs[:0]
		defer func() { p.a.logs = logs[:0] }()
	}
	var was []seen // the lines of the project's last deployment
	if p.r != nil {
		was = p.r.logs
	}
	for {
		var l LogLine
		ok := p.members(&logLineKeys, func(key int) bool {
			if key == 0 {
				var like seen
				if n := len(logs); n < len(was) {
					like = was[n]
				}
				var ok bool
				l.Text, ok = p.strLike(like)
				return ok
			}
			return p.time(&l.CreatedAt)
		})
		if !ok {
			return nil, false
		}
		logs = append(logs, l)
		if p.is(',') {
			continue
		}
		if !p.is(']') {
			return nil, false
		}
		if p.r != nil {
			p.r.logs = was[:0]
			if len(logs) > maxRecentItems {
				p.r.logs = nil
			} else {
				for _, l := range logs {
					p.r.logs = append(p.r.logs, seenOf(l.Text))
				}
			}
		}
		if p.a == nil {
			return logs, true
		}
		return p.a.line(logs), true
	}
}
