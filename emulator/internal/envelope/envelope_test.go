package envelope_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	crand "crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/hostemu/hostemu/emulator/internal/envelope"
)

// fixedSecret is a master secret that is the same on every run, standing in for the
// fixed key of the embedded fixtures.
func fixedSecret(first byte) []byte {
	s := make([]byte, envelope.SecretSize)
	for i := range s {
		s[i] = first + byte(i)
	}
	return s
}

var (
	k1 = envelope.Key{ID: "k1", Secret: fixedSecret(1)}
	k2 = envelope.Key{ID: "k2", Secret: fixedSecret(101)}
)

// goldenPayload sealed under k1 with detRandom(1). The literal pins the format: if it
// stops opening, envelopes stored by users stop opening after an upgrade.
const (
	goldenPayload  = `{"hello":"hostemu"}`
	goldenEnvelope = "hx1.AQJrMQzYcnTWcITKrw4NNshJbbf-9V_g4SV1ChQZuwa_rSLgYg7acOKR8SxNQAYOwwTFCNfyHcdq7DEr3i0BABMnweVr2cQVJqu0k-qSzgvLbDtQa09rM1wfy3bAa9ttl48f5yAFXP0kSYIWbw4F"
)

func newKeyring(tb testing.TB, keys ...envelope.Key) *envelope.Keyring {
	tb.Helper()
	kr, err := envelope.NewKeyring(keys)
	if err != nil {
		tb.Fatalf("NewKeyring: %v", err)
	}
	return kr
}

// detRandom is a reproducible random stream, so envelopes can be compared and stored.
func detRandom(seed byte) io.Reader {
	return rand.NewChaCha8([32]byte{seed})
}

func seal(tb testing.TB, kr *envelope.Keyring, random io.Reader, plaintext []byte) string {
	tb.Helper()
	env, err := kr.Seal(random, plaintext)
	if err != nil {
		tb.Fatalf("Seal: %v", err)
	}
	return env
}

func decode(tb testing.TB, env string) []byte {
	tb.Helper()
	raw, err := base64.RawURLEncoding.Strict().DecodeString(strings.TrimPrefix(env, envelope.Prefix))
	if err != nil {
		tb.Fatalf("decode %q: %v", env, err)
	}
	return raw
}

func encode(raw []byte) string {
	return envelope.Prefix + base64.RawURLEncoding.EncodeToString(raw)
}

// wantRefused fails unless err is exactly ErrInvalidEnvelope, or, when keyNotFoundOK,
// an error matching ErrKeyNotFound.
func wantRefused(tb testing.TB, what string, got []byte, err error, keyNotFoundOK bool) {
	tb.Helper()
	switch {
	case err == nil:
		tb.Fatalf("%s: opened to %q, want refusal", what, got)
	case err == envelope.ErrInvalidEnvelope:
	case keyNotFoundOK && errors.Is(err, envelope.ErrKeyNotFound):
	default:
		tb.Fatalf("%s: error %v, want ErrInvalidEnvelope (key not found allowed: %v)", what, err, keyNotFoundOK)
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	mib := make([]byte, 1<<20)
	if _, err := io.ReadFull(detRandom(9), mib); err != nil {
		t.Fatal(err)
	}
	kr := newKeyring(t, k1)
	for _, tc := range []struct {
		name      string
		plaintext []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"unicode", []byte("héllo, 世界 🌍 \u0000 \u202e")},
		{"json", []byte(`{"db":{"user":"app","password":"s3cr\"et"},"list":[1,2.5,null,true]}`)},
		{"binary", []byte{0, 1, 2, 0xfe, 0xff}},
		{"1MiB", mib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := seal(t, kr, nil, tc.plaintext)
			body, ok := strings.CutPrefix(env, envelope.Prefix)
			if !ok {
				t.Fatalf("envelope %.20q… lacks prefix %q", env, envelope.Prefix)
			}
			if i := strings.IndexFunc(body, func(r rune) bool { return !isBase64URL(byte(r)) || r > 127 }); i >= 0 {
				t.Fatalf("envelope body has %q at %d, not URL-safe", body[i], i)
			}
			got, err := kr.Open(env)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if !bytes.Equal(got, tc.plaintext) {
				t.Fatalf("Open = %.40q…, want %.40q…", got, tc.plaintext)
			}
		})
	}
}

func isBase64URL(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

func TestSealRandomness(t *testing.T) {
	t.Parallel()
	kr := newKeyring(t, k1)
	plaintext := []byte("same payload")
	if a, b := seal(t, kr, nil, plaintext), seal(t, kr, nil, plaintext); a == b {
		t.Fatalf("two seals of one payload gave the same envelope %q: data key or nonce reused", a)
	}
	if a, b := seal(t, kr, detRandom(3), plaintext), seal(t, kr, detRandom(3), plaintext); a != b {
		t.Fatalf("seals with the same random stream differ:\n%s\n%s", a, b)
	}
}

func TestSealRandomFailure(t *testing.T) {
	t.Parallel()
	kr := newKeyring(t, k1)
	boom := errors.New("boom")
	for _, tc := range []struct {
		name   string
		random io.Reader
		want   error
	}{
		{"error", iotest.ErrReader(boom), boom},
		{"short", strings.NewReader("too short"), io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if env, err := kr.Seal(tc.random, []byte("x")); !errors.Is(err, tc.want) {
				t.Fatalf("Seal = %q, %v; want %v", env, err, tc.want)
			}
		})
	}
}

// TestGolden stands for a restart: a keyring built afresh from the fixed key opens an
// envelope made earlier, and the same inputs still make the same envelope.
func TestGolden(t *testing.T) {
	t.Parallel()
	kr := newKeyring(t, envelope.Key{ID: k1.ID, Secret: fixedSecret(1)})
	got, err := kr.Open(goldenEnvelope)
	if err != nil || string(got) != goldenPayload {
		t.Fatalf("Open(golden) = %q, %v; want %q", got, err, goldenPayload)
	}
	if env := seal(t, kr, detRandom(1), []byte(goldenPayload)); env != goldenEnvelope {
		t.Fatalf("Seal = %q, want golden %q: the envelope format changed", env, goldenEnvelope)
	}
}

func TestOpenAcrossKeyrings(t *testing.T) {
	t.Parallel()
	env := seal(t, newKeyring(t, k1), nil, []byte("survives a restart"))
	secret := bytes.Clone(k1.Secret)
	other := newKeyring(t, envelope.Key{ID: "k1", Secret: secret})
	clear(secret) // the keyring must not depend on the caller's slice
	got, err := other.Open(env)
	if err != nil || string(got) != "survives a restart" {
		t.Fatalf("Open on another keyring = %q, %v", got, err)
	}
}

func TestRotation(t *testing.T) {
	t.Parallel()
	old := newKeyring(t, k1)
	rotated := newKeyring(t, k2, k1)
	retired := newKeyring(t, k2)
	sameIDOtherSecret := newKeyring(t, envelope.Key{ID: "k1", Secret: k2.Secret})
	byOld := seal(t, old, nil, []byte("old"))
	byRotated := seal(t, rotated, nil, []byte("new"))

	if got := string(decode(t, byRotated)[2:4]); got != "k2" {
		t.Fatalf("rotated keyring sealed with key %q, want the first key k2", got)
	}
	for _, tc := range []struct {
		name    string
		kr      *envelope.Keyring
		env     string
		want    string
		wantErr error
	}{
		{"old envelope, rotated keyring", rotated, byOld, "old", nil},
		{"new envelope, rotated keyring", rotated, byRotated, "new", nil},
		{"old envelope, key retired", retired, byOld, "", envelope.ErrKeyNotFound},
		{"new envelope, old keyring", old, byRotated, "", envelope.ErrKeyNotFound},
		{"same id, other secret", sameIDOtherSecret, byOld, "", envelope.ErrInvalidEnvelope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.kr.Open(tc.env)
			if !errors.Is(err, tc.wantErr) || string(got) != tc.want {
				t.Fatalf("Open = %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestNoKeys(t *testing.T) {
	t.Parallel()
	env := seal(t, newKeyring(t, k1), nil, []byte("x"))
	for name, kr := range map[string]*envelope.Keyring{
		"empty": newKeyring(t),
		"nil":   nil,
		"zero":  new(envelope.Keyring),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got, err := kr.Seal(nil, []byte("x")); !errors.Is(err, envelope.ErrNoKeys) {
				t.Errorf("Seal = %q, %v; want ErrNoKeys", got, err)
			}
			if got, err := kr.Open(env); !errors.Is(err, envelope.ErrKeyNotFound) {
				t.Errorf("Open = %q, %v; want ErrKeyNotFound", got, err)
			}
		})
	}
}

// tamperSubject is a short envelope, so every position can be tried.
func tamperSubject(t *testing.T) (*envelope.Keyring, string, []byte) {
	t.Helper()
	kr := newKeyring(t, k1)
	env := seal(t, kr, detRandom(2), []byte("attack at dawn"))
	return kr, env, decode(t, env)
}

// inKeyID says whether decoded byte i is the id length or the id, the only bytes whose
// change may turn an envelope into one naming an unknown key.
func inKeyID(raw []byte, i int) bool { return i >= 1 && i < 2+int(raw[1]) }

func TestTamperBytes(t *testing.T) {
	t.Parallel()
	kr, _, raw := tamperSubject(t)
	for i := range raw {
		for bit := range 8 {
			mutated := bytes.Clone(raw)
			mutated[i] ^= 1 << bit
			got, err := kr.Open(encode(mutated))
			wantRefused(t, "byte "+strconv.Itoa(i)+" bit "+strconv.Itoa(bit), got, err, inKeyID(raw, i))
		}
	}
}

func TestTamperChars(t *testing.T) {
	t.Parallel()
	kr, env, raw := tamperSubject(t)
	replacements := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=.:\n\r \x00\x7f\xc3"
	for i := range env {
		for _, c := range []byte(replacements) {
			if env[i] == c {
				continue
			}
			mutated := env[:i] + string(c) + env[i+1:]
			// Character j of the body carries bits 6j..6j+5 of the decoded bytes.
			j := i - len(envelope.Prefix)
			keyNotFoundOK := j >= 0 && (inKeyID(raw, 6*j/8) || inKeyID(raw, (6*j+5)/8))
			got, err := kr.Open(mutated)
			wantRefused(t, "char "+strconv.Itoa(i)+" → "+string(c), got, err, keyNotFoundOK)
		}
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	kr, env, raw := tamperSubject(t)
	for n := range len(env) {
		got, err := kr.Open(env[:n])
		wantRefused(t, "string cut at "+strconv.Itoa(n), got, err, false)
		got, err = kr.Open(env[len(env)-n:])
		wantRefused(t, "string cut before "+strconv.Itoa(len(env)-n), got, err, false)
	}
	for n := range len(raw) {
		got, err := kr.Open(encode(raw[:n]))
		wantRefused(t, "bytes cut at "+strconv.Itoa(n), got, err, false)
	}
}

func TestExtend(t *testing.T) {
	t.Parallel()
	kr, env, raw := tamperSubject(t)
	for _, suffix := range []string{"A", "AA", "AAA", "AAAA", "=", "==", "\n", "\r\n", " ", ".", "hx1.", "\x00"} {
		got, err := kr.Open(env + suffix)
		wantRefused(t, "string + "+suffix, got, err, false)
		got, err = kr.Open(envelope.Prefix + suffix + env[len(envelope.Prefix):])
		wantRefused(t, "string with "+suffix+" after prefix", got, err, false)
	}
	for _, suffix := range [][]byte{{0}, {1}, make([]byte, 16), raw} {
		got, err := kr.Open(encode(append(bytes.Clone(raw), suffix...)))
		wantRefused(t, "bytes + "+strconv.Itoa(len(suffix)), got, err, false)
	}
}

func TestMalformed(t *testing.T) {
	t.Parallel()
	kr, env, raw := tamperSubject(t)
	body := env[len(envelope.Prefix):]
	withID := func(id string) []byte {
		b := append([]byte{envelope.Version, byte(len(id))}, id...)
		return append(b, raw[2+int(raw[1]):]...)
	}
	withVersion := func(v byte) []byte {
		b := bytes.Clone(raw)
		b[0] = v
		return b
	}
	for _, tc := range []struct {
		name string
		env  string
	}{
		{"empty", ""},
		{"prefix only", envelope.Prefix},
		{"no prefix", body},
		{"prefix without dot", "hx1" + body},
		{"upper-case prefix", "HX1." + body},
		{"next version prefix", "hx2." + body},
		{"leading space", " " + env},
		{"newline inside", env[:40] + "\n" + env[40:]},
		{"CRLF inside", env[:40] + "\r\n" + env[40:]},
		{"padded", envelope.Prefix + base64.URLEncoding.EncodeToString(raw)},
		{"standard alphabet", envelope.Prefix + base64.RawStdEncoding.EncodeToString(raw)},
		{"version 0", encode(withVersion(0))},
		{"version 2", encode(withVersion(2))},
		{"empty key id", encode(withID(""))},
		{"key id too long", encode(withID(strings.Repeat("k", envelope.MaxKeyIDLen+1)))},
		{"key id with dot", encode(withID("k.1"))},
		{"key id with control byte", encode(withID("k\n"))},
		{"key id not ASCII", encode(withID("k\xc3\xa9"))},
		{"header only", encode(raw[:2+int(raw[1])])},
		{"no ciphertext tag", encode(raw[:len(raw)-len("attack at dawn")-1])},
		{"junk", "hx1.not-an-envelope-at-all"},
		{"junk of envelope size", envelope.Prefix + strings.Repeat("A", len(body))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := kr.Open(tc.env)
			wantRefused(t, tc.name, got, err, false)
		})
	}
}

// TestUnknownKeyID checks that a key id is judged once the envelope parses, whatever
// the sealed parts hold, so a foreign envelope is told apart from a damaged one.
func TestUnknownKeyID(t *testing.T) {
	t.Parallel()
	kr, _, raw := tamperSubject(t)
	id := strings.Repeat("z", envelope.MaxKeyIDLen)
	foreign := append([]byte{envelope.Version, byte(len(id))}, id...)
	foreign = append(foreign, raw[2+int(raw[1]):]...)
	if got, err := kr.Open(encode(foreign)); !errors.Is(err, envelope.ErrKeyNotFound) {
		t.Fatalf("Open = %q, %v; want ErrKeyNotFound", got, err)
	}
}

func TestNewKeyringErrors(t *testing.T) {
	t.Parallel()
	secret := fixedSecret(7)
	for _, tc := range []struct {
		name string
		keys []envelope.Key
	}{
		{"empty id", []envelope.Key{{ID: "", Secret: secret}}},
		{"id too long", []envelope.Key{{ID: strings.Repeat("k", envelope.MaxKeyIDLen+1), Secret: secret}}},
		{"id with dot", []envelope.Key{{ID: "k.1", Secret: secret}}},
		{"id with newline", []envelope.Key{{ID: "k\n", Secret: secret}}},
		{"id with DEL", []envelope.Key{{ID: "k\x7f", Secret: secret}}},
		{"id not ASCII", []envelope.Key{{ID: "clé", Secret: secret}}},
		{"duplicate id", []envelope.Key{{ID: "k", Secret: secret}, {ID: "k", Secret: fixedSecret(8)}}},
		{"nil secret", []envelope.Key{{ID: "k"}}},
		{"short secret", []envelope.Key{{ID: "k", Secret: secret[:16]}}},
		{"long secret", []envelope.Key{{ID: "k", Secret: append(bytes.Clone(secret), 0)}}},
		{"bad second key", []envelope.Key{{ID: "k", Secret: secret}, {ID: "j", Secret: secret[:31]}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			kr, err := envelope.NewKeyring(tc.keys)
			if err == nil {
				t.Fatalf("NewKeyring = %v, want error", kr)
			}
			if strings.Contains(err.Error(), string(secret)) || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString(secret[:12])) {
				t.Fatalf("error %q reveals the secret", err)
			}
		})
	}

	for _, id := range []string{"k", " spaced id ", strings.Repeat("~", envelope.MaxKeyIDLen), "prod-2026_01:a/b"} {
		if _, err := envelope.NewKeyring([]envelope.Key{{ID: id, Secret: secret}}); err != nil {
			t.Errorf("NewKeyring with id %q: %v", id, err)
		}
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	// 0xfb 0xff encode to characters that differ between the two alphabets.
	secret := bytes.Repeat([]byte{0xfb, 0xff, 0x10, 0xfb}, envelope.SecretSize/4)
	for _, tc := range []struct {
		name string
		in   string
		ok   bool
	}{
		{"standard padded", base64.StdEncoding.EncodeToString(secret), true},
		{"standard raw", base64.RawStdEncoding.EncodeToString(secret), true},
		{"URL padded", base64.URLEncoding.EncodeToString(secret), true},
		{"URL raw", base64.RawURLEncoding.EncodeToString(secret), true},
		{"empty", "", false},
		{"16 bytes", base64.StdEncoding.EncodeToString(secret[:16]), false},
		{"31 bytes", base64.RawStdEncoding.EncodeToString(secret[:31]), false},
		{"33 bytes", base64.StdEncoding.EncodeToString(append(bytes.Clone(secret), 1)), false},
		{"mixed alphabets", "-/" + base64.RawStdEncoding.EncodeToString(secret)[2:], false},
		{"not base64", strings.Repeat("!", 43), false},
		{"wrong padding", base64.RawStdEncoding.EncodeToString(secret) + "==", false},
		{"trailing bits", base64.RawStdEncoding.EncodeToString(secret)[:42] + "B", false},
		{"surrounding space", " " + base64.StdEncoding.EncodeToString(secret), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := envelope.ParseKey(tc.in)
			switch {
			case tc.ok && (err != nil || !bytes.Equal(got, secret)):
				t.Fatalf("ParseKey(%q) = %x, %v; want %x", tc.in, got, err, secret)
			case !tc.ok && err == nil:
				t.Fatalf("ParseKey(%q) = %x, want error", tc.in, got)
			}
		})
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	kr := newKeyring(t, k2, k1)
	old := seal(t, newKeyring(t, k1), nil, []byte("old"))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				want := []byte(strconv.Itoa(g) + "/" + strconv.Itoa(i))
				env, err := kr.Seal(nil, want)
				if err != nil {
					t.Error(err)
					return
				}
				if got, err := kr.Open(env); err != nil || !bytes.Equal(got, want) {
					t.Errorf("Open = %q, %v; want %q", got, err, want)
				}
				if got, err := kr.Open(old); err != nil || string(got) != "old" {
					t.Errorf("Open(old) = %q, %v", got, err)
				}
			}
		})
	}
	wg.Wait()
}

// fuzzEnvelopes are the valid envelopes of FuzzOpen, made the same way on every run;
// testdata/fuzz/FuzzOpen holds the same strings.
func fuzzEnvelopes(tb testing.TB) map[string]string {
	tb.Helper()
	valid := make(map[string]string)
	for i, tc := range []struct {
		key     envelope.Key
		payload string
	}{
		{k1, ""},
		{k1, "a"},
		{k1, `{"token":"t0k3n"}`},
		{k2, "rotated key"},
		{k2, strings.Repeat("0123456789abcdef", 8)},
	} {
		env := seal(tb, newKeyring(tb, tc.key), detRandom(byte(100+i)), []byte(tc.payload))
		valid[env] = tc.payload
	}
	return valid
}

// FuzzOpen checks that Open never panics, refuses with one of its two errors, and
// opens nothing but the envelopes Seal made: Strict base64 and the length checks give
// each envelope one spelling, so any other string must fail.
func FuzzOpen(f *testing.F) {
	kr := newKeyring(f, k2, k1)
	valid := fuzzEnvelopes(f)
	for env := range valid {
		f.Add(env)
	}
	f.Add("")
	f.Add(envelope.Prefix)
	f.Add(envelope.Prefix + "AQJrMQ")
	f.Fuzz(func(t *testing.T, env string) {
		got, err := kr.Open(env)
		// OpenBytes, the HTTP path's, opens and refuses exactly as Open does
		if gotB, errB := kr.OpenBytes([]byte(env)); string(gotB) != string(got) || (err == nil) != (errB == nil) ||
			(err != nil && (errors.Is(err, envelope.ErrInvalidEnvelope) != errors.Is(errB, envelope.ErrInvalidEnvelope) || errors.Is(err, envelope.ErrKeyNotFound) != errors.Is(errB, envelope.ErrKeyNotFound))) {
			t.Fatalf("OpenBytes(%q) = %q, %v; Open: %q, %v", env, gotB, errB, got, err)
		}
		if want, ok := valid[env]; ok {
			if err != nil || string(got) != want {
				t.Fatalf("Open(valid %q) = %q, %v; want %q", env, got, err, want)
			}
			return
		}
		wantRefused(t, "Open("+env+")", got, err, true)
	})
}

// TestAppendSeal: AppendSeal appends to what dst holds an envelope that Open and
// OpenBytes open, never longer than MaxLen, for every key id length.
func TestAppendSeal(t *testing.T) {
	for _, id := range []string{"k", strings.Repeat("k", envelope.MaxKeyIDLen)} {
		kr := newKeyring(t, envelope.Key{ID: id, Secret: fixedSecret(3)})
		for _, n := range []int{0, 1, 1000, 64 << 10} {
			payload := bytes.Repeat([]byte{'p'}, n)
			out, err := kr.AppendSeal([]byte(`{"envelope":"`), nil, payload)
			if err != nil {
				t.Fatal(err)
			}
			env, ok := strings.CutPrefix(string(out), `{"envelope":"`)
			if !ok || len(env) > envelope.MaxLen(n) {
				t.Fatalf("id %d bytes, payload %d: %d bytes, MaxLen %d", len(id), n, len(env), envelope.MaxLen(n))
			}
			for _, open := range []func() ([]byte, error){func() ([]byte, error) { return kr.Open(env) }, func() ([]byte, error) { return kr.OpenBytes([]byte(env)) }} {
				if got, err := open(); err != nil || !bytes.Equal(got, payload) {
					t.Fatalf("opened %d bytes, %v; want %d", len(got), err, n)
				}
			}
		}
	}
	if _, err := (&envelope.Keyring{}).AppendSeal(nil, nil, nil); !errors.Is(err, envelope.ErrNoKeys) {
		t.Fatalf("no keys: %v", err)
	}
}

func FuzzParseKey(f *testing.F) {
	f.Add(base64.StdEncoding.EncodeToString(fixedSecret(1)))
	f.Add(base64.RawURLEncoding.EncodeToString(fixedSecret(200)))
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		if got, err := envelope.ParseKey(in); err == nil && len(got) != envelope.SecretSize {
			t.Fatalf("ParseKey(%q) = %d bytes without error", in, len(got))
		}
	})
}

var sizes = []struct {
	name string
	n    int
}{{"1KiB", 1 << 10}, {"64KiB", 64 << 10}}

// BenchmarkSealOpen measures an envelope round trip; compare with BenchmarkRawAESGCM
// to see what the data key, its wrapping and the base64 cost on top.
func BenchmarkSealOpen(b *testing.B) {
	kr := newKeyring(b, k1)
	for _, size := range sizes {
		b.Run(size.name, func(b *testing.B) {
			plaintext := make([]byte, size.n)
			b.SetBytes(int64(size.n))
			b.ReportAllocs()
			for b.Loop() {
				env, err := kr.Seal(crand.Reader, plaintext)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := kr.Open(env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRawAESGCM is the floor: one AES-256-GCM seal and open of the same bytes
// with a fixed key and nonce and reused buffers.
func BenchmarkRawAESGCM(b *testing.B) {
	block, err := aes.NewCipher(k1.Secret)
	if err != nil {
		b.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		b.Fatal(err)
	}
	nonce := make([]byte, aead.NonceSize())
	for _, size := range sizes {
		b.Run(size.name, func(b *testing.B) {
			plaintext := make([]byte, size.n)
			sealed := make([]byte, 0, size.n+aead.Overhead())
			opened := make([]byte, 0, size.n)
			b.SetBytes(int64(size.n))
			b.ReportAllocs()
			for b.Loop() {
				sealed = aead.Seal(sealed[:0], nonce, plaintext, nil)
				if _, err := aead.Open(opened[:0], nonce, sealed, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
