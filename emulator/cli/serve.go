package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/gctune"
	"github.com/hostemu/hostemu/emulator/internal/hugeheap"
)

// processStart approximates the process's start, for the start-up time in the log.
var processStart = time.Now()

// shutdownTimeout bounds how long in-flight requests may finish after a signal.
var shutdownTimeout = 5 * time.Second

// orphanTimeout bounds the same when standard input ended under --watch-stdin: the
// parent that started hostemu is gone, and the promise is an exit within a second
// (its port free for the next one), so in-flight requests get less time than on a
// signal; what --state holds is saved all the same.
var orphanTimeout = 500 * time.Millisecond

// errStdinClosed is the stop's cause when standard input ends under --watch-stdin.
var errStdinClosed = errors.New("standard input closed (--watch-stdin): whoever started hostemu is gone")

// stdinKey carries the reader --watch-stdin watches in a context: Main's is os.Stdin,
// tests give a pipe of their own (see withStdin).
type stdinKey struct{}

// withStdin makes r the standard input serve watches under --watch-stdin.
func withStdin(ctx context.Context, r io.Reader) context.Context {
	return context.WithValue(ctx, stdinKey{}, r)
}

// watchStdin reads ctx's standard input (os.Stdin unless withStdin said otherwise),
// discarding it, and ends the returned context with errStdinClosed once it ends or
// fails: the pipe's other end is a parent's, closed by the kernel when the parent dies,
// even by SIGKILL (esbuild's way of never outliving its parent). The reading goroutine
// ends with the input; the process exits soon after anyway.
func watchStdin(ctx context.Context) (context.Context, context.CancelFunc) {
	in, ok := ctx.Value(stdinKey{}).(io.Reader)
	if !ok {
		in = os.Stdin
	}
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		io.Copy(io.Discard, in)
		cancel(errStdinClosed)
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// serve runs the emulator until ctx ends, then shuts it down: 0 on a clean stop, 1 when
// it cannot listen or stop cleanly, 2 for a bad flag or variable or for fixtures,
// scenario or state that the flags name and that do not load.
func serve(ctx context.Context, args []string, getenv func(string) string, environ []string, stdout, stderr io.Writer) int {
	return serveWith(ctx, args, getenv, environ, stdout, stderr, nil, nil)
}

// serveWith is serve; configure, when set, adjusts the configuration the flags made
// before anything listens (a replay's HTTPS port), and prepare runs on the emulator once
// it listens and before it serves (a replay loads its bundle there): an error stops the
// start, exit 2.
func serveWith(ctx context.Context, args []string, getenv func(string) string, environ []string, stdout, stderr io.Writer, configure func(*Config), prepare func(*emulator.Server) error) int {
	cfg, err := Load(args, getenv)
	if err == nil && configure != nil {
		configure(&cfg)
	}
	if errors.Is(err, errHelp) {
		serveUsage(stdout)
		return 0
	}
	if err == nil {
		err = cfg.checkPaths(os.Stat)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hostemu: %v\n", err)
		return 2
	}
	if cfg.WatchStdin {
		var stop context.CancelFunc
		ctx, stop = watchStdin(ctx)
		defer stop()
	}
	log := newLogger(stderr, cfg)
	for _, w := range UnknownVariables(environ) {
		log.Warn(w)
	}
	cfg.resolveCADir(getenv, log)
	opts := cfg.Options
	opts.Logger = log
	opts.Version, _ = buildVersion()

	// the world the flags name is built while listening starts: a big one (--state,
	// --fixtures that generate many deployments) on huge pages where the kernel gives
	// them on request (hugeheap); nothing after the start asks for them
	stopHuge := hugeheap.Allow()
	defer stopHuge()
	srv, err := emulator.Listen(opts)
	if err != nil {
		err = cfg.NameOrigins(err)
		fmt.Fprintf(stderr, "hostemu: cannot start: %v\n", err)
		var ce *emulator.ConfigError
		if errors.As(err, &ce) {
			return 2
		}
		return 1
	}
	if prepare != nil {
		if err := prepare(srv); err != nil {
			fmt.Fprintf(stderr, "hostemu: %v\n", err)
			srv.Shutdown(context.Background())
			return 2
		}
	}
	stopHuge()
	defer gctune.Start(gctune.DefaultHeadroom)() // the process is ours: room on a small heap
	log.Info("listening", "url", srv.URL(), "cipher_url", srv.CipherURL(), "control_url", srv.ControlURL(), "tls_url", srv.TLSURL(),
		"startup", time.Since(processStart).Round(time.Microsecond))
	printBanner(stdout, srv, cfg)

	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	grace := shutdownTimeout
	select {
	case <-ctx.Done():
		if errors.Is(context.Cause(ctx), errStdinClosed) {
			grace = orphanTimeout
		}
		log.Info("stopping", "reason", context.Cause(ctx), "grace", grace)
	case err := <-served:
		// Serve only returns early when a listener fails; it has shut down already.
		log.Error("serving failed", "err", err)
		srv.Shutdown(context.Background())
		return 1
	}

	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err = srv.Shutdown(sctx)
	if serr := <-served; serr != nil {
		err = errors.Join(err, serr)
	}
	if err != nil {
		log.Error("unclean stop", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

func newLogger(w io.Writer, cfg Config) *slog.Logger {
	ho := &slog.HandlerOptions{Level: cfg.LogLevel, ReplaceAttr: durationText}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, ho))
	}
	return slog.New(slog.NewTextHandler(w, ho))
}

// printBanner prints, once, a stable first line that scripts can wait for, then the
// emulator's banner.
func printBanner(w io.Writer, srv *emulator.Server, cfg Config) {
	if cfg.LogFormat == "json" {
		// one JSON record, for log collectors that read stdout too
		rec := srv.BannerInfo()
		if cfg.Quiet {
			rec = emulator.BannerInfo{URL: rec.URL}
		}
		b, _ := json.Marshal(struct {
			Time  string `json:"time"`
			Level string `json:"level"`
			Msg   string `json:"msg"`
			emulator.BannerInfo
		}{time.Now().UTC().Format(time.RFC3339Nano), "INFO", "hostemu listening on " + rec.URL, rec})
		w.Write(append(b, '\n'))
		return
	}
	if cfg.Quiet {
		fmt.Fprint(w, "hostemu listening on "+srv.URL()+"\n")
		return
	}
	// one write: a reader that has seen the first line has the whole banner
	fmt.Fprint(w, "hostemu listening on "+srv.URL()+"\n"+srv.Banner())
}

// durationText writes durations as Go writes them ("5s"), not as nanoseconds, in every
// log format.
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}
