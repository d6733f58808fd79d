// Package receiver is conform's own webhook endpoint: the address a
// deployment delivers to while @delivery scenarios wait, one path per
// scenario, each delivery checked against the OpenAPI document when one
// is given.
package receiver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// Receiver is conform's own webhook endpoint. Each scenario gets a path of
// its own, so deliveries are never mixed up between scenarios.
type Receiver struct {
	base string // as the deployment reaches it, without a trailing slash
	mu   sync.Mutex
	ends map[string]*Endpoint
}

// Endpoint is one scenario's path on the receiver.
type Endpoint struct {
	token      string
	mu         sync.Mutex
	deliveries []Delivery
	failNext   int // answer this many deliveries with failStatus
	failStatus int
	arrived    chan struct{} // closed and replaced on each delivery
	// held, while the endpoint holds its answers, is closed when they may
	// go: a delivery then stays in flight at the deployment for as long as
	// the scenario wants, without a timed wait on either side.
	held chan struct{}
	// schema and sink, with --openapi, check each delivery against the
	// document's webhooks.
	schema kit.Schema
	sink   *rules.Sink
}

// Delivery is one request the deployment made to the receiver, and the
// status the receiver answered.
type Delivery struct {
	Header   http.Header
	Body     []byte
	Answered int
}

// receiverTimeout bounds how long one delivery may take to arrive.
const receiverTimeout = 10 * time.Second

// Start listens on addr, which must be a loopback address unless
// publicURL says how the deployment reaches it; it stops when ctx ends.
func Start(ctx context.Context, addr, publicURL string) (*Receiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r := &Receiver{base: strings.TrimRight(publicURL, "/"), ends: map[string]*Endpoint{}}
	if r.base == "" {
		r.base = "http://" + ln.Addr().String()
	}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: receiverTimeout}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return r, nil
}

// Base is the receiver's address as the deployment reaches it.
func (r *Receiver) Base() string { return r.base }

// Open gives a scenario an endpoint of its own, whose deliveries are checked
// against schema (when set) with breaks going to sink; the URL is where the
// deployment delivers to it.
func (r *Receiver) Open(schema kit.Schema, sink *rules.Sink) (*Endpoint, string) {
	token := wire.RandomToken()
	e := &Endpoint{token: token, arrived: make(chan struct{}), schema: schema, sink: sink}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends[token] = e
	return e, r.base + "/hooks/" + token
}

// Close forgets e: late deliveries get a 404, which the deployment may
// retry but nobody records. Answers still held go.
func (r *Receiver) Close(e *Endpoint) {
	r.mu.Lock()
	delete(r.ends, e.token)
	r.mu.Unlock()
	e.Release()
}

// ServeHTTP takes a delivery to the endpoint its path names.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	token := strings.TrimPrefix(req.URL.Path, "/hooks/")
	r.mu.Lock()
	end := r.ends[token]
	r.mu.Unlock()
	if end == nil || req.Method != http.MethodPost {
		http.NotFound(w, req)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, wire.MaxBody))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	if end.schema != nil {
		found := end.schema.CheckWebhook(EventType(body), req, body)
		if v, ok := rules.FromSchema(found, "webhook delivery "+req.Header.Get("Webhook-Id")); ok {
			end.sink.Add(v)
		}
	}
	status, held := end.record(req.Header.Clone(), body)
	select {
	case <-held:
	case <-req.Context().Done():
	}
	switch {
	case status == Dropped:
		cutWithoutAnswer(w)
		return
	case status >= 300 && status < 400:
		// Somewhere to go, so that a deployment that follows redirects
		// (DLV-10) makes a request the attempt's record then shows: a GET
		// this endpoint answers 404.
		w.Header().Set("Location", req.URL.Path)
	}
	w.WriteHeader(status)
}

// Dropped is the status FailNext takes for a connection cut without an
// answer, a network error to the deployment.
const Dropped = 0

// cutWithoutAnswer closes the delivery's connection before any answer.
func cutWithoutAnswer(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// Hold keeps the answers to deliveries from now on until Release.
func (e *Endpoint) Hold() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.held == nil {
		e.held = make(chan struct{})
	}
}

// Release lets every held answer go, and answers at once from then on.
func (e *Endpoint) Release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.held != nil {
		close(e.held)
		e.held = nil
	}
}

// FailNext answers the next n deliveries with status instead of 204, or
// cuts their connections without an answer when status is Dropped.
func (e *Endpoint) FailNext(n, status int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failNext, e.failStatus = n, status
}

// record keeps a delivery and says what to answer, and when: once the
// channel it returns is closed.
func (e *Endpoint) record(h http.Header, body []byte) (int, <-chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	status := http.StatusNoContent
	if e.failNext > 0 {
		e.failNext--
		status = e.failStatus
	}
	e.deliveries = append(e.deliveries, Delivery{Header: h, Body: body, Answered: status})
	close(e.arrived)
	e.arrived = make(chan struct{})
	if e.held != nil {
		return status, e.held
	}
	return status, answerNow
}

// answerNow is the release of an answer that is not held.
var answerNow = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// awaitTick is how often a wait asks whether to go on.
const awaitTick = time.Second

// Await returns the first delivery at or after index from that satisfies
// ok, waiting up to d for it. Every awaitTick it calls tick, whose error
// ends the wait.
func (e *Endpoint) Await(ctx context.Context, from int, d time.Duration, ok func(int, Delivery) bool, tick func() error) (Delivery, int, error) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	ticker := time.NewTicker(awaitTick)
	defer ticker.Stop()
	for {
		e.mu.Lock()
		for i := from; i < len(e.deliveries); i++ {
			if ok(i, e.deliveries[i]) {
				dv := e.deliveries[i]
				e.mu.Unlock()
				return dv, i, nil
			}
		}
		from = max(from, len(e.deliveries))
		ch := e.arrived
		e.mu.Unlock()
		select {
		case <-ch:
		case <-ticker.C:
			if err := tick(); err != nil {
				return Delivery{}, 0, err
			}
		case <-deadline.C:
			return Delivery{}, 0, errors.New("timed out")
		case <-ctx.Done():
			return Delivery{}, 0, ctx.Err()
		}
	}
}

// All is every delivery so far, oldest first.
func (e *Endpoint) All() []Delivery {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Delivery(nil), e.deliveries...)
}

// EventType is the type a delivery's body names, "" when it names none.
func EventType(body []byte) string {
	v, err := wire.DecodeJSON(body)
	if err != nil {
		return ""
	}
	t, _ := wire.Lookup(v, "type")
	s, _ := t.(string)
	return s
}
