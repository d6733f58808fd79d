// Package webhook delivers the sandbox's events to registered webhooks: a
// signed POST per event and webhook, retried with exponential back-off, every
// attempt recorded so that tests can inspect it.
//
// One Dispatcher serves the whole sandbox; each account has an Outbox with
// its own queue, retries and records. Attempts start from the accounts with
// work, in turn, never more than PerAccount of one account's at once nor
// more than PerHost to one host, a host being the address and port a
// delivery connects to, however its URL spells them.
//
// An account whose attempt to a host has gone unanswered for SlowAfter has
// one attempt at a time to that host until one is answered: a receiver that
// hangs loses its concurrency, for the account that hit it only, so that
// aiming webhooks at another tenant's receiver costs that tenant little.
//
// Attempts run in two lanes. A new attempt takes one of Workers places in
// the fast lane; one still without an answer after SlowAfter moves to the
// slow lane, which holds up to SlowLane attempts (PerHost of them per host),
// and frees its place. When the slow lane has no room for it, the attempt
// ends there as timed out and is retried later.
//
// The fast lane is for accounts whose receivers answer. An account with a
// host that hangs for it starts every attempt in the slow lane, or waits
// for room there, until that host answers; an account none of whose
// attempts has been answered yet has one attempt at a time in the fast
// lane, and gives its place up after a tenth of SlowAfter when the fast lane
// is full. So however many accounts' receivers hang, each holds the fast
// lane once, briefly, and another account's deliveries wait about as long
// as with a few.
package webhook

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/testcampaign/kit/sandbox"
)

// Options configure a Dispatcher; zero values take the defaults.
type Options struct {
	// Logger receives dropped and failed deliveries at debug level, since
	// they are the receivers' business and recorded for them (default:
	// discarded).
	Logger *slog.Logger
	// MaxAttempts bounds the tries per event and webhook (default 5).
	MaxAttempts int
	// FirstRetry is the wait before the second try; each later wait doubles
	// (default 1s: tries at 0, 1, 3, 7 and 15 seconds). A retry is due when
	// the account's clock has moved that far or, at the latest, when Clock
	// has: a frozen account's retries come on time and come at once when
	// its clock is moved past them.
	FirstRetry time.Duration
	// Workers is the fast lane: how many attempts may start and wait up to
	// SlowAfter for their answer at once, across the sandbox (default 32).
	Workers int
	// SlowAfter is how long an attempt may hold a place in the fast lane
	// (default 1s).
	SlowAfter time.Duration
	// SlowLane is how many attempts may wait longer than SlowAfter for an
	// answer at once, across the sandbox (default 256).
	SlowLane int
	// PerAccount is how many of one account's attempts are in flight at
	// once, in both lanes (default 4).
	PerAccount int
	// PerHost is how many attempts to one host are in each lane at once,
	// across all accounts (default 4).
	PerHost int
	// Pending bounds an account's deliveries waiting to be tried or retried
	// (default 256); beyond it a new delivery is dropped and recorded as such.
	Pending int
	// Records is how many delivery records each account keeps, the newest
	// (default 1000).
	Records int
	// AttemptTimeout bounds one attempt, from resolving the host to reading
	// the answer (default 10s).
	AttemptTimeout time.Duration
	// DenyPrivate refuses loopback, private and special-purpose destinations
	// and the host's own addresses as well as those always refused
	// (link-local, multicast, unspecified).
	DenyPrivate bool
	// LoopbackOnly delivers only to receivers on this machine: loopback
	// addresses and the name localhost; nothing is ever looked up. For a
	// sandbox on a developer's machine, and for tests, which must never send
	// anything elsewhere whatever URL they register.
	LoopbackOnly bool
	// Clock is the real time that attempts are timed by and retries wait on
	// at the latest (default the system clock). Tests pass a FrozenClock and
	// move it.
	Clock sandbox.TimerClock
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = sandbox.SystemClock{}
	}
	counts := []struct {
		value *int
		def   int
	}{{&o.MaxAttempts, 5}, {&o.Workers, 32}, {&o.SlowLane, 256}, {&o.PerAccount, 4}, {&o.PerHost, 4}, {&o.Pending, 256}, {&o.Records, 1000}}
	for _, c := range counts {
		if *c.value <= 0 {
			*c.value = c.def
		}
	}
	durations := []struct {
		value *time.Duration
		def   time.Duration
	}{{&o.FirstRetry, time.Second}, {&o.SlowAfter, time.Second}, {&o.AttemptTimeout, 10 * time.Second}}
	for _, d := range durations {
		if *d.value <= 0 {
			*d.value = d.def
		}
	}
	return o
}

// Dispatcher starts and times every account's delivery attempts.
type Dispatcher struct {
	opts   Options
	policy policy
	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc
	// running counts the attempts' goroutines, for Close to wait on.
	running sync.WaitGroup

	// mu guards everything below and every Outbox's queue, retries,
	// in-flight count and closed flag: scheduling is one decision across
	// accounts and hosts.
	mu     sync.Mutex
	closed bool
	// ready holds the outboxes with queued jobs, in the order they are
	// served.
	ready    []*Outbox
	fast     int
	slow     int
	hosts    map[netip.AddrPort]*lanes
	outboxes map[*Outbox]struct{}
}

// lanes counts attempts to one host in each lane.
type lanes struct{ fast, slow int }

// Start returns a running dispatcher; Close stops it.
func Start(opts Options) *Dispatcher {
	opts = opts.withDefaults()
	d := &Dispatcher{
		opts: opts,
		policy: policy{
			denyPrivate: opts.DenyPrivate, loopbackOnly: opts.LoopbackOnly,
			own: &ownAddresses{clock: opts.Clock}, lookup: net.DefaultResolver.LookupNetIP,
		},
		hosts:    make(map[netip.AddrPort]*lanes),
		outboxes: make(map[*Outbox]struct{}),
	}
	d.client = newClient(d.policy, opts)
	d.ctx, d.cancel = context.WithCancel(context.Background())
	return d
}

// Close closes every outbox, cancelling attempts in flight and pending
// retries, and returns once the attempts have returned.
func (d *Dispatcher) Close() {
	d.mu.Lock()
	d.closed = true
	outboxes := make([]*Outbox, 0, len(d.outboxes))
	for o := range d.outboxes {
		outboxes = append(outboxes, o)
	}
	d.mu.Unlock()
	for _, o := range outboxes {
		o.Close()
	}
	d.cancel()
	d.running.Wait()
	d.client.CloseIdleConnections()
}

// flight is one attempt under way: which lane it is in and which host it
// counts against once its host is known; untried is set when its account
// had no attempt answered yet as it started. Guarded by d.mu.
type flight struct {
	slow, done, untried bool
	host                netip.AddrPort
}

// dispatch starts as many queued jobs as the lanes have room for; the
// caller holds d.mu.
func (d *Dispatcher) dispatch() {
	for !d.closed && (d.fast < d.opts.Workers || d.slow < d.opts.SlowLane) {
		o, j, slow, ok := d.next()
		if !ok {
			return
		}
		f := &flight{slow: slow, untried: !o.answered}
		if slow {
			d.slow++
		} else {
			d.fast++
			o.fast++
		}
		o.inFlight++
		if j.target != nil {
			f.host = j.target[0]
			if slow {
				d.host(f.host).slow++
			} else {
				d.host(f.host).fast++
			}
			o.hosts[f.host]++
		}
		d.running.Add(1)
		go d.run(o, j, f)
	}
}

// laneOf says which lane o's next attempt starts in, and whether there is
// room for it there: the slow lane for an account with a host that hangs
// for it, else the fast lane, where an account with no attempt answered yet
// has one place at most. The caller holds d.mu.
func (d *Dispatcher) laneOf(o *Outbox) (slow, room bool) {
	switch {
	case len(o.hanging) > 0:
		return true, d.slow < d.opts.SlowLane
	case !o.answered && o.fast > 0:
		return false, false
	}
	return false, d.fast < d.opts.Workers
}

// host returns the lane counts of addr; the caller holds d.mu.
func (d *Dispatcher) host(addr netip.AddrPort) *lanes {
	l, ok := d.hosts[addr]
	if !ok {
		l = &lanes{}
		d.hosts[addr] = l
	}
	return l
}

// lookahead is how far into an account's queue next looks for a job whose
// host is not at its limit. It bounds the work done under the lock when many
// accounts queue for one hanging host; the price is that an account's jobs
// for other hosts wait behind more than lookahead jobs for a host at its
// limit, which delays that account only.
const lookahead = 16

// next claims the first job, in turn across the ready outboxes, that neither
// its account's nor its host's limit nor its lane holds back, and says
// whether it starts in the slow lane; a job whose host is not yet
// resolved is checked once it is. An outbox served moves to the back of the
// turn. Blocked jobs stay queued rather than hold a place, so that a hanging
// host or account never ties up the rest.
func (d *Dispatcher) next() (*Outbox, job, bool, bool) {
	for i := 0; i < len(d.ready); {
		o := d.ready[i]
		if o.closed || len(o.queue) == 0 {
			o.ready = false
			d.ready = slices.Delete(d.ready, i, i+1)
			continue
		}
		slow, room := d.laneOf(o)
		if o.inFlight >= d.opts.PerAccount || !room {
			i++
			continue
		}
		k := slices.IndexFunc(o.queue[:min(len(o.queue), lookahead)], func(j job) bool {
			return j.target == nil || d.mayStart(o, j.target[0], slow)
		})
		if k < 0 {
			i++
			continue
		}
		j := o.queue[k]
		if k == 0 {
			// Reslicing rather than copying keeps taking from the
			// front of a long queue cheap.
			o.queue[0] = job{}
			o.queue = o.queue[1:]
		} else {
			o.queue = slices.Delete(o.queue, k, k+1)
		}
		d.ready = slices.Delete(d.ready, i, i+1)
		if len(o.queue) > 0 {
			d.ready = append(d.ready, o)
		} else {
			o.ready = false
		}
		return o, j, slow, true
	}
	return nil, job{}, false, false
}

// mayStart reports whether another of o's attempts may go to host in the
// given lane; the caller holds d.mu.
func (d *Dispatcher) mayStart(o *Outbox, host netip.AddrPort, slow bool) bool {
	if o.hanging[host] && o.hosts[host] > 0 {
		return false
	}
	l := d.hosts[host]
	if l == nil {
		return true
	}
	if slow {
		return l.slow < d.opts.PerHost
	}
	return l.fast < d.opts.PerHost
}

// run makes one attempt of j and settles it.
func (d *Dispatcher) run(o *Outbox, j job, f *flight) {
	defer d.running.Done()
	j.at = o.clock.Now()
	ctx, cancel := context.WithCancelCause(o.ctx)
	defer cancel(nil)
	stopTimeout := d.opts.Clock.AfterFunc(d.opts.AttemptTimeout, func() { cancel(errAttemptTimeout) })
	defer stopTimeout()
	stopSlow := d.opts.Clock.AfterFunc(d.opts.SlowAfter, func() { d.demote(o, f, cancel, false) })
	defer stopSlow()
	if f.untried && !f.slow {
		stopCrowded := d.opts.Clock.AfterFunc(d.opts.SlowAfter/10, func() { d.demote(o, f, cancel, true) })
		defer stopCrowded()
	}
	if j.target == nil {
		target, r := d.resolve(ctx, j)
		if r.failure != "" {
			d.finish(o, j, f, r)
			return
		}
		j.target = target
		if !d.claimHost(o, j, f) {
			return
		}
	}
	d.finish(o, j, f, d.attempt(ctx, o, j, f))
}

// claimHost counts f against its newly resolved host or, when that host is
// at its limit in f's lane, puts j back at the front of its queue, unspent,
// and reports false.
func (d *Dispatcher) claimHost(o *Outbox, j job, f *flight) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if target := j.target[0]; d.mayStart(o, target, f.slow) {
		host := d.host(target)
		if f.slow {
			host.slow++
		} else {
			host.fast++
		}
		o.hosts[target]++
		f.host = target
		return true
	}
	d.release(o, f)
	if !o.closed {
		o.queue = slices.Insert(o.queue, 0, j)
		d.enqueued(o)
	}
	d.dispatch()
	return false
}

// demote moves an attempt that has waited SlowAfter from the fast lane to
// the slow one or, when the slow lane or its host's share of it is full,
// cuts it short. Either way its account's later attempts start in the slow
// lane, and go to the host one at a time, until the host answers. With
// crowded set, it does so only when the fast lane is full.
func (d *Dispatcher) demote(o *Outbox, f *flight, cancel context.CancelCauseFunc, crowded bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f.done || f.slow || crowded && d.fast < d.opts.Workers {
		return
	}
	host := d.hosts[f.host]
	if f.host.IsValid() {
		o.hanging[f.host] = true
	}
	if d.slow >= d.opts.SlowLane || host != nil && host.slow >= d.opts.PerHost {
		cancel(errAttemptTimeout)
		return
	}
	f.slow = true
	d.fast--
	o.fast--
	d.slow++
	if host != nil {
		host.fast--
		host.slow++
	}
	d.dispatch()
}

// release frees f's places; the caller holds d.mu.
func (d *Dispatcher) release(o *Outbox, f *flight) {
	f.done = true
	o.inFlight--
	host := d.hosts[f.host]
	if host != nil {
		if o.hosts[f.host]--; o.hosts[f.host] == 0 {
			delete(o.hosts, f.host)
		}
	}
	if f.slow {
		d.slow--
		if host != nil {
			host.slow--
		}
	} else {
		d.fast--
		o.fast--
		if host != nil {
			host.fast--
		}
	}
	if host != nil && host.fast == 0 && host.slow == 0 {
		delete(d.hosts, f.host)
	}
}

// finish releases the attempt's places and, unless its outbox has been
// closed meanwhile, records it, schedules the retry, and queues what was to
// follow the attempt: a duplicate's copy and the deliveries held behind it,
// after the record, so that the receiver and the records see them later.
// Until the record is kept the attempt counts as in flight, and what
// follows it as queued, so that no settle ends before them.
func (d *Dispatcher) finish(o *Outbox, j job, f *flight, r result) {
	now := sandbox.At(j.at)
	final := r.failure == "" || !r.retry || j.attempt >= d.opts.MaxAttempts
	follow := j.then
	if j.fault != nil && j.fault.Webhook == sandbox.WebhookDuplicate && !j.copy {
		copied := job{event: j.event, hook: j.hook, attempt: j.attempt, fault: j.fault, copy: true}
		follow = append([]job{copied}, follow...)
	}
	d.mu.Lock()
	if f.host.IsValid() {
		if r.failure == reasonTimeout {
			o.hanging[f.host] = true
		} else {
			delete(o.hanging, f.host)
			o.answered = true
		}
	}
	d.release(o, f)
	if !o.closed {
		o.finishing++
		o.behind += len(follow) - len(j.then)
		if len(follow) > len(j.then) {
			o.hold(follow[0])
		}
		if final {
			o.done(j)
		}
	}
	d.dispatch()
	closed := o.closed
	d.mu.Unlock()
	if closed {
		return
	}
	if r.failure != "" {
		d.opts.Logger.Debug("webhook delivery failed", "account", o.accountID, "event", j.event.ID,
			"webhook", j.hook.ID, "attempt", j.attempt, "error", r.failure)
	}
	if final {
		o.record(j, now, r.status, r.failure, nil)
	} else {
		// Scheduled before it is recorded, so that whoever sees the
		// record can move the clock past the retry.
		wait := backoff(d.opts.FirstRetry, j.attempt)
		o.retryAfter(wait, j)
		o.record(j, now, r.status, r.failure, &wait)
	}
	d.mu.Lock()
	o.recordedSent(f)
	if !o.closed {
		o.finishing--
		o.behind -= len(follow)
		o.queue = append(o.queue, follow...)
		if len(o.queue) > 0 {
			d.enqueued(o)
		}
		d.dispatch()
	}
	d.mu.Unlock()
	o.charge()
	o.signal()
}

// maxRetryWait caps the doubling, so that a large MaxAttempts neither
// overflows nor waits for days.
const maxRetryWait = time.Hour

// backoff is the wait after the given failed attempt: FirstRetry, doubled
// for each attempt after the first.
func backoff(first time.Duration, attempt int) time.Duration {
	wait := first
	for range attempt - 1 {
		if wait >= maxRetryWait {
			break
		}
		wait *= 2
	}
	return min(wait, maxRetryWait)
}

// enqueued puts o in the turn if it is not there; the caller holds d.mu and
// has queued a job on o.
func (d *Dispatcher) enqueued(o *Outbox) {
	if !o.ready {
		o.ready = true
		d.ready = append(d.ready, o)
	}
}
