package httpapi

import (
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/testcampaign/kit/sandbox/ratelimit"
)

// ClientLimits bound what one client (one address) may do per UTC minute,
// whatever keys it uses, since keys are free. Zero turns a bound off.
type ClientLimits struct {
	// Requests counts every request: API, controls, /healthz, the OpenAPI
	// document, 404s and 401s alike.
	Requests int
	// NewAccounts counts requests whose key had no account yet.
	NewAccounts int
	// TrustForwardedFor takes the client's address from the last entry of
	// X-Forwarded-For, which the trusted proxy in front appends; without
	// it, the header is ignored and the peer's address counts.
	TrustForwardedFor bool
}

// DefaultClientLimits are generous for a CI fleet behind one address (sixty
// keys each at the default per-key limit, and SDK suites or conform runs
// that take a fresh key per test: four concurrent conform runs bring about
// 800), and small enough that a key flood from one address fills at most
// half of the default -max-accounts in a minute, so it cannot push the other
// tenants out.
var DefaultClientLimits = ClientLimits{Requests: 60_000, NewAccounts: 5000}

// maxClients bounds the clients counted in one minute; past it, the client
// seen least recently is forgotten to make room. So a sweep of addresses
// costs no memory, and never throttles a client that was not part of it,
// as pooling the addresses past the bound would; a forgotten client starts
// its minute over, which a sweep of that size could do with addresses of
// its own anyway.
const maxClients = 1 << 16

// clientUsage is one address's use of the current minute.
type clientUsage struct {
	requests, newAccounts int
}

// clientBudgets counts each client's requests in fixed windows aligned to the
// UTC minute. The whole table is dropped when a new minute starts, so it only
// ever holds the addresses seen in the current one.
type clientBudgets struct {
	limits ClientLimits
	now    func() time.Time

	mu     sync.Mutex
	minute time.Time
	usage  *simplelru.LRU[netip.Addr, *clientUsage]
	// parked counts each client's requests waiting in faults. It outlives
	// the minute, and holds only clients with some parked, so it is no
	// larger than the connections open.
	parked map[netip.Addr]int
}

func newClientBudgets(limits ClientLimits, now func() time.Time) *clientBudgets {
	if now == nil {
		now = time.Now
	}
	// The size is a constant above zero, the one thing NewLRU checks.
	usage, _ := simplelru.NewLRU[netip.Addr, *clientUsage](maxClients, nil)
	return &clientBudgets{limits: limits, now: now, usage: usage, parked: map[netip.Addr]int{}}
}

// clientAddress is who a request counts against: an IPv4 address, or the
// /64 of an IPv6 one, since a single host commonly holds a whole /64.
func (b *clientBudgets) clientAddress(r *http.Request) netip.Addr {
	var addr netip.Addr
	if b.limits.TrustForwardedFor {
		forwarded := r.Header.Values("X-Forwarded-For")
		if n := len(forwarded); n > 0 {
			entries := strings.Split(forwarded[n-1], ",")
			addr, _ = netip.ParseAddr(strings.TrimSpace(entries[len(entries)-1]))
		}
	}
	if !addr.IsValid() {
		addr = peerAddress(r)
	}
	addr = addr.Unmap()
	if addr.Is6() {
		prefix, _ := addr.Prefix(64)
		addr = prefix.Addr()
	}
	return addr
}

// peerAddress is the address of the connection's other end.
func peerAddress(r *http.Request) netip.Addr {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return peer.Addr()
}

// isLocalHealthCheck reports whether r asks /healthz from this machine
// itself, not through a proxy: a container's health check, which no
// tenant's traffic may get refused.
func isLocalHealthCheck(r *http.Request) bool {
	return r.URL.Path == "/healthz" && r.Header.Get("X-Forwarded-For") == "" && peerAddress(r).Unmap().IsLoopback()
}

// take counts one use against a budget of limit, which count selects from
// the client's usage, and returns the decision in the terms of the rate-limit
// headers.
func (b *clientBudgets) take(r *http.Request, limit int, count func(*clientUsage) *int) ratelimit.Decision {
	now := b.now().UTC()
	minute := now.Truncate(time.Minute)
	addr := b.clientAddress(r)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !minute.Equal(b.minute) {
		b.minute = minute
		b.usage.Purge()
	}
	u, ok := b.usage.Get(addr)
	if !ok {
		u = &clientUsage{}
		b.usage.Add(addr, u)
	}
	used := count(u)
	reset := minute.Add(time.Minute)
	if *used >= limit {
		return ratelimit.Decision{Limit: limit, Reset: reset, RetryAfter: reset.Sub(now)}
	}
	*used++
	return ratelimit.Decision{Allowed: true, Limit: limit, Remaining: limit - *used, Reset: reset}
}

// takeRequest counts a request against its client's budget. A local health
// check is answered whatever the budget.
func (b *clientBudgets) takeRequest(r *http.Request) ratelimit.Decision {
	if b.limits.Requests <= 0 || isLocalHealthCheck(r) {
		return ratelimit.Decision{Allowed: true}
	}
	return b.take(r, b.limits.Requests, func(u *clientUsage) *int { return &u.requests })
}

// takeNewAccount counts a new account against its client's budget.
func (b *clientBudgets) takeNewAccount(r *http.Request) ratelimit.Decision {
	if b.limits.NewAccounts <= 0 {
		return ratelimit.Decision{Allowed: true}
	}
	return b.take(r, b.limits.NewAccounts, func(u *clientUsage) *int { return &u.newAccounts })
}

// park counts a request of r's client that is about to wait in a fault,
// unless the client has max waiting already.
func (b *clientBudgets) park(r *http.Request, max int) (netip.Addr, bool) {
	addr := b.clientAddress(r)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.parked[addr] >= max {
		return addr, false
	}
	b.parked[addr]++
	return addr, true
}

// unpark ends a wait that park counted.
func (b *clientBudgets) unpark(addr netip.Addr) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.parked[addr]--; b.parked[addr] <= 0 {
		delete(b.parked, addr)
	}
}
