package webhook

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox"
)

func TestEgressPolicy(t *testing.T) {
	tests := []struct {
		addr                       string
		wantAllowed, wantIfPrivate bool
	}{
		{"93.184.215.14", true, true},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", true, true},
		{"127.0.0.1", true, false},
		{"::1", true, false},
		{"::ffff:127.0.0.1", true, false},
		{"10.1.2.3", true, false},
		{"172.16.0.1", true, false},
		{"192.168.1.1", true, false},
		{"100.64.0.1", true, false},
		{"fd00::1", true, false},
		{"169.254.169.254", false, false},
		{"::ffff:169.254.169.254", false, false},
		{"fe80::1", false, false},
		{"224.0.0.1", false, false},
		{"ff02::1", false, false},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"64:ff9b::5db8:d70e", true, true},
		{"64:ff9b::a00:1", true, false},
		{"64:ff9b::a9fe:a9fe", false, false},
		// The IANA special-purpose registries, and deprecated ranges
		// that still reach somewhere.
		{"198.18.0.1", true, false},
		{"198.19.255.254", true, false},
		{"192.0.0.170", true, false},
		{"240.0.0.1", true, false},
		{"255.255.255.255", true, false},
		{"0.1.2.3", true, false},
		{"192.0.2.1", true, false},
		{"198.51.100.7", true, false},
		{"203.0.113.9", true, false},
		{"192.88.99.1", true, false},
		{"::7f00:1", true, false},
		{"::a00:1", true, false},
		{"fec0::1", true, false},
		{"64:ff9b:1::a00:1", true, false},
		{"2002:7f00:1::1", true, false},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", true, false},
		{"2001:db8::1", true, false},
		{"3fff::1", true, false},
		{"100::1", true, false},
		{"2001:2::1", true, false},
		{"5f00::1", true, false},
		// Next to special-purpose ranges, and public.
		{"198.20.0.1", true, true},
		{"192.0.1.1", true, true},
		{"2003::1", true, true},
		{"2001:200::1", true, true},
	}
	open, strict := policy{}, policy{denyPrivate: true, own: &ownAddresses{clock: sandbox.SystemClock{}}}
	for _, tt := range tests {
		addr := netip.MustParseAddr(tt.addr)
		if got := open.allowed(addr); got != tt.wantAllowed {
			t.Errorf("allowed(%s) = %v, want %v", addr, got, tt.wantAllowed)
		}
		if got := strict.allowed(addr); got != tt.wantIfPrivate {
			t.Errorf("allowed(%s) with DenyPrivate = %v, want %v", addr, got, tt.wantIfPrivate)
		}
	}
}

// TestDenyPrivateRefusesTheHostsOwnAddresses covers what no fixed range
// can: a public address of the machine the sandbox runs on, where services
// bound to 0.0.0.0 listen.
func TestDenyPrivateRefusesTheHostsOwnAddresses(t *testing.T) {
	own := &ownAddresses{clock: sandbox.SystemClock{}, read: time.Now(), addrs: []netip.Addr{netip.MustParseAddr("93.184.215.14")}}
	p := policy{denyPrivate: true, own: own}
	if p.allowed(netip.MustParseAddr("93.184.215.14")) || p.allowed(netip.MustParseAddr("::ffff:93.184.215.14")) {
		t.Error("the host's own public address is allowed")
	}
	if !p.allowed(netip.MustParseAddr("93.184.215.15")) {
		t.Error("another public address is refused")
	}
	if len(interfaceAddresses()) == 0 {
		t.Error("no interface address read: the host's own addresses would go unchecked")
	}
}

// TestResolve checks which addresses a host stands for, and that loopback-only
// mode and literals never reach the resolver.
func TestResolve(t *testing.T) {
	lookups := 0
	lookup := func(_ context.Context, _, host string) ([]netip.Addr, error) {
		lookups++
		switch host {
		case "receiver.test":
			return []netip.Addr{netip.MustParseAddr("10.0.0.8"), netip.MustParseAddr("93.184.215.14")}, nil
		case "internal.test":
			return []netip.Addr{netip.MustParseAddr("::ffff:10.0.0.8")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	loopback := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	tests := []struct {
		name, host string
		p          policy
		want       []netip.Addr
		wantErr    error
	}{
		{"IPv4-mapped literal, as itself", "::ffff:127.0.0.1", policy{}, []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil},
		{"localhost without a lookup", "LocalHost.", policy{loopbackOnly: true}, loopback, nil},
		{"a name in loopback-only mode", "localhost.example.com", policy{loopbackOnly: true}, nil, errEgressDenied},
		{"an odd IPv4 spelling in loopback-only mode", "0x7f.0.0.1", policy{loopbackOnly: true}, nil, errEgressDenied},
		{"a private literal in loopback-only mode", "10.0.0.1", policy{loopbackOnly: true}, nil, errEgressDenied},
		{"a name, every address", "receiver.test", policy{}, []netip.Addr{netip.MustParseAddr("10.0.0.8"), netip.MustParseAddr("93.184.215.14")}, nil},
		{"a name, the allowed addresses", "receiver.test", policy{denyPrivate: true}, []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil},
		{"a name with only refused addresses", "internal.test", policy{denyPrivate: true}, nil, errEgressDenied},
		{"localhost with deny-private", "localhost", policy{denyPrivate: true}, nil, errEgressDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookups = 0
			tt.p.lookup = lookup
			tt.p.own = &ownAddresses{clock: sandbox.SystemClock{}}
			got, err := tt.p.resolve(context.Background(), tt.host)
			if !errors.Is(err, tt.wantErr) || !slices.Equal(got, tt.want) {
				t.Errorf("resolve(%q) = %v, %v; want %v, %v", tt.host, got, err, tt.want, tt.wantErr)
			}
			if tt.p.loopbackOnly && lookups != 0 {
				t.Errorf("loopback-only mode looked %q up", tt.host)
			}
		})
	}
	var dnsErr *net.DNSError
	if _, err := (policy{lookup: lookup}).resolve(context.Background(), "missing.test"); !errors.As(err, &dnsErr) {
		t.Errorf("an unknown name: %v, want the resolver's error", err)
	}
}

// TestDialerConnectsOnlyWhereResolved dials with refused or no addresses:
// the refusal comes before connect, so nothing is sent to them, and the
// address in the URL is never looked up or dialled.
func TestDialerConnectsOnlyWhereResolved(t *testing.T) {
	dial := pinnedDialer(policy{}, time.Second)
	for _, targets := range [][]string{nil, {"169.254.169.254:80"}, {"0.0.0.0:80"}, {"224.0.0.1:80"}} {
		var addrs []netip.AddrPort
		for _, a := range targets {
			addrs = append(addrs, netip.MustParseAddrPort(a))
		}
		ctx := context.WithValue(context.Background(), targetKey{}, addrs)
		_, err := dial(ctx, "tcp", "example.com:80")
		if !errors.Is(err, errEgressDenied) {
			t.Errorf("dial %v: %v, want the egress policy's refusal", targets, err)
		}
	}
}

// TestDeliveriesIgnoreTheProxyEnvironment holds DLV-21: a proxy named by
// HTTP_PROXY would be the address connected to, and the egress policy would
// judge it rather than the receiver's. Go never proxies loopback, so no
// delivery a test may make can show it: the client itself is asked.
func TestDeliveriesIgnoreTheProxyEnvironment(t *testing.T) {
	transport, ok := newClient(policy{loopbackOnly: true}, Options{}).Transport.(*http.Transport)
	if !ok {
		t.Fatal("the delivery client has no *http.Transport")
	}
	if transport.Proxy != nil {
		t.Error("the delivery client takes a proxy: HTTP_PROXY and HTTPS_PROXY would carry deliveries")
	}
}
