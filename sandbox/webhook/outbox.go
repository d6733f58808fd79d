package webhook

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
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
	meter     Meter
	// ctx is cancelled by Close, which cancels the attempts in flight.
	ctx    context.Context
	cancel context.CancelFunc

	// Guarded by d.mu.
	closed   bool
	ready    bool
	queue    []job
	retries  map[*retry]struct{}
	inFlight int
	// held is, for each webhook, the last delivery a reorder fault holds
	// back until the next event to that webhook, the deliveries it held
	// before that in its then; heldJobs counts them all. behind counts the
	// jobs in the then of jobs queued, scheduled or in flight, which come
	// once those have been attempted.
	held     map[string]job
	heldJobs int
	behind   int
	// finishing counts the attempts that have ended and are not yet
	// recorded, which settling waits for as it does for those in flight.
	finishing int
	// firing counts the retries whose time has come, out of retries and not
	// yet queued while their other timer is stopped: settling counts them
	// as queued, so that it never answers between the two.
	firing int
	// sent holds the attempts whose request has been written to the
	// receiver and that are not yet recorded, each with a channel closed
	// once it is: a read of the records waits for them (AwaitSent).
	sent map[*flight]chan struct{}
	// hosts counts the attempts in flight to each host; hanging marks the
	// hosts whose last attempt went unanswered for SlowAfter.
	hosts   map[netip.AddrPort]int
	hanging map[netip.AddrPort]bool
	// answered is set once an attempt of the account has ended without
	// hanging; fast counts its attempts in the fast lane.
	answered bool
	fast     int
	// jobBytes is what the jobs not yet done hold, their events counted
	// once however many jobs share them (events counts the jobs of each);
	// changed under d.mu and read by charge.
	jobBytes atomic.Int64
	events   map[string]int

	// mu guards the records and what the meter has been charged, apart
	// from d.mu so that reading them never waits for scheduling.
	mu          sync.Mutex
	records     []entry
	recordBytes int64
	charged     int64
	seq         uint64
	// recorded is closed, and replaced, when a record is kept.
	recorded chan struct{}
}

// Meter counts what outboxes hold against a memory budget that accounts
// share. Making room may close other accounts' outboxes, so an outbox calls
// it only with none of its own or the dispatcher's locks held.
type Meter interface {
	// Hold counts n more bytes. It never refuses: a delivery has no
	// client to refuse, and what an outbox holds is bounded by itself.
	Hold(n int64)
	// Release gives back n bytes.
	Release(n int64)
}

// What an outbox's memory is charged: a job not yet done (its struct, its
// retry's timers, its resolved addresses) besides its event's JSON, which is
// counted once for all the jobs that share it; a record; and the copy of a
// fault that a record keeps. TestWhatAnOutboxChargesCoversWhatItKeeps
// measures them against the heap. meterStep is how much is
// charged or given back at a time, so that deliveries take the registry's
// lock for it now and then, not at every step.
const (
	jobBytes    = 1536
	recordBytes = 160
	faultBytes  = 192
	meterStep   = 4 << 10
)

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
	// fault is the webhook fault that touches this attempt, nil for none.
	// A fault touches the first attempt of the delivery it hits (and the
	// copy a duplicate sends); retries go as without it.
	fault *sandbox.Fault
	// copy marks the second sending of a duplicated delivery.
	copy bool
	// then are the jobs queued once this attempt has been answered or has
	// failed: a duplicate's copy, and deliveries held back behind it.
	then []job
}

// hold counts j, a job not yet done; the caller holds d.mu.
func (o *Outbox) hold(j job) {
	n := int64(jobBytes)
	if o.events[j.event.ID]++; o.events[j.event.ID] == 1 {
		n += int64(cap(j.event.JSON))
	}
	o.jobBytes.Add(n)
}

// done stops counting j, which will not be tried again; the caller holds
// d.mu.
func (o *Outbox) done(j job) {
	n := int64(jobBytes)
	if o.events[j.event.ID]--; o.events[j.event.ID] == 0 {
		delete(o.events, j.event.ID)
		n += int64(cap(j.event.JSON))
	}
	o.jobBytes.Add(-n)
}

// chained counts j and the jobs held behind it.
func (j job) chained() int {
	n := 1
	for _, next := range j.then {
		n += next.chained()
	}
	return n
}

// retry is a job waiting for its time, on one or two clocks.
type retry struct {
	job   job
	stops []func() bool
	// due is when it is due on the account's clock; wait is how long it
	// waits on the dispatcher's.
	due  time.Time
	wait time.Duration
}

// NewOutbox returns the outbox of an account whose records and
// Webhook-Timestamp headers follow clock. The dispatcher holds it until its
// Close; an outbox made after the dispatcher's Close is closed. The clock is
// never called with the dispatcher's lock held, so it may take the
// account's own locks. A nil clock is the system clock. meter, if not nil,
// is charged for the jobs and records the outbox holds.
func (d *Dispatcher) NewOutbox(accountID string, clock sandbox.Clock, meter Meter) *Outbox {
	if clock == nil {
		clock = sandbox.SystemClock{}
	}
	o := &Outbox{d: d, accountID: accountID, clock: clock, meter: meter, retries: make(map[*retry]struct{}), recorded: make(chan struct{}),
		held: make(map[string]job), events: make(map[string]int), hosts: make(map[netip.AddrPort]int), hanging: make(map[netip.AddrPort]bool),
		sent: make(map[*flight]chan struct{})}
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
// webhooks that want e, and, in faults, nil or the webhook fault that hits
// each delivery (faults[i] for hooks[i], nil for none). It never blocks on
// delivery: when the account already has Pending deliveries waiting, the
// new ones are dropped and recorded as such. Send keeps e.JSON, which must
// not change afterwards. After Close it does nothing.
func (o *Outbox) Send(e sandbox.Event, hooks []sandbox.Webhook, faults []*sandbox.Fault) {
	if o == nil || len(hooks) == 0 {
		return
	}
	clockNow := o.clock.Now()
	now := sandbox.At(clockNow)
	d := o.d
	var (
		delayed []*retry
		dropped bool
	)
	d.mu.Lock()
	if o.closed {
		d.mu.Unlock()
		return
	}
	for i, hook := range hooks {
		j := job{event: e, hook: hook, attempt: 1}
		if i < len(faults) {
			j.fault = faults[i]
		}
		if o.pending() >= d.opts.Pending {
			o.record(j, now, 0, "dropped: the account has too many deliveries waiting", nil)
			dropped = true
			d.opts.Logger.Debug("webhook delivery dropped", "account", o.accountID, "event", e.ID, "webhook", hook.ID)
			continue
		}
		o.hold(j)
		reorder := j.fault != nil && j.fault.Webhook == sandbox.WebhookReorder
		if prev, ok := o.held[hook.ID]; ok {
			// The next event to the webhook: what was held back
			// comes after it, and waits no more unless j does.
			delete(o.held, hook.ID)
			j.then = []job{prev}
			if !reorder {
				n := prev.chained()
				o.heldJobs -= n
				o.behind += n
			}
		}
		switch {
		case reorder:
			o.held[hook.ID] = j
			o.heldJobs++
		case j.fault != nil && j.fault.DelayMS > 0:
			wait := time.Duration(j.fault.DelayMS) * time.Millisecond
			r := &retry{job: j, due: clockNow.Add(wait), wait: wait}
			o.retries[r] = struct{}{}
			delayed = append(delayed, r)
		default:
			o.queue = append(o.queue, j)
			d.enqueued(o)
		}
	}
	d.dispatch()
	d.mu.Unlock()
	for _, r := range delayed {
		o.arm(r)
	}
	o.charge()
	if dropped {
		o.signal()
	}
}

// pending counts the jobs waiting to be tried: queued, scheduled, held
// back, or behind another. The caller holds d.mu.
func (o *Outbox) pending() int {
	return len(o.queue) + len(o.retries) + o.firing + o.heldJobs + o.behind
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
		o.held, o.heldJobs, o.behind = nil, 0, 0
		for f := range o.sent {
			o.recordedSent(f)
		}
		delete(d.outboxes, o)
	}
	d.mu.Unlock()
	o.cancel()
	stopAll(stops)
	o.signal()
}

// retryAfter queues j's next attempt after wait: wait past j's attempt on
// the account's clock, or wait from now on the dispatcher's, whichever gets
// there first. Measured from the attempt, a retry is never lost to a move
// of the account's clock made while the attempt was under way: one already
// due fires at once. The retry goes as if no fault had touched j.
func (o *Outbox) retryAfter(wait time.Duration, j job) {
	due := j.at.Add(wait)
	j.attempt++
	j.target, j.fault, j.copy, j.then = nil, nil, false, nil
	r := &retry{job: j, due: due, wait: wait}
	d := o.d
	d.mu.Lock()
	if o.closed {
		d.mu.Unlock()
		return
	}
	o.retries[r] = struct{}{}
	d.mu.Unlock()
	o.arm(r)
}

// arm starts the timers of r, which is in o.retries: Timers rather than
// goroutines wait, so that pending retries cost little and Close can
// cancel them. The caller holds no lock.
func (o *Outbox) arm(r *retry) {
	d := o.d
	due, wait := r.due, r.wait
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
	if waiting {
		o.firing++
	}
	stops := r.stops
	d.mu.Unlock()
	// The other clock's timer goes before the job is queued, so that
	// whoever sees the retry's attempt sees no timer left for it.
	stopAll(stops)
	if !waiting {
		return
	}
	d.mu.Lock()
	o.firing--
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
	fault                                       *sandbox.Fault
}

// bytes is what e holds in memory beyond what others share: its URL is the
// webhook's own string, its IDs short.
func (e entry) bytes() int64 {
	n := recordBytes + int64(len(e.failure))
	if e.fault != nil {
		n += faultBytes
	}
	return n
}

func (e entry) delivery() sandbox.Delivery {
	d := sandbox.Delivery{
		ID: fmt.Sprintf("dlv_%06d", e.seq), WebhookID: e.webhookID, EventID: e.eventID, EventType: e.eventType,
		URL: e.url, Attempt: int(e.attempt), At: e.at, StatusCode: int(e.status), Error: e.failure, Fault: e.fault, Seq: e.seq,
	}
	if e.next != 0 {
		next := e.next
		d.NextAttemptAt = &next
	}
	return d
}

// record keeps one delivery record made at now, forgetting the oldest beyond
// Records. next is the wait before the next attempt, nil when there is none.
// Whoever waits on Recorded hears of it only from signal, once the caller
// has charged the meter for it.
func (o *Outbox) record(j job, now sandbox.Time, status int, failure string, next *time.Duration) {
	e := entry{
		webhookID: j.hook.ID, eventID: j.event.ID, eventType: j.event.Type, url: j.hook.URL, failure: failure,
		attempt: int32(j.attempt), status: int32(status), at: now, fault: j.fault,
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
		slot := &o.records[(o.seq-1)%uint64(len(o.records))]
		o.recordBytes -= slot.bytes()
		*slot = e
	}
	o.recordBytes += e.bytes()
}

// signal wakes whoever waits for a record.
func (o *Outbox) signal() {
	o.mu.Lock()
	defer o.mu.Unlock()
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
	state := sandbox.Settlement{InFlight: o.inFlight + o.finishing, Queued: len(o.queue) + o.firing + o.behind, Held: o.heldJobs}
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

// charge brings what the meter has been charged for the outbox up or down
// to what its jobs and records hold now, in steps of meterStep. It takes no
// lock while it calls the meter, which may close other accounts' outboxes;
// two calls at once each charge the change they saw, which adds up.
func (o *Outbox) charge() {
	if o.meter == nil {
		return
	}
	o.mu.Lock()
	holds := o.jobBytes.Load() + o.recordBytes
	target := (holds + meterStep - 1) / meterStep * meterStep
	change := target - o.charged
	o.charged = target
	o.mu.Unlock()
	switch {
	case change > 0:
		o.meter.Hold(change)
	case change < 0:
		o.meter.Release(-change)
	}
}

// markSent notes that f's request has reached its receiver, unless f has
// already ended.
func (o *Outbox) markSent(f *flight) {
	d := o.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if !f.done && !o.closed {
		o.sent[f] = make(chan struct{})
	}
}

// recordedSent tells whoever waits for f, sent, that it is recorded or will
// never be; the caller holds d.mu.
func (o *Outbox) recordedSent(f *flight) {
	if ch, ok := o.sent[f]; ok {
		delete(o.sent, f)
		close(ch)
	}
}

// AwaitSent waits until every attempt whose request had reached its
// receiver when it was called has been recorded, or until ctx is done, so
// that a receiver that has answered an attempt finds it in the records
// read next. It reports whether it waited for any.
func (o *Outbox) AwaitSent(ctx context.Context) bool {
	d := o.d
	d.mu.Lock()
	waits := make([]chan struct{}, 0, len(o.sent))
	for _, ch := range o.sent {
		waits = append(waits, ch)
	}
	d.mu.Unlock()
	for _, ch := range waits {
		select {
		case <-ch:
		case <-ctx.Done():
			return true
		}
	}
	return len(waits) > 0
}

// Sending reports whether an attempt of the account has reached its
// receiver and is not yet recorded.
func (o *Outbox) Sending() bool {
	d := o.d
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(o.sent) > 0
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
