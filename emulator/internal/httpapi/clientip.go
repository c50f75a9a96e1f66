package httpapi

import (
	"net/http"
	"net/netip"
	"strings"
)

// clientIP is the TCP peer, or with --trusted-proxies the nearest untrusted address of
// X-Forwarded-For.
func (a *API) clientIP(r *http.Request) netip.Addr {
	peer := peerAddr(r.RemoteAddr)
	if !a.trusted(peer) {
		return peer
	}
	var hops []netip.Addr
	for _, h := range r.Header.Values("X-Forwarded-For") {
		for _, part := range strings.Split(h, ",") {
			if ip, err := netip.ParseAddr(strings.TrimSpace(part)); err == nil {
				hops = append(hops, ip.Unmap())
			}
		}
	}
	for i := len(hops) - 1; i >= 0; i-- {
		if !a.trusted(hops[i]) {
			return hops[i]
		}
	}
	if len(hops) > 0 {
		return hops[0]
	}
	return peer
}

func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	if ip, err := netip.ParseAddr(remote); err == nil {
		return ip.Unmap()
	}
	return netip.IPv4Unspecified()
}

func (a *API) trusted(ip netip.Addr) bool {
	for _, p := range a.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
