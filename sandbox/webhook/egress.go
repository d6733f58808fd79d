package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// errEgressDenied marks a connection the egress policy refused, so that the
// record can say so without naming the address.
var errEgressDenied = errors.New("destination not allowed by the sandbox's egress policy")

// sharedAddressSpace is RFC 6598's carrier-grade NAT range: not "private" to
// netip, but just as internal to the networks that use it.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// nat64 is the well-known NAT64 prefix (RFC 6052): on a network with a NAT64
// gateway, an address in it reaches the IPv4 address in its last four bytes.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// allowed reports whether the policy lets deliveries connect to addr.
// Link-local addresses hold cloud metadata services and, like multicast and
// unspecified addresses (which Linux connects to the local host), are never a
// webhook receiver; they are always refused. denyPrivate also refuses the
// loopback and private ranges, for a sandbox reachable by people who must not
// reach the network it runs in. An IPv4 address reached through NAT64 is
// judged as itself.
func allowed(addr netip.Addr, denyPrivate bool) bool {
	addr = addr.Unmap()
	if nat64.Contains(addr) {
		b := addr.As16()
		addr = netip.AddrFrom4([4]byte(b[12:]))
	}
	switch {
	case !addr.IsValid(), addr.IsUnspecified(), addr.IsLinkLocalUnicast(), addr.IsMulticast():
		return false
	case denyPrivate:
		return !addr.IsLoopback() && !addr.IsPrivate() && !sharedAddressSpace.Contains(addr)
	}
	return true
}

// newDialer returns a dialer that applies the egress policy. Control runs on
// every address a name resolves to, after resolution and before connect, so
// neither DNS tricks nor redirects can reach a refused address and a refused
// one sees no packet.
//
// loopbackOnly refuses everything but loopback as well.
func newDialer(timeout time.Duration, denyPrivate, loopbackOnly bool) *net.Dialer {
	return &net.Dialer{
		Timeout: timeout,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: unparsable address", errEgressDenied)
			}
			if !allowed(ap.Addr(), denyPrivate) || loopbackOnly && !ap.Addr().Unmap().IsLoopback() {
				return errEgressDenied
			}
			return nil
		},
	}
}

// loopbackHost reports whether a URL's host names this machine without a DNS
// query: "localhost" or a loopback address.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Unmap().IsLoopback()
}
