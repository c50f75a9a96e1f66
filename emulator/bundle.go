package emulator

import (
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/bundle"
	"github.com/hostemu/hostemu/emulator/internal/httpapi"
)

// BundleManifest is a failure bundle's manifest.json.
type BundleManifest = bundle.Manifest

// Bundle is a failure bundle read and checked whole (ReadBundle), ready to replay.
type Bundle struct {
	Manifest BundleManifest
	b        *bundle.Bundle
}

// ReadBundle reads and checks a whole failure bundle (a GET /_emulator/bundle archive),
// its state at most maxStateBytes (Limits' default when 0) and its journal's newest
// journalKeep entries kept (bundle.DefaultJournalKeep when 0). It is read once: its
// manifest chooses how to start, then Replay puts it in the world.
func ReadBundle(r io.Reader, maxStateBytes int64, journalKeep int) (*Bundle, error) {
	if maxStateBytes <= 0 {
		maxStateBytes = Limits{}.withDefaults().MaxStateBytes
	}
	b, err := bundle.Read(r, bundle.ReadOptions{StateMax: maxStateBytes, JournalKeep: journalKeep})
	if err != nil {
		return nil, fmt.Errorf("the bundle is refused: %w", err)
	}
	return &Bundle{Manifest: b.Manifest, b: b}, nil
}

// Replay replaces the default world with bundle b's (PUT /_emulator/bundle): its state,
// scenario, faults, journal (marked replayed), and a manual clock at the moment it was
// taken. A bundle the world refuses changes nothing.
func (e *Emulator) Replay(b *Bundle) error {
	if err := httpapi.Restore(e.world, b.b); err != nil {
		return err
	}
	m := b.Manifest
	e.log.Info("replaying a failure bundle", "created_at", m.CreatedAt.Format(time.RFC3339), "hostemu_version", m.HostemuVersion,
		"namespace", m.Namespace, "now", m.Clock.Now.Format(time.RFC3339Nano), "scenario", m.Scenario, "journal_entries", len(b.b.Journal))
	return nil
}

// Failure is why the test the bundle was written for failed (its failure.txt), "" when
// it carries none.
func (b *Bundle) Failure() string { return b.b.Failure }

// EdgeURL is the URL of the bundle's first deployment (nil when the world has none or
// it does not parse): its scheme and port are where the edge listened in the world the
// bundle was taken from, its host what the edge answers for (the deployments are all on
// one edge).
func (b *Bundle) EdgeURL() *url.URL {
	if len(b.b.State.Deployments) == 0 {
		return nil
	}
	u, err := url.Parse(b.b.State.Deployments[0].URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil
	}
	return u
}
