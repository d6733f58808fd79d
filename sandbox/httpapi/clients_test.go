package httpapi

import (
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

func TestASweepOfAddressesThrottlesNoClientOutsideIt(t *testing.T) {
	at := time.Date(2026, 3, 14, 15, 9, 0, 0, time.UTC)
	b := newClientBudgets(ClientLimits{Requests: 3, TrustForwardedFor: true}, func() time.Time { return at })
	r := httptest.NewRequest("GET", "/v1/testers", nil)
	from := func(addr string) bool {
		r.Header.Set("X-Forwarded-For", addr)
		return b.takeRequest(r).Allowed
	}
	sweep := netip.MustParseAddr("10.0.0.0")
	for range maxClients {
		from(sweep.String())
		sweep = sweep.Next()
	}
	// The sweeper's last address spends its whole budget, and more.
	for range 10 {
		from(sweep.String())
	}
	if from(sweep.String()) {
		t.Error("the sweeper's address got past its budget")
	}
	for _, newcomer := range []string{"192.0.2.7", "2001:db8::1"} {
		if !from(newcomer) {
			t.Errorf("%s, which was not part of the sweep, refused after it", newcomer)
		}
	}
}

func TestALocalHealthCheckIsAnsweredWhateverTheBudget(t *testing.T) {
	at := time.Date(2026, 3, 14, 15, 9, 0, 0, time.UTC)
	b := newClientBudgets(ClientLimits{Requests: 1}, func() time.Time { return at })
	ask := func(path, peer string, headers ...string) bool {
		r := httptest.NewRequest("GET", path, nil)
		r.RemoteAddr = peer
		for i := 0; i+1 < len(headers); i += 2 {
			r.Header.Set(headers[i], headers[i+1])
		}
		return b.takeRequest(r).Allowed
	}
	ask("/v1/testers", "127.0.0.1:5000")
	for _, tc := range []struct {
		path, peer string
		headers    []string
		want       bool
	}{
		{"/healthz", "127.0.0.1:5001", nil, true},
		{"/healthz", "[::1]:5001", nil, true},
		{"/v1/testers", "127.0.0.1:5001", nil, false},
		// Proxied: the proxy's own address is no health check.
		{"/healthz", "127.0.0.1:5001", []string{"X-Forwarded-For", "192.0.2.1"}, false},
	} {
		if got := ask(tc.path, tc.peer, tc.headers...); got != tc.want {
			t.Errorf("%s from %s %v: allowed %v, want %v", tc.path, tc.peer, tc.headers, got, tc.want)
		}
	}
}
