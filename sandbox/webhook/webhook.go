// Package webhook delivers the sandbox's events to registered webhooks: a
// signed POST per event and webhook, retried with exponential back-off, every
// attempt recorded so tests can inspect it.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/testcampaign/kit/sandbox"
)

// Store is what delivery needs of the sandbox's store.
type Store interface {
	Webhooks(accountID string) ([]sandbox.Webhook, error)
	RecordDelivery(accountID string, d sandbox.Delivery) error
}

// Options configure a Dispatcher; zero values take the defaults.
type Options struct {
	Store  Store
	Clock  sandbox.Clock
	Logger *slog.Logger
	Client *http.Client
	// MaxAttempts bounds the tries per event and webhook (default 5).
	MaxAttempts int
	// FirstRetry is the wait before the second try; each later wait doubles
	// (default 1s: tries at 0, 1, 3, 7 and 15 seconds).
	FirstRetry time.Duration
	// Workers is how many deliveries run at once (default 4).
	Workers int
	// QueueSize is how many deliveries may wait; beyond it new ones are
	// dropped and recorded as failed rather than slowing the API (default 1024).
	QueueSize int
}

// Dispatcher delivers events in the background. Notify never blocks, so a
// slow or dead receiver never slows an API request.
type Dispatcher struct {
	opts    Options
	queue   chan job
	ctx     context.Context
	cancel  context.CancelFunc
	workers sync.WaitGroup
	retries sync.WaitGroup

	// mu guards closed, so that nothing is sent on the queue, and no retry
	// is scheduled, once Close has begun.
	mu     sync.Mutex
	closed bool
}

type job struct {
	accountID string
	webhook   sandbox.Webhook
	event     sandbox.Event
	attempt   int
}

// Payload is the body POSTed to a webhook.
type Payload struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"createdAt"`
	Data      json.RawMessage `json:"data"`
}

// Signature is the Webhook-Signature value for a body sent at timestamp: the
// hex HMAC-SHA256 of "<timestamp>.<body>", keyed with the whole secret.
func Signature(secret string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", timestamp)
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Start returns a running dispatcher; Close stops it.
func Start(opts Options) *Dispatcher {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 5
	}
	if opts.FirstRetry <= 0 {
		opts.FirstRetry = time.Second
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1024
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 10 * time.Second}
	}
	d := &Dispatcher{opts: opts, queue: make(chan job, opts.QueueSize)}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	for range opts.Workers {
		d.workers.Add(1)
		go d.work()
	}
	return d
}

// Close stops delivering: attempts in flight are cancelled, pending retries
// dropped.
func (d *Dispatcher) Close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	d.retries.Wait()
	close(d.queue)
	d.workers.Wait()
}

// Notify queues the event for every webhook of its account that wants it.
func (d *Dispatcher) Notify(e sandbox.Event) {
	hooks, err := d.opts.Store.Webhooks(e.AccountID)
	if err != nil {
		d.opts.Logger.Error("webhook lookup failed", "event", e.ID, "error", err)
		return
	}
	for _, hook := range hooks {
		if hook.Wants(e.Type) {
			d.enqueue(job{accountID: e.AccountID, webhook: hook, event: e, attempt: 1})
		}
	}
}

func (d *Dispatcher) enqueue(j job) {
	if !d.offer(j) {
		// Recorded outside the lock, so a store write never holds up the
		// other writers that are notifying.
		d.record(j, 0, "dropped: the delivery queue is full", nil)
	}
}

// offer queues j unless the queue is full; after Close it drops j silently.
func (d *Dispatcher) offer(j job) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return true
	}
	select {
	case d.queue <- j:
		return true
	default:
		return false
	}
}

func (d *Dispatcher) work() {
	defer d.workers.Done()
	for j := range d.queue {
		d.deliver(j)
	}
}

func (d *Dispatcher) deliver(j job) {
	body, err := json.Marshal(Payload{ID: j.event.ID, Type: j.event.Type, CreatedAt: j.event.CreatedAt, Data: j.event.Data})
	if err != nil {
		d.record(j, 0, fmt.Sprintf("encode payload: %v", err), nil)
		return
	}
	status, failure := d.post(j, body)
	if failure == "" || j.attempt >= d.opts.MaxAttempts {
		d.record(j, status, failure, nil)
		return
	}
	wait := d.opts.FirstRetry << (j.attempt - 1)
	next := sandbox.Timestamp(d.opts.Clock.Now().Add(wait))
	d.record(j, status, failure, &next)
	retry := j
	retry.attempt++
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.retries.Add(1)
	go func() {
		defer d.retries.Done()
		select {
		case <-time.After(wait):
			d.enqueue(retry)
		case <-d.ctx.Done():
		}
	}()
}

// post sends one attempt and returns the receiver's status and, if the
// attempt failed, why.
func (d *Dispatcher) post(j job, body []byte) (int, string) {
	timestamp := d.opts.Clock.Now().Unix()
	req, err := http.NewRequestWithContext(d.ctx, http.MethodPost, j.webhook.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "svc-sandbox-webhooks/1")
	req.Header.Set("Webhook-Id", j.event.ID)
	req.Header.Set("Webhook-Timestamp", strconv.FormatInt(timestamp, 10))
	req.Header.Set("Webhook-Signature", Signature(j.webhook.Secret, timestamp, body))
	res, err := d.opts.Client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	// Drain a little so the connection can be reused, but never read an
	// endless body.
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return res.StatusCode, fmt.Sprintf("receiver answered %d", res.StatusCode)
	}
	return res.StatusCode, ""
}

func (d *Dispatcher) record(j job, status int, failure string, next *time.Time) {
	err := d.opts.Store.RecordDelivery(j.accountID, sandbox.Delivery{
		WebhookID: j.webhook.ID, EventID: j.event.ID, EventType: j.event.Type, URL: j.webhook.URL,
		Attempt: j.attempt, At: sandbox.Timestamp(d.opts.Clock.Now()), StatusCode: status, Error: failure, NextAttemptAt: next,
	})
	if err != nil {
		d.opts.Logger.Error("record webhook delivery", "event", j.event.ID, "webhook", j.webhook.ID, "error", err)
	}
}
