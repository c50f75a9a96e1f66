// Package namespace keeps the namespaces of one hostemu: isolated worlds created and
// deleted through the control API, each found by its id or by the tokens it issued,
// expired when idle, and bounded in number.
//
// A namespace's tokens and decryption key carry its label ("ns_<label>_…"), so finding
// the world of a request is a prefix check and one map read, and a token minted inside
// a namespace (world.Config.TokenPrefix) routes there with no table to keep in step.
// The secret part of every token is from crypto/rand; the label only names the world.
package namespace

import (
	"crypto/rand"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// Prefix starts every namespace id; the rest is the namespace's label.
const Prefix = "ns_"

// labelLen is the length of a label: 12 base32 characters, 60 bits, a valid DNS label.
const labelLen = 12

// Tokens are a namespace's hosting tokens, one per scope.
type Tokens struct {
	Read   string `json:"read"`
	Deploy string `json:"deploy"`
	Admin  string `json:"admin"`
}

// Identity is what a namespace is known by: its id, its label (the id without "ns_",
// which its deployment hosts carry) and its credentials.
type Identity struct {
	ID        string
	Label     string
	Tokens    Tokens
	CipherKey string
}

// TokenPrefix starts every token and key of the namespace with this label.
func TokenPrefix(label string) string { return Prefix + label + "_" }

// newIdentity draws a label and credentials from crypto/rand.
func newIdentity() Identity {
	label := strings.ToLower(rand.Text()[:labelLen])
	p := TokenPrefix(label)
	secret := func() string { return strings.ToLower(rand.Text()) }
	return Identity{
		ID: Prefix + label, Label: label,
		Tokens:    Tokens{Read: p + "read_" + secret(), Deploy: p + "deploy_" + secret(), Admin: p + "admin_" + secret()},
		CipherKey: p + "cipher_" + secret(),
	}
}

// labelOfToken is the label a namespace token or key carries, or "".
func labelOfToken(tok string) string {
	if len(tok) <= len(Prefix) || tok[:len(Prefix)] != Prefix {
		return ""
	}
	rest := tok[len(Prefix):]
	if i := strings.IndexByte(rest, '_'); i > 0 {
		return rest[:i]
	}
	return ""
}

// LabelOfID is the label of a namespace id, or "" when id is not one.
func LabelOfID(id string) string {
	if len(id) <= len(Prefix) || id[:len(Prefix)] != Prefix {
		return ""
	}
	return id[len(Prefix):]
}

// Namespace is one live namespace.
type Namespace struct {
	Identity
	World     *world.World
	CreatedAt time.Time
	lastUsed  atomic.Int64 // Unix nanoseconds of the registry's clock
}

// LastUsed is when a request or control call last reached the namespace.
func (n *Namespace) LastUsed() time.Time { return time.Unix(0, n.lastUsed.Load()).UTC() }

// Info describes a namespace for GET /_emulator/namespaces.
type Info struct {
	Namespace  string          `json:"namespace"`
	CreatedAt  state.Timestamp `json:"created_at"`
	LastUsedAt state.Timestamp `json:"last_used_at"`
	Scenario   string          `json:"scenario"`
	Clock      string          `json:"clock"`
	// Replayed names the failure bundle the namespace's world was restored from (its
	// failure's first line only: a list holds many).
	Replayed *world.ReplayInfo `json:"replayed,omitempty"`
}

func (n *Namespace) info() Info {
	return Info{
		Namespace: n.ID, CreatedAt: state.Timestamp(n.CreatedAt), LastUsedAt: state.Timestamp(n.LastUsed()),
		Scenario: n.World.Scenario().Name, Clock: string(n.World.ClockMode()), Replayed: n.World.Replayed().Brief(),
	}
}
