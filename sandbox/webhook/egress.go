package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/sandbox"
)

// errEgressDenied marks a destination the egress policy refused, so that the
// record can say so without naming the address.
var errEgressDenied = errors.New("destination not allowed by the sandbox's egress policy")

// nat64 is the well-known NAT64 prefix (RFC 6052): on a network with a NAT64
// gateway, an address in it reaches the IPv4 address in its last four bytes.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// specialPurpose lists the ranges of the IANA IPv4 and IPv6 Special-Purpose
// Address Registries, and the deprecated ones still routed somewhere, that
// -webhook-deny-private refuses besides loopback and private addresses: none
// of them is a webhook receiver on the public internet, and several (6to4,
// Teredo, local NAT64, IPv4-compatible addresses) reach an IPv4 address the
// policy would judge otherwise. Globally reachable anycast services in the
// registries (AS112, AMT, PCP and TURN anycast) are refused too: they are
// not receivers either.
var specialPurpose = func() []netip.Prefix {
	var prefixes []netip.Prefix
	for _, p := range []string{
		"0.0.0.0/8",         // "this network"
		"100.64.0.0/10",     // shared address space (carrier-grade NAT)
		"192.0.0.0/24",      // IETF protocol assignments
		"192.0.2.0/24",      // TEST-NET-1
		"192.31.196.0/24",   // AS112-v4
		"192.52.193.0/24",   // AMT
		"192.88.99.0/24",    // deprecated 6to4 relay anycast
		"192.175.48.0/24",   // AS112 direct delegation
		"198.18.0.0/15",     // benchmarking
		"198.51.100.0/24",   // TEST-NET-2
		"203.0.113.0/24",    // TEST-NET-3
		"240.0.0.0/4",       // reserved, and 255.255.255.255, limited broadcast
		"::/96",             // IPv4-compatible (deprecated), :: and ::1 among them
		"64:ff9b:1::/48",    // local-use IPv4/IPv6 translation
		"100::/64",          // discard-only
		"100:0:0:1::/64",    // dummy prefix
		"2001::/23",         // IETF protocol assignments, Teredo (2001::/32) among them
		"2001:db8::/32",     // documentation
		"2002::/16",         // 6to4
		"2620:4f:8000::/48", // AS112 direct delegation
		"3fff::/20",         // documentation
		"5f00::/16",         // segment routing (SRv6) SIDs
		"fec0::/10",         // site-local (deprecated)
	} {
		prefixes = append(prefixes, netip.MustParsePrefix(p))
	}
	return prefixes
}()

// policy decides where deliveries may go. Its zero value allows everything
// but what is always refused.
type policy struct {
	// denyPrivate also refuses loopback, private and special-purpose
	// addresses and the host's own, for a sandbox reachable by people who
	// must not reach the network it runs in.
	denyPrivate bool
	// loopbackOnly refuses everything but loopback addresses and the name
	// localhost, and never asks a resolver.
	loopbackOnly bool
	// own lists the host's interface addresses.
	own *ownAddresses
	// lookup resolves a name; net.DefaultResolver's in production.
	lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// allowed reports whether deliveries may connect to addr. Link-local
// addresses hold cloud metadata services and, like multicast and unspecified
// addresses (which Linux connects to the local host), are never a webhook
// receiver; they are always refused. An IPv4 address reached through NAT64 or
// written as IPv4-mapped IPv6 is judged as itself.
func (p policy) allowed(addr netip.Addr) bool {
	addr = addr.Unmap()
	if nat64.Contains(addr) {
		b := addr.As16()
		addr = netip.AddrFrom4([4]byte(b[12:]))
	}
	switch {
	case !addr.IsValid(), addr.IsUnspecified(), addr.IsLinkLocalUnicast(), addr.IsMulticast():
		return false
	case p.loopbackOnly:
		return addr.IsLoopback()
	case p.denyPrivate:
		return !addr.IsLoopback() && !addr.IsPrivate() &&
			!slices.ContainsFunc(specialPurpose, func(prefix netip.Prefix) bool { return prefix.Contains(addr) }) &&
			!p.own.contains(addr)
	}
	return true
}

// resolve returns the addresses a delivery to host may connect to, in the
// resolver's order. Literal addresses and the name localhost are read
// without a resolver; in loopback-only mode nothing else is looked up.
func (p policy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	var addrs []netip.Addr
	if addr, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{addr}
	} else if name := strings.TrimSuffix(strings.ToLower(host), "."); name == "localhost" {
		// IPv4 first: a receiver on this machine listens there more
		// often than on ::1.
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	} else if p.loopbackOnly {
		return nil, errEgressDenied
	} else if addrs, err = p.lookup(ctx, "ip", host); err != nil {
		return nil, err
	}
	allowed := slices.DeleteFunc(slices.Clone(addrs), func(a netip.Addr) bool { return !p.allowed(a) })
	if len(allowed) == 0 {
		return nil, errEgressDenied
	}
	for i, a := range allowed {
		allowed[i] = a.Unmap()
	}
	return allowed, nil
}

// ownAddresses is the host's interface addresses, read again at most once
// per ownRefresh, since interfaces come and go.
type ownAddresses struct {
	clock sandbox.Clock
	mu    sync.Mutex
	read  time.Time
	addrs []netip.Addr
}

const ownRefresh = 30 * time.Second

func (o *ownAddresses) contains(addr netip.Addr) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if now := o.clock.Now(); o.addrs == nil || now.Sub(o.read) >= ownRefresh {
		o.read, o.addrs = now, interfaceAddresses()
	}
	return slices.Contains(o.addrs, addr)
}

// interfaceAddresses lists the host's addresses; none if they cannot be
// read, since the other rules still hold.
func interfaceAddresses() []netip.Addr {
	addrs := []netip.Addr{}
	ifaces, err := net.InterfaceAddrs()
	if err != nil {
		return addrs
	}
	for _, a := range ifaces {
		if prefix, err := netip.ParsePrefix(a.String()); err == nil {
			addrs = append(addrs, prefix.Addr().Unmap())
		}
	}
	return addrs
}
