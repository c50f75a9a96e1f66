package httpapi

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

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

func (a *API) events(c *gin.Context) {
	keep := eventTypes(c.Query("types"))
	hub := a.world(c).Events()
	sub := hub.Subscribe() // before the first byte: a client that read it misses nothing
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
			writeEvent(bw, ev, keep)
			for more := true; more && bw.Buffered() < 4<<10; { // batch what is already queued
				select {
				case ev, ok = <-sub.C():
					if !ok {
						writeEnd(bw, sub.Reason())
						send()
						return
					}
					writeEvent(bw, ev, keep)
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

// eventTypes parses ?types=a,b; nil keeps every type.
func eventTypes(q string) map[string]bool {
	if q == "" {
		return nil
	}
	keep := map[string]bool{endEvent: true}
	for _, t := range strings.Split(q, ",") {
		keep[strings.TrimSpace(t)] = true
	}
	return keep
}

func writeEvent(bw *bufio.Writer, ev events.Event, keep map[string]bool) {
	if keep != nil && !keep[ev.Type] {
		return
	}
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
