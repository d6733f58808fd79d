package steps

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/receiver"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// Steps that register a webhook on conform's receiver and check what the
// deployment delivers to it.

// registerWebhook registers the scenario's receiver endpoint for the listed
// events, n times (once when n is empty), and saves webhookId and
// webhookSecret from the last answer. A deployment may refuse loopback and
// private destinations (the sandbox's -webhook-deny-private): that refusal
// skips the scenario with the reason instead of failing it.
func (s *scenarioState) registerWebhook(ctx context.Context, n, events string) error {
	times := 1
	if n != "" {
		var err error
		if times, err = strconv.Atoi(n); err != nil {
			return fmt.Errorf("%w: %q is not a count", kit.ErrUsage, n)
		}
	}
	hookURL := s.hookURL()
	var list []string
	for _, e := range strings.Split(events, ",") {
		list = append(list, strings.TrimSpace(e))
	}
	body, _ := json.Marshal(map[string]any{"url": hookURL, "events": list})
	for i := 0; i < times; i++ {
		e, err := s.send(ctx, http.MethodPost, "/v1/webhooks", body, "application/json")
		if err != nil {
			return err
		}
		if e.Status == http.StatusBadRequest && refusesURL(e) {
			s.skip = fmt.Sprintf("the deployment refuses the receiver's address %s as a webhook URL; pass --webhook-url with an address it accepts", hookURL)
			return godog.ErrSkip
		}
		if e.Status != http.StatusOK {
			return fmt.Errorf("registering a webhook for %s: want HTTP 200, got %d", events, e.Status)
		}
		v, err := e.JSON()
		if err != nil {
			return err
		}
		for field, name := range map[string]string{"data.id": "webhookId", "data.secret": "webhookSecret"} {
			x, err := wire.Lookup(v, field)
			if err != nil {
				return fmt.Errorf("registering a webhook: %w", err)
			}
			s.saved[name] = x
		}
	}
	return nil
}

// refusesURL tells whether a 400 names the url field and nothing else.
func refusesURL(e *wire.Exchange) bool {
	v, err := e.JSON()
	if err != nil {
		return false
	}
	details, _ := wire.Lookup(v, "error.details")
	list, ok := details.([]any)
	if !ok || len(list) == 0 {
		return false
	}
	for _, d := range list {
		if f, _ := wire.Lookup(d, "field"); f != "url" {
			return false
		}
	}
	return true
}

// onEndpoint tells the scenario's receiver endpoint what to do with the
// deliveries to come.
func (s *scenarioState) onEndpoint(act func(*receiver.Endpoint)) error {
	e, _, err := s.endpoint()
	if err != nil {
		return err
	}
	act(e)
	return nil
}

func (s *scenarioState) receiverFails(status, n int) error {
	return s.onEndpoint(func(e *receiver.Endpoint) { e.FailNext(n, status) })
}

// receiverDrops cuts the connections of the next n deliveries before any
// answer: a network error, which the deployment retries (DLV-9).
func (s *scenarioState) receiverDrops(n int) error {
	return s.receiverFails(receiver.Dropped, n)
}

// receiverHolds keeps the deliveries from now on in flight at the
// deployment: each reaches the receiver, which answers only once the
// scenario releases it (or ends).
func (s *scenarioState) receiverHolds() error { return s.onEndpoint((*receiver.Endpoint).Hold) }

func (s *scenarioState) receiverReleases() error { return s.onEndpoint((*receiver.Endpoint).Release) }

func eventType(d receiver.Delivery) string { return receiver.EventType(d.Body) }

// readDelivered makes a delivery the response the next steps read, so that
// the JSON and header steps check it.
func readDelivered(s *scenarioState, d receiver.Delivery) {
	s.delivered = &wire.Exchange{URL: "(webhook receiver)", Status: d.Answered, Header: d.Header, Body: d.Body}
	s.read = s.delivered
}

func (s *scenarioState) awaitEvent(ctx context.Context, secs int, typ string) error {
	e, _, err := s.endpoint()
	if err != nil {
		return err
	}
	_, hookURL, _ := s.endpoint()
	tick := func() error {
		return s.deliveryLogSays(ctx, hookURL, "", func(a attemptRecord) string {
			if a.final && a.statusCode == 0 {
				return fmt.Sprintf("the deployment's delivery log says it cannot post to the receiver at %s (%q) and will not try again (started with -webhook-deny-private, or behind a firewall?); pass --webhook-url with an address it may post to", s.hooks.Base(), a.err)
			}
			return ""
		})
	}
	d, i, err := e.Await(ctx, 0, time.Duration(secs)*time.Second, func(i int, d receiver.Delivery) bool { return !s.usedDeliveries[i] && eventType(d) == typ }, tick)
	if errors.Is(err, godog.ErrSkip) {
		return err
	}
	if err != nil {
		return fmt.Errorf("webhook rule: no %q event reached the receiver within %d seconds (%d other deliveries): %w", typ, secs, len(e.All()), err)
	}
	s.usedDeliveries[i] = true
	readDelivered(s, d)
	return nil
}

// awaitRetry waits for the next attempt at the last delivered event and
// checks that it carries the same Webhook-Id and body.
func (s *scenarioState) awaitRetry(ctx context.Context, secs int) error {
	// The delivery waited for last, even with requests sent since (a QA
	// engineer moves the clock between the two waits).
	last := s.delivered
	if last == nil {
		return fmt.Errorf("%w: no delivery to wait for a retry of; wait for an event first", kit.ErrUsage)
	}
	e, _, err := s.endpoint()
	if err != nil {
		return err
	}
	id := last.Header.Get("Webhook-Id")
	all := e.All()
	from := 0
	for i, d := range all {
		if s.usedDeliveries[i] && d.Header.Get("Webhook-Id") == id {
			from = i + 1
		}
	}
	typ := receiver.EventType(last.Body)
	_, hookURL, _ := s.endpoint()
	eventID := ""
	if v, err := last.JSON(); err == nil {
		x, _ := wire.Lookup(v, "id")
		eventID, _ = x.(string)
	}
	tick := func() error {
		return s.deliveryLogSays(ctx, hookURL, "the deployment's delivery log no longer holds the attempt the receiver answered: the account was replaced while waiting (a sandbox holding few accounts evicts the least recently used)", func(a attemptRecord) string {
			switch {
			case a.eventID != eventID || a.statusCode != last.Status:
			case a.final:
				return fmt.Sprintf("the deployment's delivery log says it makes no further attempt after the receiver's %d (started with -webhook-attempts 1?)", last.Status)
			case a.wait > time.Duration(secs)*time.Second:
				return fmt.Sprintf("the deployment's delivery log says it retries after %s, longer than the %d seconds the scenario waits (started with a long -webhook-first-retry?)", a.wait, secs)
			}
			return ""
		})
	}
	d, i, err := e.Await(ctx, from, time.Duration(secs)*time.Second, func(i int, d receiver.Delivery) bool { return !s.usedDeliveries[i] && eventType(d) == typ }, tick)
	if errors.Is(err, godog.ErrSkip) {
		return err
	}
	if err != nil {
		return fmt.Errorf("webhook rule: the event answered with %d was not delivered again within %d seconds: %w", last.Status, secs, err)
	}
	if got := d.Header.Get("Webhook-Id"); got != id {
		return fmt.Errorf("webhook rule: a retry must keep its Webhook-Id: first %q, then %q", id, got)
	}
	if string(d.Body) != string(last.Body) {
		return fmt.Errorf("webhook rule: a retry must carry the same body: first %s, then %s", wire.Truncate(string(last.Body), 200), wire.Truncate(string(d.Body), 200))
	}
	s.usedDeliveries[i] = true
	readDelivered(s, d)
	return nil
}

func (s *scenarioState) noEvent(ctx context.Context, typ string) error {
	e, _, err := s.endpoint()
	if err != nil {
		return err
	}
	for _, d := range e.All() {
		if eventType(d) == typ {
			return fmt.Errorf("webhook rule: the receiver got a %q event (Webhook-Id %s); want none", typ, d.Header.Get("Webhook-Id"))
		}
	}
	return nil
}

// deliveriesOf counts the deliveries of one event type the scenario's
// endpoint received, retries included.
func deliveriesOf(e *receiver.Endpoint, typ string) int {
	n := 0
	for _, d := range e.All() {
		if eventType(d) == typ {
			n++
		}
	}
	return n
}

// exactDeliveries holds when the receiver got exactly n deliveries of the
// event type so far, each attempt counted (a retry is a receiver.Delivery).
func (s *scenarioState) exactDeliveries(ctx context.Context, n int, typ string) error {
	e, _, err := s.endpoint()
	if err != nil {
		return err
	}
	if got := deliveriesOf(e, typ); got != n {
		return fmt.Errorf("webhook rule: the receiver got %d %q deliveries; want exactly %d", got, typ, n)
	}
	return nil
}

// noFurtherDelivery watches the receiver for secs seconds and fails at the
// first delivery of the type beyond those already received.
func (s *scenarioState) noFurtherDelivery(ctx context.Context, typ string, secs int) error {
	e, _, err := s.endpoint()
	if err != nil {
		return err
	}
	from := len(e.All())
	d, _, err := e.Await(ctx, from, time.Duration(secs)*time.Second, func(_ int, d receiver.Delivery) bool { return eventType(d) == typ }, func() error { return nil })
	switch {
	case err == nil:
		return fmt.Errorf("webhook rule: a further %q delivery arrived within %d seconds (Webhook-Id %s); want none", typ, secs, d.Header.Get("Webhook-Id"))
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return nil
}

// signatureSlack is how far Webhook-Timestamp may be from the event's own
// createdAt: retries come later, clocks differ a little.
const signatureSlack = 5 * time.Minute

// deliverySigned checks the three headers of the last delivery: a
// Webhook-Id, a Webhook-Timestamp in Unix seconds near the server's clock
// (the event's createdAt), and a Webhook-Signature that is v1=<hex
// HMAC-SHA256 of "<timestamp>.<body>"> keyed with the registered secret.
func (s *scenarioState) deliverySigned(ctx context.Context) error {
	return s.signedAround(0, signatureSlack)
}

// staleSlack is how far a stale Webhook-Timestamp may stray from the age
// asked for: the time between the event and its delivery on a running
// clock.
const staleSlack = 30 * time.Second

// deliverySignedStale checks a delivery a staleTimestamp fault sent: a
// Webhook-Timestamp the given age before the event, and a signature made
// over it, so that only the receiver's freshness check can refuse it.
func (s *scenarioState) deliverySignedStale(ctx context.Context, age int) error {
	return s.signedAround(time.Duration(age)*time.Second, staleSlack)
}

// signedAround checks that the last delivery's Webhook-Timestamp is age
// before its event's createdAt, give or take slack, and that its signature
// verifies with the webhook's secret.
func (s *scenarioState) signedAround(age, slack time.Duration) error {
	d, sec, err := s.lastDelivery()
	if err != nil {
		return err
	}
	at, err := eventCreated(d)
	if err != nil {
		return err
	}
	want := at.Add(-age)
	if got := time.Unix(sec, 0); got.Before(want.Add(-slack)) || got.After(want.Add(slack)) {
		return fmt.Errorf("webhook rule: Webhook-Timestamp %d (%s) is not within %s of %s, %s before the event's createdAt %s",
			sec, got.UTC().Format(time.RFC3339), slack, want.UTC().Format(time.RFC3339), age, at.UTC().Format(time.RFC3339Nano))
	}
	return s.signatureVerifies(d)
}

// deliveryMissigned checks a delivery a badSignature fault sent: a
// signature of the usual form that the webhook's secret does not verify.
func (s *scenarioState) deliveryMissigned(ctx context.Context) error {
	d, _, err := s.lastDelivery()
	if err != nil {
		return err
	}
	got := d.Header.Get("Webhook-Signature")
	if !signatureForm.MatchString(got) {
		return fmt.Errorf("webhook rule: Webhook-Signature %q is not of the form v1=<64 hex digits>", shownSignature(got))
	}
	if s.signatureVerifies(d) == nil {
		return fmt.Errorf("webhook rule: Webhook-Signature %q verifies with the registered secret; want one that does not", shownSignature(got))
	}
	return nil
}

// shownSignature shows a Webhook-Signature as its scheme, its length and
// its last four characters: enough to tell which one a report judged,
// never a value a receiver would accept.
func shownSignature(sig string) string {
	scheme, mac, ok := strings.Cut(sig, "=")
	if ok {
		scheme += "="
	} else {
		scheme, mac = "", sig
	}
	if len(mac) < 16 {
		return fmt.Sprintf("%s… (%d characters)", scheme, len(mac))
	}
	return fmt.Sprintf("%s…%s (%d characters)", scheme, mac[len(mac)-4:], len(mac))
}

var signatureForm = regexp.MustCompile(`^v1=[0-9a-f]{64}$`)

// lastDelivery is the delivery waited for last, with its Webhook-Id
// checked and its Webhook-Timestamp read.
func (s *scenarioState) lastDelivery() (*wire.Exchange, int64, error) {
	d, err := s.response()
	if err != nil || !s.readsDelivery() {
		return nil, 0, fmt.Errorf("%w: no delivery to check; wait for an event first", kit.ErrUsage)
	}
	if d.Header.Get("Webhook-Id") == "" {
		return nil, 0, fmt.Errorf("webhook rule: the delivery has no Webhook-Id header")
	}
	ts := d.Header.Get("Webhook-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || !wire.IsIntegerLiteral(ts) {
		return nil, 0, fmt.Errorf("webhook rule: Webhook-Timestamp must be Unix seconds, got %q", ts)
	}
	return d, sec, nil
}

func eventCreated(d *wire.Exchange) (time.Time, error) {
	v, err := d.JSON()
	if err != nil {
		return time.Time{}, fmt.Errorf("webhook rule: the delivery body: %w", err)
	}
	created, err := wire.Lookup(v, "createdAt")
	if err != nil {
		return time.Time{}, fmt.Errorf("webhook rule: the delivery body: %w", err)
	}
	cs, _ := created.(string)
	at, err := wire.ParseTimestamp(cs)
	if err != nil {
		return time.Time{}, fmt.Errorf("webhook rule: the event's createdAt %s is not a timestamp", wire.Describe(created))
	}
	return at, nil
}

// signatureVerifies checks Webhook-Signature against the HMAC-SHA256 of
// "<timestamp>.<body>" keyed with the registered webhook's secret.
func (s *scenarioState) signatureVerifies(d *wire.Exchange) error {
	secret, ok := s.saved["webhookSecret"].(string)
	if !ok {
		return fmt.Errorf("%w: no webhook secret saved; register the webhook with \"I register a webhook for …\"", kit.ErrUsage)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%s.", d.Header.Get("Webhook-Timestamp"))
	mac.Write(d.Body)
	want := "v1=" + hex.EncodeToString(mac.Sum(nil))
	if got := d.Header.Get("Webhook-Signature"); !hmac.Equal([]byte(got), []byte(want)) {
		return fmt.Errorf("webhook rule: Webhook-Signature %q is not v1=<hex HMAC-SHA256 of \"<timestamp>.<body>\" keyed with the registered secret>", shownSignature(got))
	}
	return nil
}

// attemptRecord is one line of the sandbox's delivery log.
type attemptRecord struct {
	url, eventID, err string
	statusCode        int
	final             bool          // no further attempt is planned
	wait              time.Duration // until the next attempt, on the deployment's clock
}

// deliveryLogSays reads the account's delivery log (GET /_sandbox/deliveries)
// and skips the scenario with the reason why if an attempt at hookURL
// explains the wait (explain returns the reason), or, when missing is set,
// if no attempt at hookURL is logged at all. A deployment configured not to
// deliver or not to retry is thus not reported as broken. Outside the
// sandbox profile, or when the log cannot be read, it says nothing and the
// wait goes on.
func (s *scenarioState) deliveryLogSays(ctx context.Context, hookURL, missing string, explain func(attemptRecord) string) error {
	if s.t.Profile != kit.ProfileSandbox {
		return nil
	}
	ex, err := s.t.Send(ctx, transport.Request{Method: http.MethodGet, Path: "/_sandbox/deliveries?limit=100", Key: s.key, Sink: s.sink})
	if err != nil || ex.Status != http.StatusOK {
		return nil
	}
	b := ex.Body
	v, err := wire.DecodeJSON(b)
	if err != nil {
		return nil
	}
	items, _ := wire.Lookup(v, "data.items")
	list, _ := items.([]any)
	seen := false
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		a := attemptRecord{final: m["nextAttemptAt"] == nil}
		a.url, _ = m["url"].(string)
		a.eventID, _ = m["eventId"].(string)
		a.err, _ = m["error"].(string)
		at, _ := m["at"].(string)
		next, _ := m["nextAttemptAt"].(string)
		if t0, err := wire.ParseTimestamp(at); err == nil {
			if t1, err := wire.ParseTimestamp(next); err == nil {
				a.wait = t1.Sub(t0)
			}
		}
		if n, ok := m["statusCode"].(json.Number); ok {
			c, _ := n.Int64()
			a.statusCode = int(c)
		}
		if a.url != hookURL {
			continue
		}
		seen = true
		if reason := explain(a); reason != "" {
			s.skip = reason
			return godog.ErrSkip
		}
	}
	if missing != "" && !seen {
		s.skip = missing
		return godog.ErrSkip
	}
	return nil
}
