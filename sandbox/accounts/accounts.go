// Package accounts holds the sandbox's accounts: one per test key, each with
// everything that is the key's alone (its database, clock, rate-limit
// counts, planned faults, request log and webhook deliveries), so that a
// reset replaces all of it in one step and an eviction drops one pointer.
package accounts

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/clientverdict"
	"github.com/testcampaign/kit/sandbox/ratelimit"
	"github.com/testcampaign/kit/sandbox/store"
)

// Outbox delivers one account's webhook events.
type Outbox interface {
	// Send queues e for each of hooks, touched by faults[i] (nil for none)
	// for hooks[i]; it never blocks.
	Send(e sandbox.Event, hooks []sandbox.Webhook, faults []*sandbox.Fault)
	// Deliveries lists the recent delivery attempts, newest first.
	Deliveries(page sandbox.PageRequest) sandbox.Page[sandbox.Delivery]
	// Settle waits until no delivery is in flight, queued or due, or ctx
	// is done, and says how the deliveries stand.
	Settle(ctx context.Context) sandbox.Settlement
	// Sending reports whether an attempt has reached its receiver and is
	// not yet recorded; AwaitSent waits until those that had are recorded,
	// or ctx is done.
	Sending() bool
	AwaitSent(ctx context.Context) bool
	// Close cancels every pending delivery.
	Close()
}

// Config is what a Registry is built from.
type Config struct {
	Template *store.Template
	// Limits are the /v1 rate limits; ControlLimits the /_sandbox ones.
	Limits, ControlLimits ratelimit.Limits
	// FrozenAt, if not zero, is where every account's clock starts and
	// stays until the account moves it.
	FrozenAt time.Time
	// TTL is how long an account may stay idle before it is dropped.
	TTL time.Duration
	// Max is how many accounts are held; past it the least recently used
	// one is dropped.
	Max int
	// MemoryBudget, if positive, bounds the bytes that the records,
	// events, planned faults, request journals and traces and webhook
	// deliveries of all accounts together are estimated to take. A write that
	// would pass it drops the least recently used other accounts first, and
	// is refused with LIMIT_REACHED if that is not enough.
	MemoryBudget int64
	// NewOutbox, if set, gives each account its webhook deliveries, which
	// it charges to budget when that is not nil. budget's methods take the
	// registry's lock, and making room closes other accounts' outboxes:
	// an outbox calls them with none of its own locks held.
	NewOutbox func(identity string, clock sandbox.Clock, budget Budget) Outbox
	// Identity, if set, turns an account's ID and a count of resets into
	// what its Webhook-Ids (with its resets) and webhook secrets (with
	// none) are derived from, with a server secret so that they reveal
	// nothing of the key. Unset, it is the ID, followed after a reset by
	// "/" and the count.
	Identity func(accountID string, resets int) string
	// WrapStore, if set, stands between an account and its database, so
	// tests can make the store misbehave.
	WrapStore func(sandbox.Store) sandbox.Store
	Logger    *slog.Logger
	// Now is the wall clock that idleness is measured on; time.Now if nil.
	// Not the accounts' clocks: a frozen clock never lets anything expire.
	Now func() time.Time
}

// Account is the isolated world of one test key.
type Account struct {
	sandbox.Account
	Store sandbox.Store
	Clock sandbox.Clock
	// Frozen is Clock when the sandbox runs on frozen clocks, else nil.
	Frozen   *sandbox.FrozenClock
	Limiter  *ratelimit.Limiter
	Controls *ratelimit.Limiter
	// Parked counts the key's requests waiting in injected delays and
	// trickles and in settles. Like Controls it carries over a reset, so that resetting
	// does not free a key to park more.
	Parked   *atomic.Int32
	Faults   Faults
	Requests RequestLog
	// Trace keeps what the verdict on the key's client is judged on.
	Trace *clientverdict.Trace
	// Outbox is nil when the sandbox delivers no webhooks.
	Outbox Outbox

	key sandbox.AccountKey
	// resets counts the account's resets since the key was first seen.
	resets   int
	lastUsed time.Time
	// bytes is what the account's writes were charged; dropped is set
	// when the registry lets go of the account, after which its writes are
	// no longer counted. Both are guarded by the registry's mutex.
	bytes   int64
	dropped bool
}

// lookupSeeds key the registry's index of accounts. A key is looked up on
// every request; SHA-256, which an account's ID needs because the ID is
// shown and must not give the key away, cost more there than the rest of
// the lookup. The index is never shown, so a hash keyed with seeds the
// process keeps to itself serves it: 128 bits, so that no two keys of a
// sandbox's life meet by chance, and no client can aim at a collision
// without the seeds. The key itself is still never kept.
var lookupSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// lookupKey is where the registry files the account of a key.
func lookupKey(key string) sandbox.AccountKey {
	var id sandbox.AccountKey
	binary.LittleEndian.PutUint64(id[:8], maphash.String(lookupSeeds[0], key))
	binary.LittleEndian.PutUint64(id[8:], maphash.String(lookupSeeds[1], key))
	return id
}

// Registry holds the accounts. It is safe for concurrent use.
type Registry struct {
	cfg Config
	mu  sync.Mutex
	lru *simplelru.LRU[sandbox.AccountKey, *Account]
	// used is the sum of the held accounts' bytes.
	used int64
}

// New returns an empty registry.
func New(cfg Config) (*Registry, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Registry{cfg: cfg}
	lru, err := simplelru.NewLRU(cfg.Max, func(_ sandbox.AccountKey, a *Account) { r.drop(a) })
	if err != nil {
		return nil, fmt.Errorf("account cache of %d: %w", cfg.Max, err)
	}
	r.lru = lru
	return r, nil
}

// Get returns the account of a valid test key, opening a freshly seeded one
// the first time the key is seen or after its account was dropped.
func (r *Registry) Get(key string) *Account {
	id := lookupKey(key)
	now := r.cfg.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expire(now)
	if a, ok := r.lru.Get(id); ok {
		a.lastUsed = now
		return a
	}
	a := r.open(sandbox.AccountForKey(key), nil, 0)
	a.key, a.lastUsed = id, now
	r.lru.Add(id, a)
	return a
}

// Reset replaces the account with a freshly seeded one, as for a new key,
// and returns it. Only the controls' budget carries over, so that resets
// cannot be used to escape it.
func (r *Registry) Reset(old *Account) *Account {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Another request may have reset or dropped the account since old was
	// looked up: what is replaced, and closed, is what the key has now.
	current := old
	if a, ok := r.lru.Peek(old.key); ok {
		current = a
	}
	a := r.open(current.Account, current.Controls, current.resets+1)
	a.Parked = current.Parked
	a.key, a.lastUsed = current.key, r.cfg.Now()
	// Add on a present key replaces the value without calling the evict
	// callback, so the replaced account's deliveries are cancelled here.
	r.lru.Add(a.key, a)
	r.drop(current)
	return a
}

// Len is how many accounts are held.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lru.Len()
}

// Close drops every account, cancelling their deliveries.
func (r *Registry) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lru.Purge()
}

// expire drops the accounts idle for longer than the TTL, oldest first; the
// LRU order is the idleness order, so it stops at the first recent one.
func (r *Registry) expire(now time.Time) {
	if r.cfg.TTL <= 0 {
		return
	}
	for {
		_, a, ok := r.lru.GetOldest()
		if !ok || now.Sub(a.lastUsed) < r.cfg.TTL {
			return
		}
		r.lru.RemoveOldest()
	}
}

func (r *Registry) open(id sandbox.Account, controls *ratelimit.Limiter, resets int) *Account {
	a := &Account{Account: id, Limiter: ratelimit.New(r.cfg.Limits), Controls: controls, Parked: new(atomic.Int32), resets: resets}
	if a.Controls == nil {
		a.Controls = ratelimit.New(r.cfg.ControlLimits)
	}
	if r.cfg.FrozenAt.IsZero() {
		a.Clock = sandbox.SystemClock{}
	} else {
		a.Frozen = sandbox.NewFrozenClock(r.cfg.FrozenAt)
		a.Clock = a.Frozen
	}
	if r.cfg.NewOutbox != nil {
		// A reset numbers events afresh; the outbox's identity changes
		// with it, so that the Webhook-Ids derived from it do not repeat
		// the previous events' and receivers that de-duplicate drop
		// nothing. Webhook secrets, derived from the database's, are as
		// for a fresh account.
		var budget Budget
		if r.cfg.MemoryBudget > 0 {
			budget = meter{r, a}
		}
		a.Outbox = r.cfg.NewOutbox(r.identity(id.ID, resets), a.Clock, budget)
	}
	opts := store.Options{OnEvent: func(ctx context.Context, e sandbox.Event, hooks []sandbox.Webhook) { r.announce(ctx, a, e, hooks) }}
	var traceCharge func(int64)
	if r.cfg.MemoryBudget > 0 {
		opts.Meter = meter{r, a}
		a.Requests.charge = meter{r, a}.Hold
		traceCharge = meter{r, a}.Hold
		a.Faults.meter = meter{r, a}
	}
	a.Trace = clientverdict.NewTrace(traceCharge)
	db := r.cfg.Template.Open(r.identity(id.ID, 0), a.Clock, opts)
	a.Store = db
	if r.cfg.WrapStore != nil {
		a.Store = r.cfg.WrapStore(db)
	}
	return a
}

// identity is what the webhook secrets and Webhook-Ids of an account are
// derived from, after resets.
func (r *Registry) identity(accountID string, resets int) string {
	switch {
	case r.cfg.Identity != nil:
		return r.cfg.Identity(accountID, resets)
	case resets > 0:
		return accountID + "/" + strconv.Itoa(resets)
	}
	return accountID
}

// announce hands a committed event to the account's outbox, with the
// webhook fault that hits each of its deliveries, and tells the write's
// context of those faults. It runs after the commit, on the request's
// goroutine, so nothing in it may fail the request: the write has happened,
// and a client told otherwise would retry and write it twice.
func (r *Registry) announce(ctx context.Context, a *Account, e sandbox.Event, hooks []sandbox.Webhook) {
	if a.Outbox == nil {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			r.cfg.Logger.Error("webhook hand-off failed", "key", a.KeyHint, "event", e.ID, "panic", fmt.Sprint(v))
		}
	}()
	var faults []*sandbox.Fault
	if a.Faults.DeliveryFaultsPlanned() {
		faults = make([]*sandbox.Fault, len(hooks))
		note, _ := ctx.Value(deliveryFaultsKey{}).(func(sandbox.Fault))
		for i := range hooks {
			if fault, ok := a.Faults.TakeDelivery(e.Type); ok {
				faults[i] = &fault
				if note != nil {
					note(fault)
				}
			}
		}
	}
	a.Outbox.Send(e, hooks, faults)
}

// deliveryFaultsKey carries, in a write's context, what hears of the
// webhook faults that hit deliveries of the events the write makes.
type deliveryFaultsKey struct{}

// NoteDeliveryFaults returns ctx carrying note, which hears each webhook
// fault that hits a delivery of an event that a write made with ctx.
func NoteDeliveryFaults(ctx context.Context, note func(sandbox.Fault)) context.Context {
	return context.WithValue(ctx, deliveryFaultsKey{}, note)
}

// drop lets go of an account that the registry no longer holds: its bytes
// leave the budget and its pending deliveries are cancelled. The caller
// holds r.mu.
func (r *Registry) drop(a *Account) {
	r.used -= a.bytes
	a.bytes, a.dropped = 0, true
	if a.Outbox != nil {
		a.Outbox.Close()
	}
}

// meter charges one account's writes to the registry's memory budget.
type meter struct {
	r *Registry
	a *Account
}

// Charge makes room for n bytes, dropping the least recently used other
// accounts as long as the budget is short of it.
func (m meter) Charge(n int64) error {
	r, a := m.r, m.a
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.dropped {
		// The key has a new account already; this write is to one that
		// nobody will read again.
		return nil
	}
	for r.used+n > r.cfg.MemoryBudget {
		_, oldest, ok := r.lru.GetOldest()
		if oldest == a {
			// The writer is in use, so it is the most recent; what is
			// older goes first.
			r.lru.Get(a.key)
			_, oldest, ok = r.lru.GetOldest()
		}
		if !ok || oldest == a {
			return sandbox.Errorf(sandbox.ErrLimitReached,
				"the sandbox's memory budget of %d MiB is spent, and this account holds most of it; reset it or use a new key", r.cfg.MemoryBudget>>20)
		}
		r.lru.RemoveOldest()
	}
	r.used += n
	a.bytes += n
	return nil
}

// Budget is what an account's outbox is charged to: the memory budget,
// which it may pass but not refuse, its deliveries being bounded by
// themselves.
type Budget interface {
	Hold(n int64)
	Release(n int64)
}

// Hold counts n bytes that the account keeps whatever the budget says,
// such as its request journal and its webhook deliveries, which are
// bounded by themselves: it makes room as Charge does, but never refuses.
func (m meter) Hold(n int64) {
	if err := m.Charge(n); err != nil {
		m.r.mu.Lock()
		defer m.r.mu.Unlock()
		if !m.a.dropped {
			m.r.used += n
			m.a.bytes += n
		}
	}
}

// Release gives back bytes a write freed.
func (m meter) Release(n int64) {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	if !m.a.dropped {
		m.r.used -= n
		m.a.bytes -= n
	}
}

// MemoryUsed is the estimated bytes the held accounts' records, events,
// request journals and webhook deliveries take, which the memory budget
// bounds.
func (r *Registry) MemoryUsed() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.used
}

// Held returns the key's account if it has one now, as a use of it, and
// false if it has none: so that a caller can tell a new account from a held
// one, and count it, before Get opens it.
func (r *Registry) Held(key string) (*Account, bool) {
	id := lookupKey(key)
	now := r.cfg.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expire(now)
	a, ok := r.lru.Get(id)
	if ok {
		a.lastUsed = now
	}
	return a, ok
}
