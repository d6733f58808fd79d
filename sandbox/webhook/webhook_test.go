package webhook_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/webhook"
)

var frozen = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// start returns a running dispatcher that the test closes.
func start(t *testing.T, opts webhook.Options) *webhook.Dispatcher {
	t.Helper()
	d := webhook.Start(opts)
	t.Cleanup(d.Close)
	return d
}

func event(n int) sandbox.Event {
	id := fmt.Sprintf("evt_%06d", n)
	at := sandbox.At(frozen)
	body := fmt.Sprintf(`{"id":%q,"type":"campaign.created","createdAt":"%s","data":{"id":"cmp_%06d","rewardPerBug":3.10}}`, id, at, n)
	return sandbox.Event{ID: id, Type: sandbox.EventCampaignCreated, JSON: []byte(body)}
}

func hook(id, url string) sandbox.Webhook {
	return sandbox.Webhook{ID: id, URL: url, Events: []string{"*"}, Secret: "whsec_" + id, Status: sandbox.WebhookActive}
}

type post struct {
	header http.Header
	body   []byte
}

// receiver records every POST it gets and answers with status(n), n counting
// from 1.
type receiver struct {
	*httptest.Server
	mu    sync.Mutex
	posts []post
}

func newReceiver(t *testing.T, status func(n int) int) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.posts = append(r.posts, post{req.Header.Clone(), body})
		n := len(r.posts)
		r.mu.Unlock()
		w.WriteHeader(status(n))
	}))
	t.Cleanup(r.Close)
	return r
}

func always(status int) func(int) int { return func(int) int { return status } }

func (r *receiver) received() []post {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]post(nil), r.posts...)
}

// hangingReceiver answers nothing until the test ends or the request is
// cancelled, but at /ok, where it answers 200 at once; started tells of each
// request it holds.
func hangingReceiver(t *testing.T) (*httptest.Server, chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	started := make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/ok" {
			return
		}
		select {
		case started <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	// Registered after srv.Close, so it runs before it.
	t.Cleanup(func() { close(release) })
	return srv, started
}

// failsafe ends a test whose awaited record never comes; the tests never
// wait on time for anything to happen.
const failsafe = 10 * time.Second

func records(o *webhook.Outbox) []sandbox.Delivery {
	return o.Deliveries(sandbox.PageRequest{Limit: sandbox.MaxPageSize}).Items
}

// waitUntil waits until the outbox's records, newest first, satisfy done.
func waitUntil(t *testing.T, o *webhook.Outbox, what string, done func([]sandbox.Delivery) bool) []sandbox.Delivery {
	t.Helper()
	for {
		recorded := o.Recorded()
		if got := records(o); done(got) {
			return got
		}
		select {
		case <-recorded:
		case <-time.After(failsafe):
			t.Fatalf("no %s; records: %+v", what, records(o))
		}
	}
}

// waitRecords waits for n records and returns them, newest first.
func waitRecords(t *testing.T, o *webhook.Outbox, n int) []sandbox.Delivery {
	t.Helper()
	return waitUntil(t, o, fmt.Sprintf("%d records", n), func(got []sandbox.Delivery) bool { return len(got) >= n })
}

// waitStarted waits for n requests to reach a hanging receiver.
func waitStarted(t *testing.T, started <-chan struct{}, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-started:
		case <-time.After(failsafe):
			t.Fatalf("%d of %d attempts reached the hanging receiver", i, n)
		}
	}
}

func TestDeliversSignedEventsAndRetriesFailures(t *testing.T) {
	const firstRetry = time.Minute
	// A retry is due when the account's clock gets there or, at the
	// latest, when real time does.
	for _, moved := range []string{"account", "dispatcher"} {
		t.Run("moving the "+moved+" clock", func(t *testing.T) {
			rcv := newReceiver(t, func(n int) int {
				if n == 1 {
					return http.StatusServiceUnavailable
				}
				return http.StatusNoContent
			})
			wall, account := sandbox.NewFrozenClock(frozen), sandbox.NewFrozenClock(frozen)
			d := start(t, webhook.Options{FirstRetry: firstRetry, Clock: wall})
			o := d.NewOutbox("acct", account, nil)
			h, e := hook("whk_000001", rcv.URL), event(1)
			o.Send(e, []sandbox.Webhook{h}, nil)
			waitRecords(t, o, 1)
			if n := len(rcv.received()); n != 1 {
				t.Fatalf("receiver got %d posts before the retry was due, want 1", n)
			}
			retriedAt := frozen
			if moved == "account" {
				retriedAt = account.Advance(firstRetry)
			} else {
				wall.Advance(firstRetry)
			}
			waitRecords(t, o, 2)

			got := rcv.received()
			if len(got) != 2 {
				t.Fatalf("receiver got %d posts, want 2 (one failure, one retry)", len(got))
			}
			wantID := webhook.MessageID("acct", e.ID)
			for i, p := range got {
				sent := []time.Time{frozen, retriedAt}[i]
				header := map[string]string{}
				for _, name := range []string{"Content-Type", "Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"} {
					header[name] = p.header.Get(name)
				}
				wantHeader := map[string]string{
					"Content-Type":      "application/json",
					"Webhook-Id":        wantID,
					"Webhook-Timestamp": strconv.FormatInt(sent.Unix(), 10),
					"Webhook-Signature": webhook.Signature(h.Secret, sent.Unix(), e.JSON),
				}
				if diff := cmp.Diff(wantHeader, header); diff != "" {
					t.Errorf("post %d headers (-want +got):\n%s", i+1, diff)
				}
				if string(p.body) != string(e.JSON) {
					t.Errorf("post %d body %s, want the event's JSON %s", i+1, p.body, e.JSON)
				}
			}

			next := sandbox.At(frozen.Add(firstRetry))
			want := []sandbox.Delivery{
				{ID: "dlv_000002", WebhookID: h.ID, EventID: e.ID, EventType: e.Type, URL: rcv.URL, Attempt: 2,
					At: sandbox.At(retriedAt), StatusCode: 204, Seq: 2},
				{ID: "dlv_000001", WebhookID: h.ID, EventID: e.ID, EventType: e.Type, URL: rcv.URL, Attempt: 1,
					At: sandbox.At(frozen), StatusCode: 503, Error: "receiver answered 503", NextAttemptAt: &next, Seq: 1},
			}
			if diff := cmp.Diff(want, records(o)); diff != "" {
				t.Errorf("records, newest first (-want +got):\n%s", diff)
			}
			if account.Waiting() != 0 {
				t.Errorf("%d timers left on the account's clock after the retry", account.Waiting())
			}
			encoded, err := json.Marshal(records(o)[1])
			if err != nil {
				t.Fatal(err)
			}
			wantJSON := `{"id":"dlv_000001","webhookId":"whk_000001","eventId":"evt_000001","eventType":"campaign.created","url":"` + rcv.URL +
				`","attempt":1,"at":"2026-07-01T12:00:00.000Z","statusCode":503,"error":"receiver answered 503","nextAttemptAt":"2026-07-01T12:01:00.000Z","fault":null}`
			if string(encoded) != wantJSON {
				t.Errorf("record as JSON:\n got %s\nwant %s", encoded, wantJSON)
			}
		})
	}
}

func TestMessageID(t *testing.T) {
	tests := []struct {
		name       string
		a, b       [2]string
		wantEquals bool
	}{
		{"same account and event", [2]string{"acct1", "evt_000001"}, [2]string{"acct1", "evt_000001"}, true},
		{"same event id in another account", [2]string{"acct1", "evt_000001"}, [2]string{"acct2", "evt_000001"}, false},
		{"another event", [2]string{"acct1", "evt_000001"}, [2]string{"acct1", "evt_000002"}, false},
		{"boundary between the parts", [2]string{"acct1e", "vt_000001"}, [2]string{"acct1", "evt_000001"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := webhook.MessageID(tt.a[0], tt.a[1]), webhook.MessageID(tt.b[0], tt.b[1])
			if got := a == b; got != tt.wantEquals {
				t.Errorf("MessageID%v = %s, MessageID%v = %s; equal %v, want %v", tt.a, a, tt.b, b, got, tt.wantEquals)
			}
			if !strings.HasPrefix(a, "msg_") || len(a) != len("msg_")+32 {
				t.Errorf("MessageID%v = %q, want msg_ and 32 hex digits", tt.a, a)
			}
		})
	}
}

func TestKeysIdentity(t *testing.T) {
	const account = "a1b2c3"
	fleet := webhook.NewKeys("fleet-secret-0123456789")
	tests := []struct {
		name       string
		a, b       string
		wantEquals bool
	}{
		{"one secret agrees with itself, as replicas and reruns must", fleet.Identity(account, 0), webhook.NewKeys("fleet-secret-0123456789").Identity(account, 0), true},
		{"another secret", fleet.Identity(account, 0), webhook.NewKeys("other-secret-0123456789").Identity(account, 0), false},
		{"two sandboxes without a secret", webhook.NewKeys("").Identity(account, 0), webhook.NewKeys("").Identity(account, 0), false},
		{"after a reset", fleet.Identity(account, 0), fleet.Identity(account, 1), false},
		{"another account", fleet.Identity(account, 0), fleet.Identity("a1b2c4", 0), false},
	}
	for _, tt := range tests {
		if got := tt.a == tt.b; got != tt.wantEquals {
			t.Errorf("%s: %s and %s equal %v, want %v", tt.name, tt.a, tt.b, got, tt.wantEquals)
		}
	}
}

func TestGivesUpAfterMaxAttempts(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusInternalServerError))
	account := sandbox.NewFrozenClock(frozen)
	d := start(t, webhook.Options{FirstRetry: time.Second, MaxAttempts: 3})
	o := d.NewOutbox("acct", account, nil)
	o.Send(event(1), []sandbox.Webhook{hook("whk_000001", rcv.URL)}, nil)
	for n, wait := range []time.Duration{time.Second, 2 * time.Second} {
		waitRecords(t, o, n+1)
		account.Advance(wait)
	}
	waitRecords(t, o, 3)

	var attempts []int
	for _, r := range records(o) {
		attempts = append(attempts, r.Attempt)
	}
	if diff := cmp.Diff([]int{3, 2, 1}, attempts); diff != "" {
		t.Errorf("recorded attempts (-want +got):\n%s", diff)
	}
	if last := records(o)[0]; last.NextAttemptAt != nil {
		t.Errorf("last attempt announces another at %s", last.NextAttemptAt)
	}
	// A retry is scheduled before its attempt is recorded: none is.
	if n := account.Waiting(); n != 0 {
		t.Errorf("%d retries scheduled after the last attempt", n)
	}
	if got := len(rcv.received()); got != 3 {
		t.Errorf("receiver got %d posts, want 3", got)
	}
}

func TestRedirectIsAFailedAttempt(t *testing.T) {
	target := newReceiver(t, always(http.StatusOK))
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL, status)
			}))
			defer redirector.Close()
			d := start(t, webhook.Options{MaxAttempts: 1})
			o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
			o.Send(event(1), []sandbox.Webhook{hook("whk_000001", redirector.URL)}, nil)
			got := waitRecords(t, o, 1)[0]
			want := fmt.Sprintf("receiver answered %d; redirects are not followed", status)
			if got.StatusCode != status || got.Error != want {
				t.Errorf("recorded %d %q, want %d %q", got.StatusCode, got.Error, status, want)
			}
		})
	}
	if n := len(target.received()); n != 0 {
		t.Errorf("the redirect target got %d posts, want none", n)
	}
}

func TestEgressPolicyRefusals(t *testing.T) {
	const reason = "destination not allowed by the sandbox's egress policy"
	rcv := newReceiver(t, always(http.StatusOK))
	tests := []struct {
		name        string
		denyPrivate bool
		url         string
	}{
		{"loopback with -webhook-deny-private", true, rcv.URL},
		{"localhost by name with -webhook-deny-private", true, strings.Replace(rcv.URL, "127.0.0.1", "localhost", 1)},
		{"link-local metadata address", false, "http://169.254.169.254/latest/meta-data/"},
		{"unspecified address", false, "http://0.0.0.0:" + rcv.URL[strings.LastIndex(rcv.URL, ":")+1:] + "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := start(t, webhook.Options{DenyPrivate: tt.denyPrivate})
			account := sandbox.NewFrozenClock(frozen)
			o := d.NewOutbox("acct", account, nil)
			o.Send(event(1), []sandbox.Webhook{hook("whk_000001", tt.url)}, nil)
			got := waitRecords(t, o, 1)
			// A refusal is final: retrying cannot change the policy.
			if len(got) != 1 || got[0].Error != reason || got[0].StatusCode != 0 || got[0].NextAttemptAt != nil || account.Waiting() != 0 {
				t.Errorf("records %+v with %d retries scheduled, want one final attempt refused with %q", got, account.Waiting(), reason)
			}
		})
	}
	if n := len(rcv.received()); n != 0 {
		t.Errorf("the refused receiver got %d posts, want none", n)
	}
}

func TestLoopbackAllowedByDefault(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusOK))
	d := start(t, webhook.Options{})
	o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
	o.Send(event(1), []sandbox.Webhook{hook("whk_000001", rcv.URL)}, nil)
	if got := waitRecords(t, o, 1)[0]; got.StatusCode != http.StatusOK || got.Error != "" {
		t.Errorf("recorded %d %q, want 200 and no error", got.StatusCode, got.Error)
	}
}

func TestFailuresRecordGenericReasons(t *testing.T) {
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()
	slow, started := hangingReceiver(t)
	tests := []struct {
		name, url, want string
		hangs           bool
	}{
		{"nothing listening", refusedURL, "connection refused", false},
		{"no answer in time", slow.URL, "timeout", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wall := sandbox.NewFrozenClock(frozen)
			d := start(t, webhook.Options{MaxAttempts: 1, AttemptTimeout: 5 * time.Second, Clock: wall})
			o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
			o.Send(event(1), []sandbox.Webhook{hook("whk_000001", tt.url)}, nil)
			if tt.hangs {
				waitStarted(t, started, 1)
				wall.Advance(5 * time.Second)
			}
			if got := waitRecords(t, o, 1)[0]; got.Error != tt.want || got.StatusCode != 0 {
				t.Errorf("recorded %d %q, want 0 %q", got.StatusCode, got.Error, tt.want)
			}
		})
	}
}

func TestCloseStopsRetries(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusInternalServerError))
	wall, account := sandbox.NewFrozenClock(frozen), sandbox.NewFrozenClock(frozen)
	d := webhook.Start(webhook.Options{FirstRetry: time.Second, Clock: wall})
	o := d.NewOutbox("acct", account, nil)
	o.Send(event(1), []sandbox.Webhook{hook("whk_000001", rcv.URL)}, nil)
	waitRecords(t, o, 1)
	if n := account.Waiting(); n != 1 {
		t.Fatalf("%d retries scheduled after a failed attempt, want 1", n)
	}
	o.Close()
	if n := account.Waiting(); n != 0 {
		t.Errorf("%d retries still scheduled after Close", n)
	}
	o.Send(event(2), []sandbox.Webhook{hook("whk_000001", rcv.URL)}, nil)
	account.Advance(time.Hour)
	wall.Advance(time.Hour)
	// Close returns once every attempt started has returned.
	d.Close()
	if n := len(rcv.received()); n != 1 {
		t.Errorf("receiver got %d posts, want only the one before Close", n)
	}
	if n := len(records(o)); n != 1 {
		t.Errorf("%d records, want only the one before Close", n)
	}
}

func TestCloseCancelsAttemptsInFlight(t *testing.T) {
	cancelled := make(chan struct{})
	started := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read to the end, so that the server watches the connection and
		// cancels r's context when the client drops it.
		_, _ = io.Copy(io.Discard, r.Body)
		started <- struct{}{}
		<-r.Context().Done()
		close(cancelled)
	}))
	t.Cleanup(srv.Close)
	d := webhook.Start(webhook.Options{Clock: sandbox.NewFrozenClock(frozen)})
	o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
	o.Send(event(1), []sandbox.Webhook{hook("whk_000001", srv.URL)}, nil)
	waitStarted(t, started, 1)
	o.Close()
	select {
	case <-cancelled:
	case <-time.After(failsafe):
		t.Fatal("the attempt in flight was not cancelled by Close")
	}
	d.Close()
	if n := len(records(o)); n != 0 {
		t.Errorf("%d records of the cancelled attempt, want none", n)
	}
}

// TestHangingReceiversLeaveTheFastLane is the attack of many keys whose
// webhooks hang, made small: the dispatcher's clock stands still until the
// test moves it, so the hanging attempts hold their places until then.
func TestHangingReceiversLeaveTheFastLane(t *testing.T) {
	hanging1, started1 := hangingReceiver(t)
	hanging2, started2 := hangingReceiver(t)
	fast := newReceiver(t, always(http.StatusOK))
	wall := sandbox.NewFrozenClock(frozen)
	d := start(t, webhook.Options{Workers: 2, PerAccount: 2, PerHost: 2, SlowLane: 8, Clock: wall})
	// Two accounts with two hanging receivers each fill the fast lane: one
	// place each, as no attempt of theirs has been answered yet.
	for _, account := range []string{"stuck1", "stuck2"} {
		o := d.NewOutbox(account, sandbox.NewFrozenClock(frozen), nil)
		for n := range 20 {
			o.Send(event(n+1), []sandbox.Webhook{hook("whk_000001", hanging1.URL), hook("whk_000002", hanging2.URL)}, nil)
		}
	}
	waitStarted(t, started1, 2)
	if len(started2) != 0 {
		t.Error("an account with no attempt answered yet holds more than one place in the fast lane")
	}
	bystanderDelivered(t, d, wall, fast.URL, 5)
}

// However many accounts' receivers hang, each holds the fast lane once and,
// when the lane is full, for a tenth of SlowAfter only: then its attempts
// start in the slow lane, and a bystander gets a fast place after two
// tenths, not after SlowAfter.
func TestCrowdedHangingAccountsGiveTheirFastPlacesUpEarly(t *testing.T) {
	hanging, started := hangingReceiver(t)
	fast := newReceiver(t, always(http.StatusOK))
	wall := sandbox.NewFrozenClock(frozen)
	d := start(t, webhook.Options{Workers: 2, PerHost: 8, SlowLane: 8, Clock: wall})
	for k := range 4 {
		o := d.NewOutbox(fmt.Sprintf("stuck%d", k), sandbox.NewFrozenClock(frozen), nil)
		for n := range 5 {
			o.Send(event(n+1), []sandbox.Webhook{hook("whk_000001", hanging.URL)}, nil)
		}
	}
	waitStarted(t, started, 2)
	bystander := d.NewOutbox("bystander", sandbox.NewFrozenClock(frozen), nil)
	bystander.Send(event(1), []sandbox.Webhook{hook("whk_000001", fast.URL)}, nil)
	wall.Advance(100 * time.Millisecond)
	// The first two gave their places up to the next two accounts in turn.
	waitStarted(t, started, 2)
	wall.Advance(100 * time.Millisecond)
	if got := waitRecords(t, bystander, 1)[0]; got.StatusCode != http.StatusOK {
		t.Errorf("the bystander's delivery %+v", got)
	}
}

// bystanderDelivered moves the dispatcher's clock past SlowAfter, has
// another account send n events to url, and checks that all n are
// delivered. The bystander sends after the move so that its own attempts,
// which a move would find in flight, are not the ones it demotes.
func bystanderDelivered(t *testing.T, d *webhook.Dispatcher, wall *sandbox.FrozenClock, url string, n int) {
	t.Helper()
	wall.Advance(time.Second)
	bystander := d.NewOutbox("bystander", sandbox.NewFrozenClock(frozen), nil)
	for i := range n {
		bystander.Send(event(i+1), []sandbox.Webhook{hook("whk_000001", url)}, nil)
	}
	for _, r := range waitRecords(t, bystander, n) {
		if r.StatusCode != http.StatusOK {
			t.Errorf("the other account's delivery %+v", r)
		}
	}
}

func TestOneReceiverSpelledManyWaysIsOneHost(t *testing.T) {
	srv, started := hangingReceiver(t)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	fast := newReceiver(t, always(http.StatusOK))
	d := start(t, webhook.Options{Workers: 2, PerHost: 1, Clock: sandbox.NewFrozenClock(frozen)})
	stuck := d.NewOutbox("stuck", sandbox.NewFrozenClock(frozen), nil)
	var hooks []sandbox.Webhook
	for i, host := range []string{"127.0.0.1", "localhost", "LOCALHOST.", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]"} {
		hooks = append(hooks, hook(fmt.Sprintf("whk_%06d", i+1), "http://"+host+":"+port+"/"))
	}
	stuck.Send(event(1), hooks, nil)
	waitStarted(t, started, 1)
	// Were the spellings five hosts, the second would hold the other
	// worker until the dispatcher's clock moved.
	healthy := d.NewOutbox("healthy", sandbox.NewFrozenClock(frozen), nil)
	healthy.Send(event(1), []sandbox.Webhook{hook("whk_000001", fast.URL)}, nil)
	if got := waitRecords(t, healthy, 1)[0]; got.StatusCode != http.StatusOK {
		t.Errorf("healthy account's delivery %+v", got)
	}
	if len(started) != 0 {
		t.Error("a second spelling of the hanging receiver got an attempt beside the first")
	}
}

// TestHangingPathOnAnotherTenantsHost is one key aiming its webhooks at a
// path of another tenant's receiver that never answers: once its attempts
// have hung for SlowAfter, that key has one at a time there, and the
// tenant's own deliveries to the same host go through.
func TestHangingPathOnAnotherTenantsHost(t *testing.T) {
	srv, started := hangingReceiver(t)
	wall := sandbox.NewFrozenClock(frozen)
	d := start(t, webhook.Options{PerHost: 2, Clock: wall})
	attacker := d.NewOutbox("attacker", sandbox.NewFrozenClock(frozen), nil)
	var hooks []sandbox.Webhook
	for i := range 16 {
		hooks = append(hooks, hook(fmt.Sprintf("whk_%06d", i+1), srv.URL+"/hang"))
	}
	for n := range 10 {
		attacker.Send(event(n+1), hooks, nil)
	}
	// One place in the fast lane until an attempt is answered.
	waitStarted(t, started, 1)
	bystanderDelivered(t, d, wall, srv.URL+"/ok", 10)
}

func TestFullSlowLaneCutsAttemptsShort(t *testing.T) {
	hanging1, started1 := hangingReceiver(t)
	hanging2, started2 := hangingReceiver(t)
	wall := sandbox.NewFrozenClock(frozen)
	d := start(t, webhook.Options{Workers: 1, SlowLane: 1, FirstRetry: time.Hour, Clock: wall})
	// The first account's attempt fills the slow lane; the second's,
	// started in the fast lane, finds no room there.
	first := d.NewOutbox("first", sandbox.NewFrozenClock(frozen), nil)
	first.Send(event(1), []sandbox.Webhook{hook("whk_000001", hanging1.URL)}, nil)
	waitStarted(t, started1, 1)
	wall.Advance(time.Second)
	o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
	o.Send(event(1), []sandbox.Webhook{hook("whk_000002", hanging2.URL)}, nil)
	waitStarted(t, started2, 1)
	wall.Advance(time.Second)
	got := waitRecords(t, o, 1)[0]
	if got.WebhookID != "whk_000002" || got.Error != "timeout" || got.NextAttemptAt == nil {
		t.Errorf("recorded %+v, want whk_000002's attempt cut short as a timeout, to be retried", got)
	}
}

func TestDropsAreRecordedWithoutBlockingSend(t *testing.T) {
	srv, started := hangingReceiver(t)
	d := start(t, webhook.Options{Workers: 1, Pending: 2, Clock: sandbox.NewFrozenClock(frozen)})
	o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
	h := hook("whk_000001", srv.URL)
	o.Send(event(1), []sandbox.Webhook{h}, nil)
	waitStarted(t, started, 1)

	for n := 2; n <= 21; n++ {
		o.Send(event(n), []sandbox.Webhook{h}, nil)
	}
	var dropped []string
	for _, r := range records(o) {
		if r.Error != "dropped: the account has too many deliveries waiting" || r.StatusCode != 0 || r.NextAttemptAt != nil {
			t.Errorf("record %+v, want a drop", r)
		}
		dropped = append(dropped, r.EventID)
	}
	// Events 2 and 3 wait in the queue; the rest are dropped.
	var want []string
	for n := 21; n >= 4; n-- {
		want = append(want, event(n).ID)
	}
	if diff := cmp.Diff(want, dropped); diff != "" {
		t.Errorf("dropped events, newest first (-want +got):\n%s", diff)
	}
}

func TestKeepsTheLastRecordsInPages(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusOK))
	d := start(t, webhook.Options{Records: 5})
	o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
	for n := range 12 {
		o.Send(event(n+1), []sandbox.Webhook{hook("whk_000001", rcv.URL)}, nil)
	}
	waitUntil(t, o, "twelve deliveries", func(got []sandbox.Delivery) bool {
		return len(got) > 0 && got[0].ID == "dlv_000012"
	})

	var pages [][]string
	var more []bool
	req := sandbox.PageRequest{Limit: 2}
	for {
		page := o.Deliveries(req)
		var ids []string
		for _, r := range page.Items {
			ids = append(ids, r.ID)
		}
		pages, more = append(pages, ids), append(more, page.HasMore)
		if !page.HasMore {
			break
		}
		req.Before = page.Items[len(page.Items)-1].Seq
	}
	want := [][]string{{"dlv_000012", "dlv_000011"}, {"dlv_000010", "dlv_000009"}, {"dlv_000008"}}
	if diff := cmp.Diff(want, pages); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, true, false}, more); diff != "" {
		t.Errorf("hasMore per page (-want +got):\n%s", diff)
	}
}

// TestManyAccountsAllDelivered is a small soak: many accounts at once, each
// event delivered exactly once, with a Webhook-Id of its own.
func TestManyAccountsAllDelivered(t *testing.T) {
	const accounts, events = 20, 10
	rcv := newReceiver(t, always(http.StatusOK))
	d := start(t, webhook.Options{})
	outboxes := make([]*webhook.Outbox, accounts)
	var wg sync.WaitGroup
	for a := range accounts {
		outboxes[a] = d.NewOutbox(fmt.Sprintf("acct%02d", a), sandbox.NewFrozenClock(frozen), nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range events {
				outboxes[a].Send(event(n+1), []sandbox.Webhook{hook("whk_000001", rcv.URL)}, nil)
			}
		}()
	}
	wg.Wait()
	for _, o := range outboxes {
		waitRecords(t, o, events)
	}
	ids := map[string]int{}
	for _, p := range rcv.received() {
		ids[p.header.Get("Webhook-Id")]++
	}
	if len(ids) != accounts*events {
		t.Errorf("%d distinct Webhook-Ids, want %d", len(ids), accounts*events)
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("Webhook-Id %s delivered %d times, want once", id, n)
		}
	}
}

func TestNilClockIsTheSystemClock(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusOK))
	d := start(t, webhook.Options{})
	o := d.NewOutbox("acct", nil, nil)
	before := time.Now().Unix()
	o.Send(event(1), []sandbox.Webhook{hook("whk_000001", rcv.URL)}, nil)
	waitRecords(t, o, 1)
	ts, err := strconv.ParseInt(rcv.received()[0].header.Get("Webhook-Timestamp"), 10, 64)
	if err != nil || ts < before || ts > time.Now().Unix() {
		t.Errorf("Webhook-Timestamp %d (%v), want the current time", ts, err)
	}
}

func TestClosedDispatcherRefusesWork(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusOK))
	d := webhook.Start(webhook.Options{})
	d.Close()
	o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
	o.Send(event(1), []sandbox.Webhook{hook("whk_000001", rcv.URL)}, nil)
	o.Close()
	if n := len(records(o)) + len(rcv.received()); n != 0 {
		t.Errorf("receiver got %d posts after Close, want none", n)
	}
}

func TestLoopbackOnlyDeliversLocallyAndRefusesTheRest(t *testing.T) {
	recv := newReceiver(t, always(http.StatusOK))
	d := start(t, webhook.Options{LoopbackOnly: true})
	o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
	t.Cleanup(o.Close)
	// A name that does not resolve anywhere: were it looked up, the record
	// would say "host name not found", not the policy's refusal.
	o.Send(event(1), []sandbox.Webhook{hook("whk_000001", recv.URL), hook("whk_000002", "http://receiver.invalid/hook")}, nil)
	waitRecords(t, o, 2)
	byHook := map[string]sandbox.Delivery{}
	for _, r := range records(o) {
		byHook[r.WebhookID] = r
	}
	if r := byHook["whk_000001"]; r.Error != "" || r.StatusCode != http.StatusOK {
		t.Errorf("loopback receiver: %+v", r)
	}
	if r := byHook["whk_000002"]; r.Error != "destination not allowed by the sandbox's egress policy" || r.NextAttemptAt != nil {
		t.Errorf("other host: %+v, want the policy's refusal and no retry", r)
	}
}

// A move of the account's clock made while an attempt is under way, before
// the sandbox has seen it fail, still brings the retry: the retry is due by
// the account's clock measured from its attempt, so it is due at once.
func TestAMoveDuringAFailedAttemptNeverLosesTheRetry(t *testing.T) {
	const runs, firstRetry = 100, time.Minute
	// The dispatcher's clock never moves: only the account's can bring
	// the retry.
	d := start(t, webhook.Options{Clock: sandbox.NewFrozenClock(frozen), FirstRetry: firstRetry, MaxAttempts: 2, LoopbackOnly: true})
	for run := range runs {
		account := sandbox.NewFrozenClock(frozen)
		retried := make(chan struct{})
		attempts := 0
		var mu sync.Mutex
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			attempts++
			if attempts == 1 {
				account.Advance(firstRetry)
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			close(retried)
		}))
		o := d.NewOutbox(fmt.Sprintf("acct-%d", run), account, nil)
		o.Send(event(1), []sandbox.Webhook{hook("wh_1", srv.URL)}, nil)
		select {
		case <-retried:
		case <-time.After(failsafe):
			t.Fatalf("run %d of %d: the retry never came; records %+v", run+1, runs, records(o))
		}
		o.Close()
		srv.Close()
	}
}
