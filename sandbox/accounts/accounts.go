// Package accounts holds the sandbox's accounts: one per test key, each with
// everything that is the key's alone (its database, clock, rate-limit
// counts, planned faults, request log and webhook deliveries), so that a
// reset replaces all of it in one step and an eviction drops one pointer.
package accounts

import (
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/simplelru"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/ratelimit"
	"github.com/testcampaign/kit/sandbox/store"
)

// Outbox delivers one account's webhook events.
type Outbox interface {
	// Send queues e for each of hooks; it never blocks.
	Send(e sandbox.Event, hooks []sandbox.Webhook)
	// Deliveries lists the recent delivery attempts, newest first.
	Deliveries(page sandbox.PageRequest) sandbox.Page[sandbox.Delivery]
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
	// NewOutbox, if set, gives each account its webhook deliveries.
	NewOutbox func(accountID string, clock sandbox.Clock) Outbox
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
	Faults   Faults
	Requests RequestLog
	// Outbox is nil when the sandbox delivers no webhooks.
	Outbox Outbox

	key sandbox.AccountKey
	// resets counts the account's resets since the key was first seen.
	resets   int
	lastUsed time.Time
}

// Registry holds the accounts. It is safe for concurrent use.
type Registry struct {
	cfg Config
	mu  sync.Mutex
	lru *simplelru.LRU
}

// New returns an empty registry.
func New(cfg Config) (*Registry, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	lru, err := simplelru.NewLRU(cfg.Max, func(_, value any) { value.(*Account).close() })
	if err != nil {
		return nil, fmt.Errorf("account cache of %d: %w", cfg.Max, err)
	}
	return &Registry{cfg: cfg, lru: lru}, nil
}

// Get returns the account of a valid test key, opening a freshly seeded one
// the first time the key is seen or after its account was dropped.
func (r *Registry) Get(key string) *Account {
	id := sandbox.KeyOf(key)
	now := r.cfg.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expire(now)
	if v, ok := r.lru.Get(id); ok {
		a := v.(*Account)
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
	if v, ok := r.lru.Peek(old.key); ok {
		current = v.(*Account)
	}
	a := r.open(current.Account, current.Controls, current.resets+1)
	a.key, a.lastUsed = current.key, r.cfg.Now()
	// Add on a present key replaces the value without calling the evict
	// callback, so the replaced account's deliveries are cancelled here.
	r.lru.Add(a.key, a)
	current.close()
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
		_, v, ok := r.lru.GetOldest()
		if !ok || now.Sub(v.(*Account).lastUsed) < r.cfg.TTL {
			return
		}
		r.lru.RemoveOldest()
	}
}

func (r *Registry) open(id sandbox.Account, controls *ratelimit.Limiter, resets int) *Account {
	a := &Account{Account: id, Limiter: ratelimit.New(r.cfg.Limits), Controls: controls, resets: resets}
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
		// A reset numbers events afresh; the outbox's ID changes with it,
		// so that the Webhook-Ids derived from it do not repeat the
		// previous events' and receivers that de-duplicate drop nothing.
		outboxID := id.ID
		if resets > 0 {
			outboxID += "/" + strconv.Itoa(resets)
		}
		a.Outbox = r.cfg.NewOutbox(outboxID, a.Clock)
	}
	var db *store.DB
	db = r.cfg.Template.Open(id.ID, a.Clock, func(e sandbox.Event) { r.announce(a, db, e) })
	a.Store = db
	if r.cfg.WrapStore != nil {
		a.Store = r.cfg.WrapStore(db)
	}
	return a
}

// announce hands a committed event to the account's outbox. It runs after
// the commit, on the request's goroutine, so nothing in it may fail the
// request: the write has happened, and a client told otherwise would retry
// and write it twice.
func (r *Registry) announce(a *Account, db *store.DB, e sandbox.Event) {
	if a.Outbox == nil {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			r.cfg.Logger.Error("webhook hand-off failed", "key", a.KeyHint, "event", e.ID, "panic", fmt.Sprint(v))
		}
	}()
	hooks, err := db.Webhooks()
	if err != nil {
		r.cfg.Logger.Error("webhook lookup failed", "key", a.KeyHint, "event", e.ID, "error", err)
		return
	}
	wanted := hooks[:0]
	for _, h := range hooks {
		if h.Wants(e.Type) {
			wanted = append(wanted, h)
		}
	}
	if len(wanted) > 0 {
		a.Outbox.Send(e, wanted)
	}
}

func (a *Account) close() {
	if a.Outbox != nil {
		a.Outbox.Close()
	}
}

// Has reports whether the key has an account now, without counting as a use
// of it: so a caller can tell a new account from a held one before Get.
func (r *Registry) Has(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lru.Contains(sandbox.KeyOf(key))
}
