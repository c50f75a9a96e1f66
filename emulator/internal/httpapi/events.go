package httpapi

import (
	"bufio"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/world"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/compress"
	"github.com/hostemu/hostemu/emulator/internal/events"
)

// Server-sent events: GET /_emulator/events streams the world's changes as they happen
// (text/event-stream: "id", "event" and one "data" line of JSON per event), for the
// dashboard and for any tool (curl -N). ?types=deployment,domain keeps some types.

// heartbeatEvery is how often an idle stream sends a comment line, so that proxies and
// clients do not take it for dead.
const heartbeatEvery = 15 * time.Second

// sseWriteTimeout bounds one write to a subscriber: a client that stopped reading has
// its stream cut, and holds neither the handler nor a server's shutdown.
const sseWriteTimeout = 10 * time.Second

// endEvent is the last event of a stream the emulator ends, saying why.
const endEvent = "end"

// DefaultMaxSubscribers bounds the event streams open at once, across every world: each
// costs a channel send per event it wants.
const DefaultMaxSubscribers = 64

func (a *API) events(c *gin.Context) {
	types, err := eventTypes(c.Request.URL.Query()["types"])
	if err != nil {
		a.renderError(c, err)
		return
	}
	if n := a.subscribers.Add(1); n > int64(a.cfg.Limits.maxSubscribers()) {
		a.subscribers.Add(-1)
		c.Header("Retry-After", "1")
		a.renderError(c, apperr.Errorf(apperr.RateLimited, "%d event streams are open, the most hostemu serves at once; close one", a.cfg.Limits.maxSubscribers()))
		return
	}
	defer a.subscribers.Add(-1)
	hub := a.world(c).Events()
	sub := hub.Subscribe(types...) // before the first byte: a client that read it misses nothing
	defer hub.Unsubscribe(sub)

	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // tell nginx-like proxies not to buffer
	if compress.AcceptsGzip(c.Request) {
		compress.Skip(h)
	}
	c.Status(http.StatusOK)
	if c.Request.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(c.Writer)
	bw := bufio.NewWriterSize(c.Writer, 8<<10)
	send := func() bool {
		rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
		return bw.Flush() == nil && rc.Flush() == nil
	}
	bw.WriteString(": hostemu events\nretry: 2000\n\n")
	if !send() {
		return
	}
	beat := time.NewTicker(heartbeatEvery)
	defer beat.Stop()
	for {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				writeEnd(bw, sub.Reason())
				send()
				return
			}
			writeEvent(bw, ev)
			for more := true; more && bw.Buffered() < 4<<10; { // batch what is already queued
				select {
				case ev, ok = <-sub.C():
					if !ok {
						writeEnd(bw, sub.Reason())
						send()
						return
					}
					writeEvent(bw, ev)
				default:
					more = false
				}
			}
			if !send() {
				return
			}
		case <-beat.C:
			bw.WriteString(": ping\n\n")
			if !send() {
				return
			}
		case <-a.release:
			writeEnd(bw, events.ReasonClosed)
			send()
			return
		case <-c.Request.Context().Done():
			return
		}
	}
}

// eventTypes parses ?types=a,b (the parameter may also repeat); none keeps every type.
// An unknown type is 400 invalid_request naming the closest known one: a typo must not
// leave a stream silent.
func eventTypes(qs []string) ([]string, error) {
	var types []string
	for _, q := range qs {
		for t := range strings.SplitSeq(q, ",") {
			t = strings.TrimSpace(t)
			if !slices.Contains(world.EventTypes, t) {
				return nil, apperr.Errorf(apperr.InvalidRequest, "unknown event type %q in types%s", t, yamlcheck.Suggest(t, world.EventTypes))
			}
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	return types, nil
}

func writeEvent(bw *bufio.Writer, ev events.Event) {
	bw.WriteString("id: ")
	bw.WriteString(strconv.FormatUint(ev.Seq, 10))
	bw.WriteString("\nevent: ")
	bw.WriteString(ev.Type)
	bw.WriteString("\ndata: ")
	bw.Write(ev.Data) // JSON from encoding/json: one line
	bw.WriteString("\n\n")
}

func writeEnd(bw *bufio.Writer, reason string) {
	if reason == "" {
		return
	}
	b, _ := json.Marshal(map[string]string{"reason": reason})
	bw.WriteString("event: " + endEvent + "\ndata: ")
	bw.Write(b)
	bw.WriteString("\n\n")
}
