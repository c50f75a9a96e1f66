package state

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// ValidID reports whether id is prefix ("prj_" or "dpl_") followed by at least one
// letter, digit or underscore: the one rule for ids, whoever writes them (fixtures, an
// imported state, the world's own source).
func ValidID(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || rest == "" {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !isAlnum(c) && c != '_' {
			return false
		}
	}
	return true
}

// ValidEnvName reports whether k is an environment variable name a shell would take: a
// letter or underscore, then letters, digits and underscores. One rule for the API
// (a deployment's env), fixtures and whoever else writes an env: "A=B" could never be
// set in a build's environment, where "=" ends the name.
func ValidEnvName(k string) bool {
	if k == "" || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !isAlnum(c) && c != '_' {
			return false
		}
	}
	return true
}

// EnvNameRule says what ValidEnvName takes, for the messages that refuse a name.
const EnvNameRule = "letters, digits and underscores, not starting with a digit"

// EnvProblem says why env cannot be a deployment's or a project's environment, in the
// API's words (the field and the first wrong name in order, whatever the map's), or ""
// when every name is a ValidEnvName. The API answers it to a create, and Check refuses
// a state imported (PUT /_emulator/state, --state, a bundle) with it: a name the API
// refuses never gets in another way (fixtures name it at its line before, by the same
// rule).
func EnvProblem(env map[string]string) string {
	valid := true
	for k := range env {
		valid = valid && ValidEnvName(k)
	}
	if valid {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if k == "" {
			return `field "env" has an empty variable name`
		}
		if !ValidEnvName(k) {
			return fmt.Sprintf(`field "env": %q is not a variable name (%s)`, k, EnvNameRule)
		}
	}
	return ""
}

// FilesProblem says why files cannot be a deployment's files, in the API's words (no
// files at all: a nil map, which a create's body without "files" or with "files": null
// decodes to; else the field and the first wrong path in order, whatever the map's: an
// empty path, or a hash that is not a ValidFileHash), or "" when none is wrong ({} is
// a deployment of no files). The API answers it to a create, and Check refuses a state
// imported (PUT /_emulator/state, --state, a bundle) with it; the state reader checks
// each deployment's files as it reads them (dparser.stringMap), so that Check does not
// walk a big state's files again. Nothing hostemu makes has a nil map: the API refuses
// one, the fixtures make {} of a deployment without files.
func FilesProblem(files map[string]string) string {
	if files == nil {
		return `field "files" is required: an object of file path to SHA-256 hash`
	}
	valid := true
	for p, h := range files {
		valid = valid && p != "" && ValidFileHash(h)
	}
	if valid {
		return ""
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if p == "" {
			return `field "files" has an empty file path`
		}
		if !ValidFileHash(files[p]) {
			return fmt.Sprintf(`field "files": the hash of %q must be 64 lowercase hex characters (SHA-256)`, p)
		}
	}
	return ""
}

// ValidFileHash reports whether h is a SHA-256 digest in 64 lowercase hex characters.
// It reads h eight bytes at a time: every file of every deployment of an imported
// state is checked with it (FilesProblem).
func ValidFileHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	b := unsafe.Slice(unsafe.StringData(h), 64)
	for i := 0; i < 64; i += 8 {
		if !lowerHex8(binary.LittleEndian.Uint64(b[i:])) {
			return false
		}
	}
	return true
}

// lowerHex8 reports whether each of w's eight bytes is '0'-'9' or 'a'-'f'. Once no
// byte has its high bit set, adding 0x80-lo to a byte sets its high bit exactly when
// it is lo or more, and adding 0x7f-hi exactly when it is more than hi, with no carry
// into the next byte (the sums stay below 0x100).
func lowerHex8(w uint64) bool {
	if w&highs != 0 {
		return false
	}
	digit := (w + ones*(0x80-'0')) &^ (w + ones*(0x7f-'9'))
	letter := (w + ones*(0x80-'a')) &^ (w + ones*(0x7f-'f'))
	return (digit|letter)&highs == highs
}

// DefaultEdgeDomain is the domain deployment hosts live under unless --edge-domain says
// otherwise. Browsers, curl and most resolvers send *.localhost to loopback, so a
// deployment's URL opens with no DNS set-up, and no URL hostemu hands out reaches a
// real host.
const DefaultEdgeDomain = "hostemu.localhost"

// testNameSuffixes are the names no real site can have (RFC 2606, RFC 6761): ".x"
// covers every name ending in .x, "example.com" that name and every one under it.
var testNameSuffixes = []string{".test", ".example", ".invalid", ".localhost", "example.com", "example.net", "example.org"}

// IsTestName reports whether host (normalised) is a name no real site can have: under
// .test, .example, .invalid or .localhost, or example.com, .net, .org or under them.
// The proxy serves custom domains under them without being told, and a file (a failure
// bundle) may set an edge domain among them: no client can mistake them for the real
// internet, so the local CA vouching for them widens nothing.
func IsTestName(host string) bool {
	for _, s := range testNameSuffixes {
		if s[0] == '.' {
			if strings.HasSuffix(host, s) && len(host) > len(s) {
				return true
			}
		} else if host == s || strings.HasSuffix(host, "."+s) {
			return true
		}
	}
	return false
}

// URLForm is how deployment URLs are written beyond their host: the scheme and the
// port a client must use to open them. The zero value is https with no port (443), the
// form of a world served behind nothing in particular (emulator.New); a listening
// hostemu writes the port of its HTTPS listener (or --edge-url-port), or, with no HTTPS
// listener, http and the port of its plain one, so that the url the API hands out
// opens as given.
type URLForm struct {
	// Scheme is "https" (when empty) or "http".
	Scheme string
	// Port is written after the host unless it is 0 or the scheme's default.
	Port int
}

// String is the URL's part before the host, "https://", and the part after it, ":4743"
// or "", joined around "<host>".
func (f URLForm) String() string { return f.prefix() + "<host>" + f.suffix() }

func (f URLForm) prefix() string {
	if f.Scheme == "" {
		return "https://"
	}
	return f.Scheme + "://"
}

func (f URLForm) suffix() string { return string(f.appendPort(nil)) }

// appendPort appends ":<port>", unless the port is 0 or the scheme's default.
func (f URLForm) appendPort(b []byte) []byte {
	if f.Port == 0 || f.Port == 443 && (f.Scheme == "" || f.Scheme == "https") || f.Port == 80 && f.Scheme == "http" {
		return b
	}
	return strconv.AppendInt(append(b, ':'), int64(f.Port), 10)
}

// URL is the URL of host in this form: https://host:4743.
func (f URLForm) URL(host string) string { return f.prefix() + host + f.suffix() }

// DeploymentURL is the stable URL of a deployment: https://<DeploymentLabel>.<edge
// domain>[:port] ("" is DefaultEdgeDomain), scheme and port as form says.
func DeploymentURL(projectName, deploymentID, edgeDomain string, form URLForm) string {
	if edgeDomain == "" {
		edgeDomain = DefaultEdgeDomain
	}
	name, suffix := labelParts(projectName, deploymentID)
	// one allocation: a create's hot path
	var port [20]byte
	p := form.appendPort(port[:0])
	var b strings.Builder
	b.Grow(len(form.Scheme) + len("https://") + len(name) + 1 + len(suffix) + 1 + len(edgeDomain) + len(p))
	if form.Scheme == "" {
		b.WriteString("https")
	} else {
		b.WriteString(form.Scheme)
	}
	b.WriteString("://")
	b.WriteString(name)
	b.WriteByte('-')
	b.WriteString(suffix)
	b.WriteByte('.')
	b.WriteString(edgeDomain)
	b.Write(p)
	return b.String()
}

// RehomeURLs gives the deployment URLs of snap on edgeDomain ("" is DefaultEdgeDomain)
// the scheme and port of form, and says how many it changed: a state written by one
// hostemu process and read by another (--state) has its edge where this one listens.
// A URL on another domain is left as it is.
func RehomeURLs(snap *Snapshot, edgeDomain string, form URLForm) int {
	if edgeDomain == "" {
		edgeDomain = DefaultEdgeDomain
	}
	n := 0
	for i := range snap.Deployments {
		d := &snap.Deployments[i]
		u, err := url.Parse(d.URL)
		if err != nil {
			continue
		}
		host := u.Hostname()
		if !strings.HasSuffix(host, "."+edgeDomain) {
			continue
		}
		if moved := form.URL(host); moved != d.URL {
			d.Logs = rehomeLogs(d.Logs, d.URL, moved) // "… deployment ready at <url>"
			d.URL = moved
			n++
		}
	}
	return n
}

// rehomeLogs is logs with from replaced by to in each line, a copy when any changes
// (log arrays may be shared).
func rehomeLogs(logs []LogLine, from, to string) []LogLine {
	var out []LogLine
	for i, l := range logs {
		if !strings.Contains(l.Text, from) {
			continue
		}
		if out == nil {
			out = slices.Clone(logs)
		}
		out[i].Text = strings.ReplaceAll(l.Text, from, to)
	}
	if out == nil {
		return logs
	}
	return out
}

// DeploymentLabel is the first label of a deployment's host: "<project-name
// slug>-<lowercase id suffix>". The suffix alone makes it unique; a suffix that is not
// lowercase letters and digits, or is longer than 40 characters, is replaced by a digest
// of the id, so the label is always a valid one of at most 63 characters.
func DeploymentLabel(projectName, deploymentID string) string {
	name, suffix := labelParts(projectName, deploymentID)
	return name + "-" + suffix
}

// labelParts are DeploymentLabel's two parts, the project name's slug and the suffix.
func labelParts(projectName, deploymentID string) (nameSlug, suffix string) {
	suffix = strings.TrimPrefix(deploymentID, "dpl_")
	if !urlSafe(suffix) {
		sum := sha256.Sum256([]byte(deploymentID))
		suffix = strings.ToLower(base32.StdEncoding.EncodeToString(sum[:15]))[:20]
	}
	nameSlug = projectName
	if !isSlug(nameSlug) { // a name that is its own slug is taken as it is
		nameSlug = Slug(projectName)
	}
	if max := 63 - 1 - len(suffix); len(nameSlug) > max {
		nameSlug = strings.TrimRight(nameSlug[:max], "-")
	}
	if nameSlug == "" {
		nameSlug = "app"
	}
	return nameSlug, suffix
}

// isSlug reports whether Slug(s) == s: lowercase letters and digits, in runs joined by
// single hyphens.
func isSlug(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '-' {
			if i == 0 || i == len(s)-1 || s[i-1] == '-' {
				return false
			}
		} else if !isLowerAlnum(c) {
			return false
		}
	}
	return true
}

func urlSafe(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLowerAlnum(s[i]) {
			return false
		}
	}
	return true
}

// Slug lowercases s and turns every run of other characters than ASCII letters and
// digits into one hyphen: "Demo Shop!" → "demo-shop".
func Slug(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	dash := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if isLowerAlnum(c) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteByte(c)
			continue
		}
		dash = true
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
