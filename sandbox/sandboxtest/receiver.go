package sandboxtest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/testcampaign/kit/openapi/client"
)

// Errors VerifyDelivery returns.
var (
	ErrBadSignature   = errors.New("webhook signature does not verify")
	ErrStaleTimestamp = errors.New("webhook timestamp outside the tolerance")
)

// DefaultTolerance is how far Webhook-Timestamp may be from now for
// VerifyDelivery: the five minutes receivers commonly accept.
const DefaultTolerance = 5 * time.Minute

// SandboxNow reads X-Sandbox-Now, the account's clock as the sandbox made
// the attempt: the now a receiver under test checks Webhook-Timestamp
// against, so that a frozen clock's deliveries are not stale.
func SandboxNow(h http.Header) (time.Time, error) {
	unix, err := strconv.ParseInt(h.Get("X-Sandbox-Now"), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("X-Sandbox-Now %q: %w", h.Get("X-Sandbox-Now"), err)
	}
	return time.Unix(unix, 0), nil
}

// VerifyDelivery checks a delivery as a receiver must: Webhook-Signature is
// the HMAC-SHA256 of "<Webhook-Timestamp>.<body>" keyed with the webhook's
// secret, and Webhook-Timestamp is within tolerance of now. It returns
// ErrBadSignature or ErrStaleTimestamp, wrapped.
func VerifyDelivery(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	timestamp := h.Get("Webhook-Timestamp")
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "."))
	mac.Write(body)
	want := "v1=" + hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(h.Get("Webhook-Signature")), []byte(want)) {
		return fmt.Errorf("delivery %s: %w", h.Get("Webhook-Id"), ErrBadSignature)
	}
	unix, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("delivery %s: Webhook-Timestamp %q: %w", h.Get("Webhook-Id"), timestamp, ErrStaleTimestamp)
	}
	if age := now.Sub(time.Unix(unix, 0)); age > tolerance || age < -tolerance {
		return fmt.Errorf("delivery %s stamped %s from now: %w", h.Get("Webhook-Id"), age, ErrStaleTimestamp)
	}
	return nil
}

// Delivery is one delivery a Receiver got, and what it made of it.
type Delivery struct {
	Header http.Header
	Body   []byte
	// Err is nil for a delivery that verified, else why it did not.
	Err error
	// Status is what the receiver answered.
	Status int
}

// Receiver is a webhook receiver for tests: it verifies every delivery
// against the webhook's secret and the account's clock (X-Sandbox-Now),
// records it, and answers 204 when it verified and 400 when it did not.
// Its server is on loopback, where a test sandbox delivers.
type Receiver struct {
	// URL is what to register with POST /v1/webhooks.
	URL    string
	server *httptest.Server

	mu        sync.Mutex
	secret    string
	tolerance time.Duration
	got       []Delivery
	// arrived is closed, and replaced, when a delivery is recorded.
	arrived chan struct{}
}

// NewReceiver starts a receiver that the test's end closes. Until SetSecret,
// every delivery fails to verify.
func NewReceiver(tb testing.TB) *Receiver {
	tb.Helper()
	r := StartReceiver()
	tb.Cleanup(r.Close)
	return r
}

// StartReceiver starts a receiver that runs until Close, for where there is
// no testing.TB to close it, as in TestMain or an example. Until SetSecret,
// every delivery fails to verify.
func StartReceiver() *Receiver {
	r := &Receiver{tolerance: DefaultTolerance, arrived: make(chan struct{})}
	r.server = httptest.NewServer(r)
	r.URL = r.server.URL
	return r
}

// Close stops the receiver's server, once the deliveries it is answering
// are answered.
func (r *Receiver) Close() { r.server.Close() }

// SetSecret sets the secret that POST /v1/webhooks answered.
func (r *Receiver) SetSecret(secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret = secret
}

// ServeHTTP takes one delivery.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err == nil {
		var now time.Time
		if now, err = SandboxNow(req.Header); err == nil {
			r.mu.Lock()
			secret, tolerance := r.secret, r.tolerance
			r.mu.Unlock()
			err = VerifyDelivery(secret, req.Header, body, now, tolerance)
		}
	}
	status := http.StatusNoContent
	if err != nil {
		status = http.StatusBadRequest
	}
	w.WriteHeader(status)
	// The answer is on the wire before the test hears of the delivery, so
	// that a read of GET /_sandbox/deliveries then finds its attempt.
	_ = http.NewResponseController(w).Flush()
	r.mu.Lock()
	r.got = append(r.got, Delivery{Header: req.Header.Clone(), Body: body, Err: err, Status: status})
	close(r.arrived)
	r.arrived = make(chan struct{})
	r.mu.Unlock()
}

// Deliveries returns every delivery received so far, oldest first.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.got...)
}

// Await waits until the receiver has answered n deliveries, or ctx is done,
// and returns those it has.
func (r *Receiver) Await(ctx context.Context, n int) ([]Delivery, error) {
	for {
		r.mu.Lock()
		got, arrived := append([]Delivery(nil), r.got...), r.arrived
		r.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return got, fmt.Errorf("%d of %d deliveries: %w", len(got), n, ctx.Err())
		}
	}
}

// Fault constructors: the faults docs/controls.md describes, ready for
// Controls.PlanFault, which more fields can refine.

// StatusFault answers status (400–599) in the API's place, in the error
// envelope.
func StatusFault(status int) client.FaultPlanCreate {
	return client.FaultPlanCreate{Status: &status}
}

// Stub answers status with body in the API's place: a success the API could
// send but does not (an unknown enum value, extra fields, an empty list), a
// redirect or a 304, for a client's decoder to meet. An empty body is sent
// as none, which 204, 205 and 304 must have; a redirect needs a Location
// header, set in the fault's Headers.
func Stub(status int, body string) client.FaultPlanCreate {
	fault := client.FaultPlanCreate{Status: &status}
	if body != "" {
		fault.Body = &body
	}
	return fault
}

// NetworkFault fails the network as kind says: reset, close, truncate,
// malformed or trickle.
func NetworkFault(kind client.NetworkFault) client.FaultPlanCreate {
	return client.FaultPlanCreate{Network: &kind}
}

// DelayFault holds the request back for d, counted in whole milliseconds
// up to sandbox.MaxFaultDelay, before the API carries it out. A client that
// gives up during the wait leaves the request not carried out, as the
// journal says: the timeout a retry policy must tell from a lost answer.
func DelayFault(d time.Duration) client.FaultPlanCreate {
	ms := int(d / time.Millisecond)
	return client.FaultPlanCreate{DelayMs: &ms}
}

// LostAnswer lets the API carry the request out and then drops the
// connection without an answer: the write whose answer never came.
func LostAnswer() client.FaultPlanCreate {
	fault := NetworkFault(client.NetworkFaultReset)
	phase := client.FaultPhaseAfter
	fault.Phase = &phase
	return fault
}

// RetryAfter makes a status fault's answer carry Retry-After: seconds (0
// to 3600), in place of the 1 second a 429 or 503 says without it.
func RetryAfter(fault client.FaultPlanCreate, seconds int) client.FaultPlanCreate {
	var retryAfter client.FaultPlanCreate_RetryAfter
	// An int always marshals: the generated setter cannot fail here.
	_ = retryAfter.FromFaultPlanCreateRetryAfter0(seconds)
	fault.RetryAfter = &retryAfter
	return fault
}

// On limits a fault to one method and path (a trailing * matches every path
// it starts).
func On(fault client.FaultPlanCreate, method client.FaultMethod, path string) client.FaultPlanCreate {
	fault.Method, fault.Path = &method, &path
	return fault
}
