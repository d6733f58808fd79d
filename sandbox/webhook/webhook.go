// Package webhook delivers the sandbox's events to registered webhooks: a
// signed POST per event and webhook, retried with exponential back-off, every
// attempt recorded so that tests can inspect it.
//
// One Dispatcher serves the whole sandbox with a fixed pool of workers; each
// account has an Outbox with its own queue, retries and records. Workers take
// one job at a time from the accounts with work, in turn, and never more than
// PerAccount of one account's or PerHost of one host's at once, so that an
// account whose receiver is slow or dead holds a few workers at most and
// never delays or drops another account's deliveries.
package webhook

import (
	"context"
	"log/slog"
	"net/http"
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
	// (default 1s: tries at 0, 1, 3, 7 and 15 seconds). Waits are real time,
	// whatever the account's clock says.
	FirstRetry time.Duration
	// Workers is how many deliveries are in flight across the whole sandbox
	// (default 32).
	Workers int
	// PerAccount is how many of one account's deliveries are in flight at
	// once (default 4), so that it takes Workers/PerAccount accounts with
	// hanging receivers to keep every worker busy.
	PerAccount int
	// PerHost is how many deliveries are in flight to one host and port
	// (default 4), across all accounts.
	PerHost int
	// Pending bounds an account's deliveries waiting to be tried or retried
	// (default 256); beyond it a new delivery is dropped and recorded as such.
	Pending int
	// Records is how many delivery records each account keeps, the newest
	// (default 1000).
	Records int
	// AttemptTimeout bounds one attempt, from connecting to reading the
	// answer (default 10s).
	AttemptTimeout time.Duration
	// DenyPrivate refuses loopback and private destinations as well as those
	// always refused (link-local, multicast, unspecified).
	DenyPrivate bool
	// LoopbackOnly delivers only to receivers on this machine: any other
	// host is refused before its name is looked up. For a sandbox on a
	// developer's machine, and for tests, which must never send anything
	// elsewhere whatever URL they register.
	LoopbackOnly bool
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	defaults := []struct {
		value *int
		def   int
	}{{&o.MaxAttempts, 5}, {&o.Workers, 32}, {&o.PerAccount, 4}, {&o.PerHost, 4}, {&o.Pending, 256}, {&o.Records, 1000}}
	for _, d := range defaults {
		if *d.value <= 0 {
			*d.value = d.def
		}
	}
	if o.FirstRetry <= 0 {
		o.FirstRetry = time.Second
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = 10 * time.Second
	}
	return o
}

// Dispatcher runs the workers that deliver every account's events.
type Dispatcher struct {
	opts   Options
	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// mu guards everything below and every Outbox's queue, timers,
	// in-flight count and closed flag: scheduling is one decision across
	// accounts and hosts.
	mu     sync.Mutex
	wake   *sync.Cond
	closed bool
	// ready holds the outboxes with queued jobs, in the order workers
	// serve them.
	ready    []*Outbox
	hosts    map[string]int
	outboxes map[*Outbox]struct{}
}

// Start returns a running dispatcher; Close stops it.
func Start(opts Options) *Dispatcher {
	opts = opts.withDefaults()
	d := &Dispatcher{
		opts:     opts,
		client:   newClient(opts),
		hosts:    make(map[string]int),
		outboxes: make(map[*Outbox]struct{}),
	}
	d.wake = sync.NewCond(&d.mu)
	d.ctx, d.cancel = context.WithCancel(context.Background())
	for range opts.Workers {
		d.wg.Add(1)
		go d.work()
	}
	return d
}

// Close closes every outbox, cancelling attempts in flight and pending
// retries, and returns once the workers have stopped.
func (d *Dispatcher) Close() {
	d.mu.Lock()
	d.closed = true
	outboxes := make([]*Outbox, 0, len(d.outboxes))
	for o := range d.outboxes {
		outboxes = append(outboxes, o)
	}
	d.wake.Broadcast()
	d.mu.Unlock()
	for _, o := range outboxes {
		o.Close()
	}
	d.cancel()
	d.wg.Wait()
	d.client.CloseIdleConnections()
}

func (d *Dispatcher) work() {
	defer d.wg.Done()
	for {
		o, j, ok := d.take()
		if !ok {
			return
		}
		result := d.attempt(o, j)
		d.finish(o, j, result)
	}
}

// take waits for a job that may run now and claims it; it returns false once
// the dispatcher is closed.
func (d *Dispatcher) take() (*Outbox, job, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for !d.closed {
		if o, j, ok := d.next(); ok {
			return o, j, true
		}
		d.wake.Wait()
	}
	return nil, job{}, false
}

// lookahead is how far into an account's queue next looks for a job whose
// host is not at its limit. It bounds the work done under the lock when many
// accounts queue for one hanging host; the price is that an account's jobs
// for other hosts wait behind more than lookahead jobs for a host at its
// limit, which delays that account only.
const lookahead = 16

// next claims the first job, in turn across the ready outboxes, that neither
// its account's nor its host's limit holds back. An outbox served moves to
// the back of the turn. Blocked jobs stay queued rather than hold a worker, so
// that a hanging host or account never ties up the rest.
func (d *Dispatcher) next() (*Outbox, job, bool) {
	for i := 0; i < len(d.ready); {
		o := d.ready[i]
		if o.closed || len(o.queue) == 0 {
			o.ready = false
			d.ready = slices.Delete(d.ready, i, i+1)
			continue
		}
		if o.inFlight >= d.opts.PerAccount {
			i++
			continue
		}
		k := slices.IndexFunc(o.queue[:min(len(o.queue), lookahead)], func(j job) bool { return d.hosts[j.host] < d.opts.PerHost })
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
		o.inFlight++
		d.hosts[j.host]++
		return o, j, true
	}
	return nil, job{}, false
}

// finish releases the job's slots and, unless its outbox has been closed
// meanwhile, records the attempt and schedules the retry.
func (d *Dispatcher) finish(o *Outbox, j job, r result) {
	now := sandbox.At(o.clock.Now())
	d.mu.Lock()
	defer d.mu.Unlock()
	o.inFlight--
	if d.hosts[j.host]--; d.hosts[j.host] == 0 {
		delete(d.hosts, j.host)
	}
	// The freed account and host slots let at most two more jobs run: this
	// worker takes one when it comes back for work, a woken one the other.
	d.wake.Signal()
	if o.closed {
		return
	}
	if r.failure == "" || !r.retry || j.attempt >= d.opts.MaxAttempts {
		o.record(j, now, r.status, r.failure, nil)
	} else {
		wait := backoff(d.opts.FirstRetry, j.attempt)
		o.record(j, now, r.status, r.failure, &wait)
		o.retryAfter(wait, j)
	}
	if r.failure != "" {
		d.opts.Logger.Debug("webhook delivery failed", "account", o.accountID, "event", j.event.ID,
			"webhook", j.hook.ID, "attempt", j.attempt, "error", r.failure)
	}
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

// enqueue adds j to o's queue and o to the turn; the caller holds d.mu.
func (d *Dispatcher) enqueue(o *Outbox, j job) {
	o.queue = append(o.queue, j)
	if !o.ready {
		o.ready = true
		d.ready = append(d.ready, o)
	}
	d.wake.Signal()
}
