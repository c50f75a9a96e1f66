package emulator

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Server is an emulator bound to its listeners: the hosting service and control API on
// one, the decryption service on its own when Options.CipherAddr is set.
type Server struct {
	emu        *Emulator
	ln         net.Listener
	cipherLn   net.Listener
	http       *http.Server
	cipherHTTP *http.Server
	closeOnce  sync.Once
	closeErr   error
}

// Listen builds an emulator and binds its listeners synchronously, so that URL is valid
// as soon as it returns; call Serve to start answering.
func Listen(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln}
	if opts.CipherAddr != "" {
		if s.cipherLn, err = net.Listen("tcp", opts.CipherAddr); err != nil {
			ln.Close()
			return nil, err
		}
	}
	if s.emu, err = New(opts); err != nil {
		s.closeListeners()
		return nil, err
	}
	s.http = newHTTPServer(s.emu.Handler())
	if s.cipherLn != nil {
		s.cipherHTTP = newHTTPServer(s.emu.CipherHandler())
	}
	return s, nil
}

func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
}

func (s *Server) closeListeners() {
	s.ln.Close()
	if s.cipherLn != nil {
		s.cipherLn.Close()
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
	errc := make(chan error, 2)
	go func() { errc <- s.http.Serve(s.ln) }()
	n := 1
	if s.cipherHTTP != nil {
		n++
		go func() { errc <- s.cipherHTTP.Serve(s.cipherLn) }()
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
		s.emu.Release()
		err := s.http.Shutdown(ctx)
		if s.cipherHTTP != nil {
			err = errors.Join(err, s.cipherHTTP.Shutdown(ctx))
		}
		s.closeErr = errors.Join(err, s.emu.Close())
	})
	return s.closeErr
}
