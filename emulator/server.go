package emulator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/transport"
)

// Server is an emulator bound to its listeners: the hosting service, the edge and the
// control API on one, the decryption service on its own when Options.CipherAddr is set,
// the control API on its own when Options.ControlAddr is, and the first one's twin over
// HTTPS when Options.TLSAddr is set.
type Server struct {
	emu         *Emulator
	conns       *transport.Conns
	ln          net.Listener
	cipherLn    net.Listener
	controlLn   net.Listener // the control API's own, with Options.ControlAddr
	tlsLn       net.Listener
	moved       bool // Addr was taken: ln is a free port (Options.AddrFallback)
	tlsMoved    bool // TLSAddr was taken: tlsLn is a free port (Options.TLSAddrFallback)
	http        *http.Server
	cipherHTTP  *http.Server
	controlHTTP *http.Server
	tlsHTTP     *http.Server
	closeOnce   sync.Once
	closeErr    error
	janitorDone chan struct{} // stops the connections' janitor
}

// Listen builds an emulator and binds its listeners synchronously, so that URL is valid
// as soon as it returns; call Serve to start answering.
func Listen(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	ln, moved, err := transport.ListenFallback(opts.Addr, opts.AddrFallback)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, moved: moved, janitorDone: make(chan struct{})}
	if opts.CipherAddr != "" {
		if s.cipherLn, err = net.Listen("tcp", opts.CipherAddr); err != nil {
			ln.Close()
			return nil, err
		}
	}
	if opts.ControlAddr != "" {
		if s.controlLn, err = net.Listen("tcp", opts.ControlAddr); err != nil {
			s.closeListeners()
			return nil, err
		}
	}
	if opts.TLSAddr != "" {
		if s.tlsLn, s.tlsMoved, err = transport.ListenFallback(opts.TLSAddr, opts.TLSAddrFallback); err != nil {
			s.closeListeners()
			return nil, err
		}
	}
	opts.urlForm = state.URLForm{Scheme: "http", Port: transport.Port(s.ln.Addr())}
	if s.tlsLn != nil {
		opts.urlForm = state.URLForm{Scheme: "https", Port: transport.Port(s.tlsLn.Addr())}
		opts.tlsURL = "https://" + dialable(s.tlsLn.Addr())
	}
	if s.emu, err = New(opts); err != nil {
		s.closeListeners()
		return nil, err
	}
	lim, log := opts.Limits.withDefaults().transport(), s.emu.log
	s.conns = transport.NewConns(lim, log)
	s.emu.tunnels.ConnState = s.conns.Track // tunnels count, and idle ones are evictable
	s.ln = s.conns.Listener(s.ln)
	s.http = transport.HTTPServer(s.emu.Handler(), lim, s.conns, log)
	if s.cipherLn != nil {
		s.cipherLn = s.conns.Listener(s.cipherLn)
		s.cipherHTTP = transport.HTTPServer(s.emu.CipherHandler(), lim, s.conns, log)
	}
	if s.controlLn != nil {
		s.controlLn = s.conns.Listener(s.controlLn)
		s.controlHTTP = transport.HTTPServer(s.emu.ControlHandler(), lim, s.conns, log)
	}
	if s.tlsLn != nil {
		s.tlsLn = s.conns.Listener(s.tlsLn)
		s.tlsHTTP = transport.TLSServer(s.emu.Handler(), lim, s.conns, s.emu.TLSConfig(), log)
	}
	return s, nil
}

func (s *Server) closeListeners() {
	for _, ln := range []net.Listener{s.ln, s.cipherLn, s.controlLn, s.tlsLn} {
		if ln != nil {
			ln.Close()
		}
	}
}

// Emulator is the world the server serves.
func (s *Server) Emulator() *Emulator { return s.emu }

// URL is the hosting service's base URL, e.g. http://127.0.0.1:4700.
func (s *Server) URL() string { return "http://" + dialable(s.ln.Addr()) }

// CipherURL is the decryption service's base URL (URL when it shares the listener).
func (s *Server) CipherURL() string {
	if s.cipherLn == nil {
		return s.URL()
	}
	return "http://" + dialable(s.cipherLn.Addr())
}

// ControlURL is the control API's base URL (URL unless Options.ControlAddr gives it its
// own listener).
func (s *Server) ControlURL() string {
	if s.controlLn == nil {
		return s.URL()
	}
	return "http://" + dialable(s.controlLn.Addr())
}

// Banner is the start-up text: where each service listens, really (a wildcard address
// is named as such, with the URL to use from this machine), and the credentials.
func (s *Server) Banner() string {
	listeners := []string{s.ln.Addr().String()}
	for _, ln := range []net.Listener{s.cipherLn, s.controlLn, s.tlsLn} {
		if ln != nil {
			listeners = append(listeners, ln.Addr().String())
		}
	}
	b := s.emu.banner(s.URL(), s.CipherURL(), s.ControlURL(), listeners)
	if s.moved {
		b += fmt.Sprintf("  %s was in use, so hostemu took a free port: %s\n", s.emu.opts.Addr, s.URL())
	}
	if u := s.TLSURL(); u != "" {
		b += fmt.Sprintf("  HTTPS            %s  (trust the CA: hostemu ca install, or %s/_emulator/ca.pem)\n", u, s.ControlURL())
		if s.tlsMoved {
			b += fmt.Sprintf("                   %s was in use, so HTTPS took a free port\n", s.emu.opts.TLSAddr)
		}
	}
	return b
}

// dialable turns a wildcard listen address into one a client on this host can dial.
func dialable(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}

// Serve answers requests until Shutdown. It returns nil after a clean shutdown.
func (s *Server) Serve() error {
	go s.conns.Run(s.janitorDone)
	errc := make(chan error, 4)
	go func() { errc <- s.http.Serve(s.ln) }()
	n := 1
	if s.cipherHTTP != nil {
		n++
		go func() { errc <- s.cipherHTTP.Serve(s.cipherLn) }()
	}
	if s.controlHTTP != nil {
		n++
		go func() { errc <- s.controlHTTP.Serve(s.controlLn) }()
	}
	if s.tlsHTTP != nil {
		n++
		go func() { errc <- s.tlsHTTP.ServeTLS(s.tlsLn, "", "") }()
	}
	var first error
	for range n {
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) && first == nil {
			first = err
			s.Shutdown(context.Background())
		}
	}
	return first
}

// Shutdown stops accepting, lets in-flight requests finish until ctx ends, then closes
// the emulator (stopping its clock and watchers and saving state when configured).
func (s *Server) Shutdown(ctx context.Context) error {
	s.closeOnce.Do(func() {
		close(s.janitorDone)
		s.emu.Release()
		err := s.http.Shutdown(ctx)
		for _, srv := range []*http.Server{s.cipherHTTP, s.controlHTTP, s.tlsHTTP} {
			if srv != nil {
				err = errors.Join(err, srv.Shutdown(ctx))
			}
		}
		err = errors.Join(err, s.emu.tunnels.Shutdown(ctx))
		s.closeErr = errors.Join(err, s.emu.Close())
	})
	return s.closeErr
}

// BannerInfo is the banner as data: what --log-format json prints as one record.
type BannerInfo struct {
	URL        string `json:"url"`
	Version    string `json:"version,omitempty"`
	Scenario   string `json:"scenario,omitempty"`
	Clock      string `json:"clock,omitempty"`
	Now        string `json:"now,omitempty"`
	HostingAPI string `json:"hosting_api,omitempty"`
	CipherAPI  string `json:"decryption_api,omitempty"`
	Edge       string `json:"edge,omitempty"`
	ControlAPI string `json:"control_api,omitempty"`
	Dashboard  string `json:"dashboard,omitempty"`
	Docs       string `json:"docs,omitempty"`
	TLSURL     string `json:"tls_url,omitempty"`
	// Tokens are the first hosting token of each scope, as the text banner prints them.
	Tokens    map[string]string `json:"tokens,omitempty"`
	CipherKey string            `json:"cipher_api_key,omitempty"`
	Warnings  []string          `json:"warnings,omitempty"`
}

// BannerInfo is Banner's content as data.
func (s *Server) BannerInfo() BannerInfo {
	e, w := s.emu, s.emu.world
	url, control := s.URL(), s.ControlURL()
	form := w.URLForm()
	if form == (state.URLForm{}) {
		form = state.URLForm{Scheme: "http", Port: urlPort(url)}
	}
	b := BannerInfo{
		URL: url, Version: e.opts.Version, Scenario: w.Scenario().Name, Clock: string(w.ClockMode()), Now: w.Now().Format(time.RFC3339),
		HostingAPI: url + "/v1", CipherAPI: s.CipherURL() + "/v1", Edge: form.URL("<project>-<suffix>."+w.EdgeDomain()) + "/",
		ControlAPI: control + "/_emulator", Dashboard: control + "/dashboard", Docs: url + "/docs/errors", TLSURL: s.TLSURL(),
		Tokens: map[string]string{},
	}
	for _, t := range w.Tokens() {
		if _, ok := b.Tokens[string(t.Scope)]; !ok {
			b.Tokens[string(t.Scope)] = t.Token
		}
	}
	if keys := w.CipherAPIKeys(); len(keys) > 0 {
		b.CipherKey = keys[0]
	}
	if e.opts.ControlExposed() {
		b.Warnings = append(b.Warnings, fmt.Sprintf("the control API listens beyond loopback (%s) with no --control-token: anyone who reaches it can reset the world and read every token; set --control-token", e.opts.controlAddr()))
	}
	if s.moved {
		b.Warnings = append(b.Warnings, fmt.Sprintf("%s was in use, so hostemu took a free port", e.opts.Addr))
	}
	if s.tlsMoved {
		b.Warnings = append(b.Warnings, fmt.Sprintf("%s was in use, so HTTPS took a free port", e.opts.TLSAddr))
	}
	return b
}
