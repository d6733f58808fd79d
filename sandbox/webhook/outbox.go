package webhook

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/testcampaign/kit/sandbox"
)

// Outbox is one account's deliveries: its queue, its scheduled retries and
// its last Records delivery records. Its methods are safe for concurrent use.
// Its retries wait on the account's clock when that is a
// sandbox.TimerClock, and on the dispatcher's Clock at the latest.
type Outbox struct {
	d         *Dispatcher
	accountID string
	clock     sandbox.Clock
	// ctx is cancelled by Close, which cancels the attempts in flight.
	ctx    context.Context
	cancel context.CancelFunc

	// Guarded by d.mu.
	closed   bool
	ready    bool
	queue    []job
	retries  map[*retry]struct{}
	inFlight int
	// hosts counts the attempts in flight to each host; hanging marks the
	// hosts whose last attempt went unanswered for SlowAfter.
	hosts   map[netip.AddrPort]int
	hanging map[netip.AddrPort]bool

	// mu guards the records, apart from d.mu so that reading them never
	// waits for scheduling.
	mu      sync.Mutex
	records []entry
	seq     uint64
	// recorded is closed, and replaced, when a record is kept.
	recorded chan struct{}
}

// job is one attempt to deliver one event to one webhook.
type job struct {
	event   sandbox.Event
	hook    sandbox.Webhook
	attempt int
	// target is where the attempt may connect, once resolved: the first
	// address is the host its limits count.
	target []netip.AddrPort
	// at is when the attempt started, on the account's clock: its
	// Webhook-Timestamp, and what the wait for its retry is measured from.
	at time.Time
}

// retry is a job waiting for its time, on one or two clocks.
type retry struct {
	job   job
	stops []func() bool
	// due is when it is due on the account's clock.
	due time.Time
}

// NewOutbox returns the outbox of an account whose records and
// Webhook-Timestamp headers follow clock. The dispatcher holds it until its
// Close; an outbox made after the dispatcher's Close is closed. The clock is
// never called with the dispatcher's lock held, so it may take the
// account's own locks. A nil clock is the system clock.
func (d *Dispatcher) NewOutbox(accountID string, clock sandbox.Clock) *Outbox {
	if clock == nil {
		clock = sandbox.SystemClock{}
	}
	o := &Outbox{d: d, accountID: accountID, clock: clock, retries: make(map[*retry]struct{}), recorded: make(chan struct{}),
		hosts: make(map[netip.AddrPort]int), hanging: make(map[netip.AddrPort]bool)}
	o.ctx, o.cancel = context.WithCancel(d.ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		o.closed = true
		o.cancel()
	} else {
		d.outboxes[o] = struct{}{}
	}
	return o
}

// Send queues a delivery of e to each of hooks; the caller passes only the
// webhooks that want e. It never blocks on delivery: when the account
// already has Pending deliveries waiting, the new ones are dropped and
// recorded as such. Send keeps e.JSON, which must not change afterwards.
// After Close it does nothing.
func (o *Outbox) Send(e sandbox.Event, hooks []sandbox.Webhook) {
	if o == nil || len(hooks) == 0 {
		return
	}
	now := sandbox.At(o.clock.Now())
	d := o.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if o.closed {
		return
	}
	for _, hook := range hooks {
		j := job{event: e, hook: hook, attempt: 1}
		if len(o.queue)+len(o.retries) >= d.opts.Pending {
			o.record(j, now, 0, "dropped: the account has too many deliveries waiting", nil)
			d.opts.Logger.Debug("webhook delivery dropped", "account", o.accountID, "event", e.ID, "webhook", hook.ID)
			continue
		}
		o.queue = append(o.queue, j)
		d.enqueued(o)
	}
	d.dispatch()
}

// Close cancels every queued delivery and scheduled retry of the account and
// the attempts in flight: once it returns no attempt starts, and none
// finishing is recorded or retried. Later Sends do nothing. The records stay
// readable. It does not wait for the attempts in flight to return.
func (o *Outbox) Close() {
	d := o.d
	var stops []func() bool
	d.mu.Lock()
	if !o.closed {
		o.closed = true
		o.queue = nil
		for r := range o.retries {
			stops = append(stops, r.stops...)
		}
		o.retries = nil
		delete(d.outboxes, o)
	}
	d.mu.Unlock()
	o.cancel()
	stopAll(stops)
	o.mu.Lock()
	close(o.recorded)
	o.recorded = make(chan struct{})
	o.mu.Unlock()
}

// retryAfter queues j's next attempt after wait: wait past j's attempt on
// the account's clock, or wait from now on the dispatcher's, whichever gets
// there first. Measured from the attempt, a retry is never lost to a move
// of the account's clock made while the attempt was under way: one already
// due fires at once. Timers rather than goroutines wait, so that pending
// retries cost little and Close can cancel them.
func (o *Outbox) retryAfter(wait time.Duration, j job) {
	due := j.at.Add(wait)
	j.attempt++
	j.target = nil
	r := &retry{job: j, due: due}
	d := o.d
	d.mu.Lock()
	if o.closed {
		d.mu.Unlock()
		return
	}
	o.retries[r] = struct{}{}
	d.mu.Unlock()

	clocks := []sandbox.Clock{d.opts.Clock}
	if o.clock != d.opts.Clock {
		clocks = append(clocks, o.clock)
	}
	var stops []func() bool
	for _, c := range clocks {
		if deadlines, ok := c.(sandbox.DeadlineClock); ok && c == o.clock {
			stops = append(stops, deadlines.AtFunc(due, func() { o.fire(r) }))
		} else if timers, ok := c.(sandbox.TimerClock); ok {
			stops = append(stops, timers.AfterFunc(wait, func() { o.fire(r) }))
		}
	}
	d.mu.Lock()
	_, waiting := o.retries[r]
	if waiting {
		r.stops = stops
	}
	d.mu.Unlock()
	if !waiting {
		// Fired or cancelled already: the other timer has nothing to do.
		stopAll(stops)
	}
}

// fire queues r's job the first time one of its clocks gets there.
func (o *Outbox) fire(r *retry) {
	d := o.d
	d.mu.Lock()
	_, waiting := o.retries[r]
	delete(o.retries, r)
	stops := r.stops
	d.mu.Unlock()
	// The other clock's timer goes before the job is queued, so that
	// whoever sees the retry's attempt sees no timer left for it.
	stopAll(stops)
	if !waiting {
		return
	}
	d.mu.Lock()
	if !o.closed {
		o.queue = append(o.queue, r.job)
		d.enqueued(o)
		d.dispatch()
	}
	d.mu.Unlock()
}

func stopAll(stops []func() bool) {
	for _, stop := range stops {
		stop()
	}
}

// entry is a delivery record as an outbox keeps it: a Delivery without the
// ID and the pointer, which are made when the record is read. An account
// keeps up to Records of them, so their size is the sandbox's memory.
type entry struct {
	webhookID, eventID, eventType, url, failure string
	attempt, status                             int32
	at, next                                    sandbox.Time
	seq                                         uint64
}

func (e entry) delivery() sandbox.Delivery {
	d := sandbox.Delivery{
		ID: fmt.Sprintf("dlv_%06d", e.seq), WebhookID: e.webhookID, EventID: e.eventID, EventType: e.eventType,
		URL: e.url, Attempt: int(e.attempt), At: e.at, StatusCode: int(e.status), Error: e.failure, Seq: e.seq,
	}
	if e.next != 0 {
		next := e.next
		d.NextAttemptAt = &next
	}
	return d
}

// record keeps one delivery record made at now, forgetting the oldest beyond
// Records. next is the wait before the next attempt, nil when there is none.
func (o *Outbox) record(j job, now sandbox.Time, status int, failure string, next *time.Duration) {
	e := entry{
		webhookID: j.hook.ID, eventID: j.event.ID, eventType: j.event.Type, url: j.hook.URL, failure: failure,
		attempt: int32(j.attempt), status: int32(status), at: now,
	}
	if next != nil {
		e.next = now.Add(*next)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seq++
	e.seq = o.seq
	if len(o.records) < o.d.opts.Records {
		o.records = append(o.records, e)
	} else {
		o.records[(o.seq-1)%uint64(len(o.records))] = e
	}
	close(o.recorded)
	o.recorded = make(chan struct{})
}

// Settle waits until no delivery of the account is in flight, queued or
// due, or until ctx is done, and says how its deliveries stand then.
// Retries still waiting for their time are not waited for.
func (o *Outbox) Settle(ctx context.Context) sandbox.Settlement {
	for {
		// Taken first, so that a record kept while the state is read
		// still wakes the wait.
		recorded := o.Recorded()
		state := o.state()
		if state.Settled {
			return state
		}
		select {
		case <-recorded:
		case <-ctx.Done():
			return state
		}
	}
}

// state counts the account's deliveries by where they stand.
func (o *Outbox) state() sandbox.Settlement {
	now := o.clock.Now()
	d := o.d
	d.mu.Lock()
	defer d.mu.Unlock()
	state := sandbox.Settlement{InFlight: o.inFlight, Queued: len(o.queue)}
	for r := range o.retries {
		if r.due.After(now) {
			state.Scheduled++
		} else {
			state.Due++
		}
	}
	// Every attempt in flight, queued or due ends in a record, or in
	// Close, which wakes the wait as a record does.
	state.Settled = o.closed || state.InFlight+state.Queued+state.Due == 0
	return state
}

// Recorded returns a channel that is closed when the next record is kept.
// Whoever waits for deliveries takes it before reading the records, so
// that none slips in between unseen.
func (o *Outbox) Recorded() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.recorded
}

// Deliveries returns one page of the records kept, newest first.
func (o *Outbox) Deliveries(page sandbox.PageRequest) sandbox.Page[sandbox.Delivery] {
	limit := page.Limit
	if limit <= 0 {
		limit = sandbox.DefaultPageSize
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	oldest := o.seq - uint64(len(o.records)) + 1
	start := o.seq
	if page.Before != 0 && page.Before-1 < start {
		start = page.Before - 1
	}
	var items []sandbox.Delivery
	seq := start
	for ; seq >= oldest && seq > 0 && len(items) < limit; seq-- {
		items = append(items, o.records[(seq-1)%uint64(len(o.records))].delivery())
	}
	hasMore := seq >= oldest && seq > 0
	var last uint64
	if len(items) > 0 {
		last = items[len(items)-1].Seq
	}
	return sandbox.NewPage(items, hasMore, last)
}
