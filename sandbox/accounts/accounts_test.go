package accounts

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/testcampaign/kit/fixtures"
	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/ratelimit"
	"github.com/testcampaign/kit/sandbox/store"
)

// wallClock is a settable stand-in for time.Now.
type wallClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *wallClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *wallClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// countingOutbox records whether it was closed.
type countingOutbox struct {
	mu     sync.Mutex
	sent   int
	closed bool
}

func (o *countingOutbox) Send(sandbox.Event, []sandbox.Webhook, []*sandbox.Fault) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent++
}

func (o *countingOutbox) Deliveries(sandbox.PageRequest) sandbox.Page[sandbox.Delivery] {
	return sandbox.NewPage[sandbox.Delivery](nil, false, 0)
}

func (o *countingOutbox) Settle(context.Context) sandbox.Settlement {
	return sandbox.Settlement{Settled: true}
}

func (o *countingOutbox) Sending() bool { return false }

func (o *countingOutbox) AwaitSent(context.Context) bool { return false }

func (o *countingOutbox) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
}

func newRegistry(t testing.TB, cfg Config) *Registry {
	t.Helper()
	seed, err := fixtures.Load(fixtures.Default())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Template, err = store.NewTemplate(seed, store.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	cfg.Limits, cfg.ControlLimits = ratelimit.DefaultLimits, ratelimit.DefaultControlLimits
	cfg.Max = max(cfg.Max, 1)
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func key(i int) string { return fmt.Sprintf("svc_test_key_%06d", i) }

func TestLeastRecentlyUsedAccountsAreDroppedPastTheCap(t *testing.T) {
	for _, keys := range []int{100, 1000} {
		outboxes := map[string]*countingOutbox{}
		var mu sync.Mutex
		r := newRegistry(t, Config{Max: 100, NewOutbox: func(id string, _ sandbox.Clock, _ Budget) Outbox {
			mu.Lock()
			defer mu.Unlock()
			o := &countingOutbox{}
			outboxes[id] = o
			return o
		}})
		kept := r.Get(key(0))
		for i := 1; i < keys; i++ {
			r.Get(key(i))
			// Key 0 is used all along, so it is never the least recent.
			if r.Get(key(0)) != kept {
				t.Fatalf("%d keys: the account in constant use was dropped", keys)
			}
		}
		if got := r.Len(); got > 100 {
			t.Errorf("%d keys: %d accounts held, want at most 100", keys, got)
		}
		closed := 0
		for _, o := range outboxes {
			if o.closed {
				closed++
			}
		}
		if want := keys - r.Len(); closed != want {
			t.Errorf("%d keys: %d outboxes closed, want one per dropped account (%d)", keys, closed, want)
		}
	}
}

func TestDroppedKeyStartsAfresh(t *testing.T) {
	r := newRegistry(t, Config{Max: 1})
	first := r.Get(key(1))
	if _, err := first.Store.CreateCampaign(t.Context(), sandbox.CampaignInput{Name: "n", Platform: "ios", TestersRequired: 1, RewardPerBug: "1"}); err != nil {
		t.Fatal(err)
	}
	r.Get(key(2))
	again := r.Get(key(1))
	if again == first {
		t.Fatal("the evicted account came back")
	}
	if _, err := again.Store.Campaign(t.Context(), "cmp_000006"); sandbox.AsError(err).Code != sandbox.ErrNotFound {
		t.Errorf("the reseeded account holds the old campaign: %v", err)
	}
}

func TestIdleAccountsExpire(t *testing.T) {
	wall := &wallClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := newRegistry(t, Config{Max: 10, TTL: time.Hour, Now: wall.Now})
	old := r.Get(key(1))
	wall.advance(40 * time.Minute)
	r.Get(key(2))
	wall.advance(40 * time.Minute)
	// Key 1 has been idle 80 minutes, key 2 40: the next request of any
	// key drops key 1 only.
	r.Get(key(3))
	if got := r.Len(); got != 2 {
		t.Errorf("%d accounts held, want 2", got)
	}
	if r.Get(key(1)) == old {
		t.Error("an account idle past the TTL was kept")
	}
}

func TestResetReplacesEverythingButTheControlBudget(t *testing.T) {
	outbox := &countingOutbox{}
	r := newRegistry(t, Config{Max: 10, FrozenAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		NewOutbox: func(string, sandbox.Clock, Budget) Outbox { return outbox }})
	a := r.Get(key(1))
	a.Frozen.Advance(time.Hour)
	if _, err := a.Faults.Add(sandbox.FaultSpec{Status: 500, Count: 3, Rate: 1}); err != nil {
		t.Fatal(err)
	}
	a.Requests.Add(LoggedRequest{Method: "GET", Path: "/v1/testers"})
	a.Limiter.Take(a.Clock.Now())
	a.Controls.Take(a.Clock.Now())
	b := r.Reset(a)
	if !outbox.closed {
		t.Error("the old account's deliveries were not cancelled")
	}
	if r.Get(key(1)) != b {
		t.Error("the key does not reach the new account")
	}
	if _, ok := b.Faults.Take("GET", "/v1/testers"); ok {
		t.Error("faults survived the reset")
	}
	if len(b.Requests.Recent("", "")) != 0 {
		t.Error("the request log survived the reset")
	}
	if d := b.Limiter.Peek(b.Clock.Now()); d.Remaining != ratelimit.DefaultLimits.Minute {
		t.Errorf("API budget after reset: %d left, want %d", d.Remaining, ratelimit.DefaultLimits.Minute)
	}
	if b.Controls != a.Controls {
		t.Error("the control budget did not carry over")
	}
	if !b.Clock.Now().Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("the reset account's clock reads %v, want the frozen instant", b.Clock.Now())
	}
}

func TestEachAccountHasItsOwnClock(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newRegistry(t, Config{Max: 10, FrozenAt: at})
	r.Get(key(1)).Frozen.Advance(time.Hour)
	if got := r.Get(key(2)).Clock.Now(); !got.Equal(at) {
		t.Errorf("moving one account's clock moved another's to %v", got)
	}
}

func TestAnnounceNeverFailsTheWrite(t *testing.T) {
	r := newRegistry(t, Config{Max: 10, NewOutbox: func(string, sandbox.Clock, Budget) Outbox { return &panickingOutbox{} }})
	a := r.Get(key(1))
	if _, err := a.Store.CreateWebhook(t.Context(), sandbox.WebhookInput{URL: "http://127.0.0.1:1/", Events: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	c, err := a.Store.CreateCampaign(t.Context(), sandbox.CampaignInput{Name: "n", Platform: "ios", TestersRequired: 1, RewardPerBug: "1"})
	if err != nil || c.ID == "" {
		t.Fatalf("the write failed with its announcement: %+v, %v", c, err)
	}
}

type panickingOutbox struct{ countingOutbox }

func (*panickingOutbox) Send(sandbox.Event, []sandbox.Webhook, []*sandbox.Fault) {
	panic("receiver exploded")
}

func TestRequestLogIsBounded(t *testing.T) {
	var log RequestLog
	long := string(make([]byte, 1<<20))
	for i := range RequestLogSize + 5 {
		log.Add(LoggedRequest{Path: fmt.Sprintf("/v1/%d", i), Query: long})
	}
	recent := log.Recent("", "")
	if len(recent) != RequestLogSize || recent[0].Path != fmt.Sprintf("/v1/%d", RequestLogSize+4) {
		t.Fatalf("kept %d, newest %q; want %d, newest last added", len(recent), recent[0].Path, RequestLogSize)
	}
	for _, r := range recent {
		if len(r.Query) > MaxLoggedText || !r.Truncated {
			t.Fatalf("kept a %d-byte query (truncated=%v)", len(r.Query), r.Truncated)
		}
	}
}

func TestPrefixCutsAtARuneBoundary(t *testing.T) {
	got, cut := Prefix("ééé", 3)
	if got != "é" || !cut {
		t.Errorf("Prefix = %q, %v", got, cut)
	}
}

// BenchmarkFreshAccount reports what a key costs that has only been read.
func BenchmarkFreshAccount(b *testing.B) {
	const keys = 10_000
	for b.Loop() {
		r := newRegistry(b, Config{Max: keys + 1})
		before := heapInUse()
		for i := range keys {
			a := r.Get(key(i))
			a.Limiter.Take(a.Clock.Now())
			ok := http.StatusOK
			a.Requests.Add(LoggedRequest{Method: "GET", Path: "/v1/campaigns", Status: &ok})
			if _, err := a.Store.Campaigns(b.Context(), sandbox.CampaignFilter{}, sandbox.PageRequest{Limit: 20}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(heapInUse()-before)/keys, "B/account")
		runtime.KeepAlive(r)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func TestConcurrentResetsLeaveOneAccountAndCloseTheRest(t *testing.T) {
	var mu sync.Mutex
	var opened []*countingOutbox
	r := newRegistry(t, Config{Max: 10, NewOutbox: func(string, sandbox.Clock, Budget) Outbox {
		mu.Lock()
		defer mu.Unlock()
		o := &countingOutbox{}
		opened = append(opened, o)
		return o
	}})
	stale := r.Get(key(1))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Reset(stale)
		}()
	}
	wg.Wait()
	open := 0
	for _, o := range opened {
		if !o.closed {
			open++
		}
	}
	if len(opened) != 9 || open != 1 {
		t.Errorf("%d outboxes opened, %d still open; want 9 and only the current account's", len(opened), open)
	}
}

func TestMemoryBudgetDropsTheLeastRecentlyUsedAccounts(t *testing.T) {
	wall := &wallClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	outboxes := map[string]*countingOutbox{}
	// Room for about three accounts' worth of the writes below.
	const perAccount = 40
	campaign := sandbox.CampaignInput{Name: "n", Platform: "ios", TestersRequired: 1, RewardPerBug: "1"}
	measure := newRegistry(t, Config{Max: 10, MemoryBudget: 1 << 40})
	probe := measure.Get(key(99))
	for range perAccount {
		if _, err := probe.Store.CreateCampaign(t.Context(), campaign); err != nil {
			t.Fatal(err)
		}
	}
	accountBytes := measure.MemoryUsed()
	r := newRegistry(t, Config{Max: 10, MemoryBudget: 3*accountBytes + accountBytes/2, Now: wall.Now,
		NewOutbox: func(id string, _ sandbox.Clock, _ Budget) Outbox {
			outboxes[id] = &countingOutbox{}
			return outboxes[id]
		}})
	fill := func(i int) *Account {
		t.Helper()
		a := r.Get(key(i))
		for range perAccount {
			if _, err := a.Store.CreateCampaign(t.Context(), campaign); err != nil {
				t.Fatalf("account %d: %v", i, err)
			}
		}
		wall.advance(time.Second)
		return a
	}
	first := fill(0)
	fill(1)
	fill(2)
	// Account 0 is used again, so account 1 is now the least recent.
	r.Get(key(0))
	fill(3)
	if got := r.MemoryUsed(); got > 3*accountBytes+accountBytes/2 {
		t.Errorf("%d bytes held, over the budget", got)
	}
	if !outboxes[sandbox.AccountForKey(key(1)).ID].closed || outboxes[sandbox.AccountForKey(key(0)).ID].closed {
		t.Errorf("the budget dropped the wrong account: want account 1, the least recently used")
	}
	if _, err := first.Store.Campaign(t.Context(), "cmp_000006"); err != nil {
		t.Errorf("the recently used account lost its campaign: %v", err)
	}
	// One account alone cannot pass the budget: its write is refused and
	// leaves nothing behind.
	a := r.Get(key(4))
	var (
		err     error
		created sandbox.Campaign
		last    string
	)
	for i := 0; err == nil && i < 10*perAccount; i++ {
		last = created.ID
		created, err = a.Store.CreateCampaign(t.Context(), campaign)
	}
	if sandbox.AsError(err).Code != sandbox.ErrLimitReached {
		t.Fatalf("writing past the budget: %v, want LIMIT_REACHED", err)
	}
	page, err := a.Store.Campaigns(t.Context(), sandbox.CampaignFilter{}, sandbox.PageRequest{Limit: 1})
	if err != nil || len(page.Items) != 1 {
		t.Fatal(page, err)
	}
	if page.Items[0].ID != last {
		t.Errorf("newest campaign after the refusal is %s, want %s, the last one accepted", page.Items[0].ID, last)
	}
	if r.MemoryUsed() > 3*accountBytes+accountBytes/2 {
		t.Errorf("%d bytes held, over the budget", r.MemoryUsed())
	}
	r.Close()
	if got := r.MemoryUsed(); got != 0 {
		t.Errorf("%d bytes held after every account was dropped", got)
	}
}

// Held tells a key without an account from one with, and opens none: the
// server counts new accounts against their client before Get opens them.
func TestHeldOpensNoAccount(t *testing.T) {
	r := newRegistry(t, Config{Max: 10})
	if a, held := r.Held(key(1)); held || a != nil || r.Len() != 0 {
		t.Fatalf("Held of a new key = %v, %v with %d accounts; want nil, false and none opened", a, held, r.Len())
	}
	opened := r.Get(key(1))
	if a, held := r.Held(key(1)); !held || a != opened {
		t.Errorf("Held after Get = %p, %v; want the account Get opened, true", a, held)
	}
	if _, held := r.Held(key(2)); held {
		t.Error("another key is held")
	}
}
