package state

import (
	"crypto/subtle"
	"hash/maphash"
	"strconv"
	"strings"
)

// LimitScopeMark ends a token's rate-limit key, before its scope ("hosting|t3#deploy"),
// so the limiter finds the scope's own limits (rate_limits.per_scope) in the key alone.
// Made once per token: the hot path adds nothing.
const LimitScopeMark = "#"

// tokenRec is a stored token and the key its requests are counted under: a short
// stable name, so rate-limit counters never hold the token itself.
type tokenRec struct {
	tok Token
	key string
}

// tokenTable finds tokens by a keyed hash (maphash, with a random seed) and compares
// the candidates in constant time: how long a lookup takes says nothing about how much
// of a guess was right. It is cheaper per request than hashing with SHA-256.
type tokenTable struct {
	seed   maphash.Seed
	byHash map[uint64][]tokenRec
	n      int
	next   uint64
}

func newTokenTable() *tokenTable {
	return &tokenTable{seed: maphash.MakeSeed(), byHash: map[uint64][]tokenRec{}}
}

func (t *tokenTable) find(token string) (tokenRec, bool) {
	var found tokenRec
	ok := 0
	for _, r := range t.byHash[maphash.String(t.seed, token)] {
		if subtle.ConstantTimeCompare([]byte(r.tok.Token), []byte(token)) == 1 {
			found, ok = r, 1
		}
	}
	return found, ok == 1
}

// add adds a token, or changes the scope of one already there.
func (t *tokenTable) add(tok Token) {
	h := maphash.String(t.seed, tok.Token)
	recs := t.byHash[h]
	for i := range recs {
		if recs[i].tok.Token == tok.Token {
			base, _, _ := strings.Cut(recs[i].key, LimitScopeMark)
			recs[i].tok, recs[i].key = tok, base+LimitScopeMark+string(tok.Scope)
			return
		}
	}
	t.next++
	t.byHash[h] = append(recs, tokenRec{tok: tok, key: "hosting|t" + strconv.FormatUint(t.next, 10) + LimitScopeMark + string(tok.Scope)})
	t.n++
}

func (t *tokenTable) remove(token string) bool {
	h := maphash.String(t.seed, token)
	recs := t.byHash[h]
	for i := range recs {
		if recs[i].tok.Token == token {
			recs = append(recs[:i], recs[i+1:]...)
			if len(recs) == 0 {
				delete(t.byHash, h)
			} else {
				t.byHash[h] = recs
			}
			t.n--
			return true
		}
	}
	return false
}

func (t *tokenTable) all() []Token {
	out := make([]Token, 0, t.n)
	for _, recs := range t.byHash {
		for _, r := range recs {
			out = append(out, r.tok)
		}
	}
	sortTokens(out)
	return out
}
