package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/conformance/rules"
	"github.com/testcampaign/kit/conformance/wire"
)

// Receiver is conform's own webhook endpoint. Each scenario gets a path of
// its own, so deliveries are never mixed up between scenarios.
type Receiver struct {
	base string // as the deployment reaches it, without a trailing slash
	mu   sync.Mutex
	ends map[string]*hookEndpoint
}

// hookEndpoint is one scenario's path on the receiver.
type hookEndpoint struct {
	mu         sync.Mutex
	deliveries []delivery
	failNext   int // answer this many deliveries with failStatus
	failStatus int
	arrived    chan struct{} // closed and replaced on each delivery
	// schema and sink, with --openapi, check each delivery against the
	// document's webhooks.
	schema rules.Schema
	sink   *rules.RuleSink
}

// delivery is one request the deployment made to the receiver.
type delivery struct {
	header   http.Header
	body     []byte
	answered int
}

// receiverTimeout bounds how long one delivery may take to arrive.
const receiverTimeout = 10 * time.Second

// StartReceiver listens on addr, which must be a loopback address unless
// publicURL says how the deployment reaches it; it stops when ctx ends.
func StartReceiver(ctx context.Context, addr, publicURL string) (*Receiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r := &Receiver{base: strings.TrimRight(publicURL, "/"), ends: map[string]*hookEndpoint{}}
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
		found := end.schema.CheckWebhook(eventType(delivery{body: body}), req, body)
		if v, ok := rules.FromSchema(found, "webhook delivery "+req.Header.Get("Webhook-Id")); ok {
			end.sink.Add(v)
		}
	}
	status := end.record(req.Header.Clone(), body)
	w.WriteHeader(status)
}

func (e *hookEndpoint) record(h http.Header, body []byte) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	status := http.StatusNoContent
	if e.failNext > 0 {
		e.failNext--
		status = e.failStatus
	}
	e.deliveries = append(e.deliveries, delivery{header: h, body: body, answered: status})
	close(e.arrived)
	e.arrived = make(chan struct{})
	return status
}

// awaitTick is how often a wait asks whether to go on.
const awaitTick = time.Second

// await returns the first delivery at or after index from that satisfies
// ok, waiting up to d for it. Every awaitTick it calls tick, whose error
// ends the wait.
func (e *hookEndpoint) await(ctx context.Context, from int, d time.Duration, ok func(int, delivery) bool, tick func() error) (delivery, int, error) {
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
				return delivery{}, 0, err
			}
		case <-deadline.C:
			return delivery{}, 0, errors.New("timed out")
		case <-ctx.Done():
			return delivery{}, 0, ctx.Err()
		}
	}
}

func (e *hookEndpoint) all() []delivery {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]delivery(nil), e.deliveries...)
}

// endpoint returns the scenario's endpoint on the receiver, opening it on
// first use.
func (s *ScenarioState) endpoint() (*hookEndpoint, string, error) {
	if s.hooks == nil {
		return nil, "", fmt.Errorf("%w: no webhook receiver runs; tag the scenario @delivery", wire.ErrUsage)
	}
	if s.hook == nil {
		s.hookToken = wire.RandomToken()
		s.hook = &hookEndpoint{arrived: make(chan struct{}), schema: s.t.Schema, sink: s.Sink}
		s.hooks.mu.Lock()
		s.hooks.ends[s.hookToken] = s.hook
		s.hooks.mu.Unlock()
	}
	return s.hook, s.hooks.base + "/hooks/" + s.hookToken, nil
}

// hookURL is the {webhookURL} placeholder: the scenario's receiver address,
// or, when no receiver runs, a loopback URL that no one answers (port 9 is
// discard), so that a registration never points at someone else's server.
func (s *ScenarioState) hookURL() string {
	_, u, err := s.endpoint()
	if err != nil {
		return "http://127.0.0.1:9/conform-no-receiver"
	}
	return u
}

// CloseHooks forgets the scenario's endpoint: late deliveries get a 404,
// which the deployment may retry but nobody records.
func (s *ScenarioState) CloseHooks() {
	if s.hooks == nil || s.hook == nil {
		return
	}
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	delete(s.hooks.ends, s.hookToken)
}
