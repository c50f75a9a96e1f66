package httpapi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/bundle"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/namespace"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/utf8cut"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// BundleOf captures w as a failure bundle, with the options that shape its answers.
func (a *API) BundleOf(w *world.World) *bundle.Bundle {
	snap, rec := w.Capture()
	ns := w.Namespace()
	if ns != "" {
		ns = namespace.Prefix + ns
	}
	rl := "on"
	if w.RateLimitsOff() {
		rl = "off"
	}
	m := bundle.Manifest{
		HostemuVersion: a.cfg.Version,
		CreatedAt:      time.Now().UTC().Truncate(time.Millisecond),
		Namespace:      ns,
		Seed:           rec.Seed,
		Scenario:       rec.Scenario.Name,
		Clock:          bundle.Clock{Mode: string(rec.ClockMode), Now: rec.Now},
		RateLimits:     rl,
		EdgeDomain:     w.EdgeDomain(),
		CORSOrigins:    append([]string(nil), a.cfg.CORSOrigins...),
		IDDice:         rec.IDDice,
	}
	if !rec.ClockStart.IsZero() {
		start := rec.ClockStart
		m.Clock.Start = &start
	}
	// the text of every scenario, unparsed: List would parse every built-in for its
	// description, which the bundle does not hold
	scenarios := w.Scenarios().Sources()
	scenarios[rec.Scenario.Name] = rec.Scenario.Raw // the version in force, even if its file is gone
	// the uploads some deployment references (a big world has many deployments and
	// few uploads: each file of each deployment is looked up, none is added)
	uploaded := make(map[string][]byte, len(snap.Uploads))
	for _, u := range snap.Uploads {
		uploaded[u.Digest] = u.Content
	}
	files := map[string][]byte{}
	for i := 0; i < len(snap.Deployments) && len(files) < len(uploaded); i++ {
		for _, digest := range snap.Deployments[i].Files {
			if content, ok := uploaded[digest]; ok {
				files[digest] = content
			}
		}
	}
	cov := w.Coverage().Report()
	return &bundle.Bundle{Manifest: m, State: snap, Faults: rec.Faults, Lifecycles: rec.Lifecycles,
		Journal: rec.Journal, Events: rec.Events, Scenarios: scenarios, Files: files, Coverage: &cov}
}

// unsafeName keeps a file name to letters, digits, dots, dashes and underscores
// (compiled on the first download, not at start-up).
var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// maxBundleExports bounds the bundle exports under way at once, every world together:
// each holds a copy of its world's state and a temporary file of its text.
const maxBundleExports = 2

// getBundle answers GET /_emulator/bundle: the world as a gzipped tar archive, streamed.
func (a *API) getBundle(c *gin.Context) { a.writeBundle(c, "") }

// maxFailureBody bounds POST /_emulator/bundle's JSON body: the failure's text at its
// bound, escaped as JSON may escape it (\u0000 for a byte is six), with room.
const maxFailureBody = 8 * bundle.MaxFailure

// failureRequest is POST /_emulator/bundle's body.
type failureRequest struct {
	// Failure is why the test failed, as its runner tells: failure.txt.
	Failure string `json:"failure"`
}

// postBundle answers POST /_emulator/bundle: GET's archive with failure.txt, the
// failure a testkit writes the bundle for. The body is checked before anything is
// written: unknown keys are 400, a body over maxFailureBody or a failure over
// bundle.MaxFailure bytes is 413.
func (a *API) postBundle(c *gin.Context) {
	var req failureRequest
	if err := decodeStrict(c, &req, maxFailureBody); err != nil {
		a.renderError(c, err)
		return
	}
	if len(req.Failure) > bundle.MaxFailure {
		// the hint's cut falls on a character's boundary: a client following it sends
		// whole UTF-8, never half an é
		keep := utf8cut.At(req.Failure, bundle.MaxFailure)
		a.renderError(c, apperr.Errorf(apperr.PayloadTooLarge, "failure is %d bytes, over the bound of %d: send its first %d bytes", len(req.Failure), bundle.MaxFailure, keep))
		return
	}
	a.writeBundle(c, req.Failure)
}

// writeBundle streams the world's bundle, with failure.txt when failure is not "".
func (a *API) writeBundle(c *gin.Context, failure string) {
	w := a.world(c)
	name := "default"
	if ns := w.Namespace(); ns != "" {
		name = namespace.Prefix + ns
	}
	file := unsafeName().ReplaceAllString("hostemu-"+name+"-"+time.Now().UTC().Format("20060102T150405Z"), "_") + ".hostemu.tgz"
	if c.Request.Method == http.MethodHead { // what a GET would answer, without taking the world
		h := c.Writer.Header()
		h.Set("Content-Type", "application/gzip")
		h.Set("Content-Disposition", `attachment; filename="`+file+`"`)
		c.Status(http.StatusOK)
		return
	}
	release, err := a.takeTurn(c, a.bundles, fmt.Sprintf("each of %d bundle exports", maxBundleExports))
	if err != nil {
		a.renderError(c, err)
		return
	}
	defer release()
	b := a.BundleOf(w)
	b.Failure = failure
	h := c.Writer.Header()
	h.Set("Content-Type", "application/gzip")
	h.Set("Content-Disposition", `attachment; filename="`+file+`"`)
	c.Status(http.StatusOK)
	bw := bufio.NewWriterSize(c.Writer, 64<<10)
	err = bundle.Write(bw, b, bundle.DefaultFilesBytes)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		a.log.Debug("bundle cut", "path", c.Request.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// putBundle answers PUT /_emulator/bundle: the world replaced with a bundle's, checked
// whole first; a bad bundle changes nothing.
func (a *API) putBundle(c *gin.Context) (any, error) {
	if err := bundleMedia(c); err != nil {
		return nil, err
	}
	release, err := a.takeTurn(c, a.imports, "another import")
	if err != nil {
		return nil, err
	}
	defer release()
	defer a.settle(c)
	w := a.world(c)
	b, err := a.readBundle(c, w.JournalSize())
	if err != nil {
		return nil, err
	}
	if err := Restore(w, b); err != nil { // held to --max-world-bytes, all it brings counted
		return nil, err
	}
	a.standFor(w, b)
	return bundleInfo(w, b), nil
}

// bundleMedia is 415 for a body that is not sent as a bundle is: application/gzip (or
// x-gzip, or octet-stream), or no Content-Type.
func bundleMedia(c *gin.Context) error {
	if ct := c.GetHeader("Content-Type"); ct != "" && !isBundleMedia(ct) {
		return apperr.Errorf(apperr.UnsupportedMediaType, "a bundle is sent as application/gzip, not %q", ct)
	}
	return nil
}

// isBundleMedia reports whether Content-Type ct is a bundle's: its type and subtype,
// case-insensitive and whatever parameters follow (RFC 9110, 8.3.1), are one of the
// three; "application/gzipped" is not.
func isBundleMedia(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	return strings.EqualFold(mt, "application/gzip") || strings.EqualFold(mt, "application/x-gzip") || strings.EqualFold(mt, "application/octet-stream")
}

// readBundle reads and checks the request's bundle whole, within --max-state-bytes,
// keeping journalKeep journal entries; the caller holds an import's turn and settles
// the body's charge. A bad bundle is 400 naming its problem, one too big 413.
func (a *API) readBundle(c *gin.Context, journalKeep int) (*bundle.Bundle, error) {
	max := a.cfg.Limits.stateBytes()
	if c.Request.ContentLength > max {
		return nil, apperr.Errorf(apperr.PayloadTooLarge, "the bundle is over the limit of %d bytes (--max-state-bytes)", max)
	}
	body, charge := io.Reader(c.Request.Body), func(int64) bool { return true }
	if m, ok := c.Request.Body.(*meteredBody); ok {
		body, charge = m.r, m.reserve
	}
	b, err := bundle.Read(&capped{r: body, left: max}, bundle.ReadOptions{
		MaxBytes: bundle.DefaultMaxBytes, StateMax: max, Charge: charge, JSONError: jsonError, Version: a.cfg.Version,
		JournalKeep: journalKeep,
	})
	switch {
	case errors.Is(err, state.ErrRefused):
		return nil, busy(c)
	case errors.Is(err, errBundleTooLarge):
		return nil, apperr.Errorf(apperr.PayloadTooLarge, "the bundle is over the limit of %d bytes (--max-state-bytes)", max)
	case err != nil:
		var be *bundle.Error
		if errors.As(err, &be) {
			return nil, apperr.New(apperr.InvalidRequest, "the bundle is refused, nothing changed: "+be.Error())
		}
		if _, coded := apperr.As(err); coded {
			return nil, err
		}
		return nil, apperr.New(apperr.InvalidRequest, "the bundle is refused, nothing changed: "+err.Error())
	}
	return b, nil
}

// standFor makes the bundle's namespace, gone from here, stand for w's: its tokens and
// deployment hosts find the replayed world.
func (a *API) standFor(w *world.World, b *bundle.Bundle) {
	if n, ok := a.ns.ByLabel(w.Namespace()); ok {
		a.ns.Alias(namespace.LabelOfID(b.Manifest.Namespace), n)
	}
}

// createNamespaceFromBundle answers POST /_emulator/namespaces with a bundle (the
// dashboard's "Open a bundle"): a new namespace replaying it, made in one call. The
// namespace starts on the bundle's scenario (bundleScenario), so neither the server's
// start-up scenario nor its file's problems decide whether a bundle opens. A bundle
// refused on replay leaves no namespace behind.
func (a *API) createNamespaceFromBundle(c *gin.Context) (any, error) {
	if err := a.ns.Room(); err != nil {
		return nil, err // before the body is read: --max-namespaces is reached
	}
	release, err := a.takeTurn(c, a.imports, "another import")
	if err != nil {
		return nil, err
	}
	defer release()
	defer a.settle(c)
	b, err := a.readBundle(c, a.w.JournalSize()) // every namespace keeps as many as the default world
	if err != nil {
		return nil, err
	}
	sc, err := bundleScenario(a.w.Scenarios(), b)
	if err != nil {
		return nil, err
	}
	// the replay runs before the namespace is registered: nobody sees it half made
	n, err := a.ns.CreateWith(namespace.Spec{}.StartOn(sc), func(w *world.World) error {
		return restoreOn(w, b, sc)
	})
	if err != nil {
		return nil, err
	}
	a.standFor(n.World, b)
	return created{namespaceFromBundle{
		Created: namespace.Created{Namespace: n.ID, Tokens: n.Tokens, CipherKey: n.CipherKey,
			ControlURL: a.baseURL(c.Request) + "/_emulator/namespaces/" + n.ID},
		Bundle: bundleInfo(n.World, b),
	}}, nil
}

// namespaceFromBundle is the answer to POST /_emulator/namespaces with a bundle: the
// namespace, and what PUT /_emulator/bundle would have answered.
type namespaceFromBundle struct {
	namespace.Created
	Bundle map[string]any `json:"bundle"`
}

// Restore replaces w with bundle b: its scenario is the registry's of the same name when
// the source is the same, else the bundle's own (for this world only).
func Restore(w *world.World, b *bundle.Bundle) error {
	sc, err := bundleScenario(w.Scenarios(), b)
	if err != nil {
		return err
	}
	return restoreOn(w, b, sc)
}

// restoreOn is Restore on sc, the bundle's scenario as bundleScenario chose it already
// (a namespace made from a bundle starts on it: the replay runs on the same one, its
// source not parsed twice).
func restoreOn(w *world.World, b *bundle.Bundle, sc *scenario.Scenario) error {
	m := b.Manifest
	var start time.Time
	if m.Clock.Start != nil {
		start = *m.Clock.Start
	}
	rec := world.Recording{
		Seed: m.Seed, ClockMode: clockMode(m.Clock.Mode), Now: m.Clock.Now, ClockStart: start, Scenario: sc,
		Faults: b.Faults, Journal: b.Journal, Events: b.Events, Lifecycles: b.Lifecycles, IDDice: m.IDDice,
		Coverage: b.Coverage,
	}
	if err := w.CheckRecording(rec); err != nil {
		return refused(err)
	}
	info := world.ReplayInfo{CreatedAt: state.Timestamp(m.CreatedAt), HostemuVersion: m.HostemuVersion, Namespace: m.Namespace,
		Label: namespace.LabelOfID(m.Namespace), Failure: b.Failure}
	if err := w.Restore(b.State, rec, info); err != nil {
		return refused(err)
	}
	return nil
}

// bundleScenario is the scenario bundle b runs on: reg's of the same name when its
// source is the same, else the bundle's own (parsed here, for one world only).
func bundleScenario(reg *scenario.Registry, b *bundle.Bundle) (*scenario.Scenario, error) {
	name := b.Manifest.Scenario
	src := b.Scenarios[name]
	if sc, ok := reg.Get(name); ok && string(sc.Raw) == string(src) {
		return sc, nil
	}
	parsed, problems := scenario.Parse("bundle:scenarios/"+name+".yaml", src)
	if len(problems) > 0 || parsed == nil {
		msg := "does not parse"
		if len(problems) > 0 {
			msg = problems[0].String()
		}
		return nil, apperr.Errorf(apperr.InvalidRequest, "the bundle is refused, nothing changed: scenarios/%s.yaml: %s", name, msg)
	}
	if parsed.Name != name {
		return nil, apperr.Errorf(apperr.InvalidRequest, "the bundle is refused, nothing changed: scenarios/%s.yaml names the scenario %q", name, parsed.Name)
	}
	return parsed, nil
}

// refused words a world's refusal of a bundle (a fresh *apperr.Error, reworded in
// place).
func refused(err error) error {
	var e *apperr.Error
	if errors.As(err, &e) {
		e.Message = "the bundle is refused, nothing changed: " + e.Message
	}
	return err
}

func clockMode(s string) clock.Mode { return clock.Mode(s) }

// bundleInfo is the answer to a PUT of a bundle: what was replayed.
func bundleInfo(w *world.World, b *bundle.Bundle) map[string]any {
	return map[string]any{
		"replayed":        w.Replayed(),
		"scenario":        w.Scenario().Name,
		"clock":           w.Clock(),
		"journal_entries": len(b.Journal),
		"faults":          len(b.Faults.Faults),
	}
}

// errBundleTooLarge is capped's error past its bound.
var errBundleTooLarge = errors.New("bundle body over the limit")

// capped reads at most left bytes, then fails with errBundleTooLarge.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			return 0, errBundleTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
