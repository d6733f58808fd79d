package webhook

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"
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
	}
	for _, tt := range tests {
		addr := netip.MustParseAddr(tt.addr)
		if got := allowed(addr, false); got != tt.wantAllowed {
			t.Errorf("allowed(%s) = %v, want %v", addr, got, tt.wantAllowed)
		}
		if got := allowed(addr, true); got != tt.wantIfPrivate {
			t.Errorf("allowed(%s) with DenyPrivate = %v, want %v", addr, got, tt.wantIfPrivate)
		}
	}
}

// TestDialerRefusesBeforeConnecting dials addresses that the policy always
// refuses: the refusal must come from the policy, which runs before connect,
// so nothing is sent to them.
func TestDialerRefusesBeforeConnecting(t *testing.T) {
	dialer := newDialer(time.Second, false, false)
	for _, address := range []string{"169.254.0.1:80", "169.254.169.254:80", "0.0.0.0:80", "224.0.0.1:80"} {
		_, err := dialer.DialContext(context.Background(), "tcp", address)
		if !errors.Is(err, errEgressDenied) {
			t.Errorf("dial %s: %v, want the egress policy's refusal", address, err)
		}
	}
}

func TestLoopbackOnlyRefusesOtherHostsBeforeAnyLookup(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "127.0.0.1": true, "127.8.9.10": true, "::1": true, "::ffff:127.0.0.1": true,
		"example.com": false, "localhost.example.com": false, "10.0.0.1": false, "192.168.1.1": false, "8.8.8.8": false, "": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
	dialer := newDialer(time.Second, false, true)
	for _, address := range []string{"10.0.0.1:80", "192.0.2.1:80"} {
		if _, err := dialer.DialContext(context.Background(), "tcp", address); !errors.Is(err, errEgressDenied) {
			t.Errorf("loopback-only dial %s: %v, want the egress policy's refusal", address, err)
		}
	}
}
