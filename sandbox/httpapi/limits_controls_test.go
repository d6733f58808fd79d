package httpapi_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/app"
	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
	"github.com/testcampaign/kit/sandbox/webhook"
)

// frozenAt is mid-minute, so a test knows how far the minute window is from
// its end.
var frozenAt = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func rateHeaders(t *testing.T, res response) (limit, remaining, reset int) {
	t.Helper()
	var err error
	values := make([]int, 3)
	for i, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		if values[i], err = strconv.Atoi(res.header.Get(name)); err != nil {
			t.Fatalf("%s = %q, not an integer", name, res.header.Get(name))
		}
	}
	return values[0], values[1], values[2]
}

func TestRateLimitHeadersOnEveryAuthenticatedResponse(t *testing.T) {
	c := newClient(t, sandboxtest.Options{Now: frozenAt})
	responses := []response{
		c.do("GET", "/v1/campaigns", ""),
		c.do("POST", "/v1/campaigns", `{}`),
		c.do("GET", "/v1/unknown", ""),
		c.do("DELETE", "/v1/testers", ""),
	}
	for i, res := range responses {
		limit, remaining, reset := rateHeaders(t, res)
		if limit != 1000 || remaining != 999-i || reset != int(frozenAt.Truncate(time.Minute).Add(time.Minute).Unix()) {
			t.Errorf("response %d (%d): limit %d remaining %d reset %d", i, res.status, limit, remaining, reset)
		}
	}
	unauthenticated := c.withKey("").do("GET", "/v1/campaigns", "")
	if unauthenticated.header.Get("X-RateLimit-Limit") != "" {
		t.Error("a 401 carries rate-limit headers: it counted a request for nobody")
	}
	// Controls carry their own budget's headers and leave the API's alone.
	for i := range 2 {
		limit, remaining, _ := rateHeaders(t, c.do("GET", "/_sandbox/events", ""))
		if limit != 600 || remaining != 599-i {
			t.Errorf("control %d: limit %d remaining %d, want 600 and %d", i, limit, remaining, 599-i)
		}
	}
	if _, remaining, _ := rateHeaders(t, c.do("GET", "/v1/testers", "")); remaining != 999-len(responses) {
		t.Errorf("API remaining %d after controls, want %d", remaining, 999-len(responses))
	}
}

func TestRateLimitRefusesAndRecovers(t *testing.T) {
	sb := sandboxtest.New(t, sandboxtest.Options{Now: frozenAt, MinuteLimit: 3, HourLimit: 5, DayLimit: 100})
	c, clock := &client{t: t, handler: sb.Handler, key: testKey}, sb.Accounts.Get(testKey).Frozen
	for range 3 {
		c.ok("GET", "/v1/testers", "", nil)
	}
	res := c.fails("GET", "/v1/testers", "", http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	if got := res.header.Get("Retry-After"); got != "34" {
		t.Errorf("Retry-After = %q, want 34 (seconds to the end of the minute)", got)
	}
	if _, remaining, _ := rateHeaders(t, res); remaining != 0 {
		t.Errorf("remaining on a 429 = %d", remaining)
	}
	other := c.withKey("svc_test_another_key_0000")
	other.ok("GET", "/v1/testers", "", nil)

	clock.Advance(34 * time.Second)
	res = c.do("GET", "/v1/testers", "")
	limit, remaining, reset := rateHeaders(t, res)
	if res.status != 200 || limit != 5 || remaining != 1 || reset != int(frozenAt.Truncate(time.Hour).Add(time.Hour).Unix()) {
		t.Errorf("next minute: %d, limit %d remaining %d reset %d; want the hour window with 1 left (the refused request is not counted)",
			res.status, limit, remaining, reset)
	}
}

func TestResetControlStartsTheAccountOver(t *testing.T) {
	c := newClient(t, sandboxtest.Options{Now: frozenAt, MinuteLimit: 5})
	seeded := c.do("GET", "/v1/campaigns?limit=100", "")
	var created campaign
	c.ok("POST", "/v1/campaigns", validCampaign, &created)
	c.ok("POST", "/_sandbox/faults", `{"status":500,"count":5}`, nil)
	c.ok("POST", "/_sandbox/reset", "", nil)

	again := c.do("GET", "/v1/campaigns?limit=100", "")
	if again.status != 200 || !bytes.Equal(seeded.raw, again.raw) {
		t.Errorf("after reset the account is not as seeded:\n%s\n%s", seeded.raw, again.raw)
	}
	if _, remaining, _ := rateHeaders(t, again); remaining != 4 {
		t.Errorf("remaining after reset = %d, want 4: counts were not forgotten", remaining)
	}
	var recreated campaign
	c.ok("POST", "/v1/campaigns", validCampaign, &recreated)
	if recreated.ID != created.ID {
		t.Errorf("ids do not start over after reset: %s then %s", created.ID, recreated.ID)
	}
}

func TestFaultControlFailsTheNextRequests(t *testing.T) {
	c := newClient(t, sandboxtest.Options{})
	c.ok("POST", "/_sandbox/faults", `{"status":500,"count":2}`, nil)
	c.fails("GET", "/v1/campaigns", "", http.StatusInternalServerError, "INTERNAL_ERROR")
	c.withKey("svc_test_unaffected_account").ok("GET", "/v1/campaigns", "", nil)
	c.fails("POST", "/v1/campaigns", validCampaign, http.StatusInternalServerError, "INTERNAL_ERROR")
	c.ok("GET", "/v1/campaigns", "", nil)

	c.ok("POST", "/_sandbox/faults", `{"status":429}`, nil)
	res := c.fails("GET", "/v1/bugs", "", http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	if res.header.Get("Retry-After") == "" {
		t.Error("injected 429 has no Retry-After")
	}

	c.ok("POST", "/_sandbox/faults", `{"delayMs":30}`, nil)
	started := time.Now()
	c.ok("GET", "/v1/testers", "", nil)
	if elapsed := time.Since(started); elapsed < 30*time.Millisecond {
		t.Errorf("slow fault took %v", elapsed)
	}

	c.fails("POST", "/_sandbox/faults", `{"status":302}`, 400, "VALIDATION_ERROR")
	c.fails("POST", "/_sandbox/faults", `{}`, 400, "VALIDATION_ERROR")
	c.fails("POST", "/_sandbox/faults", `{"status":500,"count":0,"delayMs":60000}`, 400, "VALIDATION_ERROR")
}

func TestFiledBugsAndEvents(t *testing.T) {
	c := newClient(t, sandboxtest.Options{Now: frozenAt})
	var created campaign
	c.ok("POST", "/v1/campaigns", validCampaign, &created)
	var filed bug
	c.ok("POST", "/_sandbox/bugs", `{"campaignId":"`+created.ID+`","title":"Crash on launch","description":"Every time.","severity":"high"}`, &filed)
	if filed.Status != "new" || filed.CampaignID != created.ID || filed.TesterID == "" || filed.Resolution != nil {
		t.Errorf("filed bug = %+v", filed)
	}
	c.ok("PATCH", "/v1/bugs/"+filed.ID, `{"status":"confirmed"}`, nil)
	c.ok("PATCH", "/v1/bugs/"+filed.ID, `{"status":"confirmed"}`, nil)
	c.fails("PATCH", "/v1/bugs/"+filed.ID, `{"status":"new"}`, http.StatusConflict, "INVALID_STATUS_TRANSITION")

	var events page[struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"data"`
	}]
	c.ok("GET", "/_sandbox/events", "", &events)
	var got []string
	for _, e := range events.Items {
		got = append(got, e.ID+" "+e.Type+" "+e.Data.ID+" "+e.Data.Status)
	}
	want := []string{
		"evt_000003 bug.updated " + filed.ID + " confirmed",
		"evt_000002 bug.created " + filed.ID + " new",
		"evt_000001 campaign.created " + created.ID + " draft",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant (a no-op patch and a refused one emit nothing):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	c.fails("POST", "/_sandbox/bugs", `{"campaignId":"cmp_999999","title":"x","severity":"low"}`, 400, "VALIDATION_ERROR")
	c.fails("POST", "/_sandbox/bugs", `{"campaignId":"`+created.ID+`","testerId":"tst_999999","title":"x","severity":"low"}`, 400, "VALIDATION_ERROR")
}

func TestClockControl(t *testing.T) {
	c := newClient(t, sandboxtest.Options{Now: frozenAt})
	var moved struct{ Now time.Time }
	c.ok("POST", "/_sandbox/clock", `{"advance":"1h30m"}`, &moved)
	if !moved.Now.Equal(frozenAt.Add(90 * time.Minute)) {
		t.Errorf("clock moved to %v", moved.Now)
	}
	var created campaign
	c.ok("POST", "/v1/campaigns", validCampaign, &created)
	if created.CreatedAt != "2026-03-14T16:39:26.000Z" {
		t.Errorf("createdAt = %s, want the moved clock", created.CreatedAt)
	}
	c.fails("POST", "/_sandbox/clock", `{"advance":"-1h"}`, 400, "VALIDATION_ERROR")
	// Another key's clock has not moved.
	var other campaign
	c.withKey("svc_test_another_account_9999").ok("POST", "/v1/campaigns", validCampaign, &other)
	if other.CreatedAt != "2026-03-14T15:09:26.000Z" {
		t.Errorf("another account's createdAt = %s, want the frozen instant", other.CreatedAt)
	}

	running := newClient(t, sandboxtest.Options{})
	running.fails("POST", "/_sandbox/clock", `{"advance":"1h"}`, http.StatusConflict, "CONFLICT")
}

func TestRequestLogAndServerLogHideTheKey(t *testing.T) {
	var logs bytes.Buffer
	handler := sandboxtest.NewHandler(t, sandboxtest.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	c := &client{t: t, handler: handler, key: testKey}
	c.ok("GET", "/v1/campaigns?limit=2", "", nil)
	c.fails("GET", "/v1/campaigns/cmp_999999", "", 404, "NOT_FOUND")
	c.withKey("svc_live_0123456789abcdef").fails("GET", "/v1/bugs", "", 401, "INVALID_API_KEY")

	var requests page[struct {
		Method string `json:"method"`
		Path   string `json:"path"`
		Query  string `json:"query"`
		Status int    `json:"status"`
	}]
	c.ok("GET", "/_sandbox/requests", "", &requests)
	if len(requests.Items) != 2 || requests.Items[0].Status != 404 || requests.Items[1].Query != "limit=2" {
		t.Errorf("request log = %+v", requests.Items)
	}
	if strings.Contains(logs.String(), "0123456789abcdef") {
		t.Errorf("log holds a whole key:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `"key":"svc_test_…cdef"`) {
		t.Errorf("log lacks the key hint:\n%s", logs.String())
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	handler := sandboxtest.NewHandler(t, sandboxtest.Options{
		WrapStore: func(st sandbox.Store) sandbox.Store { return panickingStore{st} },
	})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/v1/testers", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	handler.ServeHTTP(rec, req)
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"code":"INTERNAL_ERROR"`) || strings.Contains(rec.Body.String(), "boom") {
		t.Errorf("panic gave %d %s", rec.Code, rec.Body)
	}
}

type panickingStore struct{ sandbox.Store }

func (panickingStore) Testers(context.Context, sandbox.TesterFilter, sandbox.PageRequest) (sandbox.Page[sandbox.Tester], error) {
	panic("boom")
}

func TestWebhookDeliveriesAreVisibleThroughControls(t *testing.T) {
	const secret = "limits-controls-secret"
	posts := make(chan string, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts <- r.Header.Get("Webhook-Id")
	}))
	defer receiver.Close()
	c := newHookClient(t, sandboxtest.Options{Secret: secret})
	c.ok("POST", "/v1/webhooks", `{"url":"`+receiver.URL+`","events":["bug.updated"]}`, nil)
	c.ok("POST", "/v1/campaigns", validCampaign, nil)
	c.ok("PATCH", "/v1/bugs/bug_000009", `{"status":"confirmed"}`, nil)
	select {
	case id := <-posts:
		identity := webhook.NewKeys(secret).Identity(sandbox.AccountForKey(testKey).ID, 0)
		if want := webhook.MessageID(identity, "evt_000002"); id != want {
			t.Errorf("delivered %s, want %s, of the bug.updated event evt_000002 only", id, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery")
	}
	deliveries := c.waitDeliveries(1)
	if len(deliveries) != 1 || deliveries[0].EventID != "evt_000002" || deliveries[0].StatusCode != 200 || deliveries[0].Attempt != 1 {
		t.Errorf("deliveries = %+v", deliveries)
	}
}

func TestDateFollowsTheAccountsClock(t *testing.T) {
	c := newClient(t, sandboxtest.Options{Now: frozenAt})
	if got, want := c.do("GET", "/v1/testers", "").header.Get("Date"), frozenAt.Format(http.TimeFormat); got != want {
		t.Errorf("Date = %q, want the frozen %q", got, want)
	}
	c.ok("POST", "/_sandbox/clock", `{"advance":"1h"}`, nil)
	if got, want := c.do("GET", "/v1/testers", "").header.Get("Date"), frozenAt.Add(time.Hour).Format(http.TimeFormat); got != want {
		t.Errorf("Date after moving the clock = %q, want %q", got, want)
	}
}

// A client retries, backs off or gives up by the budget a 429 is about: its
// key's, the controls', or the whole client's on a shared sandbox.
func TestEveryRateLimitHeaderSetNamesItsBudget(t *testing.T) {
	c := newClient(t, sandboxtest.Options{Now: frozenAt, MinuteLimit: 1, ControlMinuteLimit: 2,
		Clients: httpapi.ClientLimits{Requests: 7, NewAccounts: 1, TrustForwardedFor: true}})
	c.ok("POST", "/_sandbox/faults", `{"status":429,"count":1}`, nil)
	cases := []struct {
		name   string
		res    response
		want   string
		status int
	}{
		{"an injected 429", c.do("GET", "/v1/testers", ""), "key", http.StatusTooManyRequests},
		{"an API answer", c.do("GET", "/v1/testers", ""), "key", http.StatusOK},
		{"the key's 429", c.do("GET", "/v1/testers", ""), "key", http.StatusTooManyRequests},
		{"a control's answer", c.do("GET", "/_sandbox/events", ""), "controls", http.StatusOK},
		{"the controls' 429", c.do("GET", "/_sandbox/events", ""), "controls", http.StatusTooManyRequests},
		{"the client's new-account 429", c.withKey("svc_test_a-second-key").do("GET", "/v1/testers", ""), "client", http.StatusTooManyRequests},
		{"another client", fromClient(c, "192.0.2.9", "GET", "/_sandbox/events"), "controls", http.StatusTooManyRequests},
		{"the client's request 429", c.do("GET", "/healthz", ""), "client", http.StatusTooManyRequests},
	}
	for _, tc := range cases {
		if tc.res.status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, tc.res.status, tc.res.raw, tc.status)
		}
		if got := tc.res.header.Values("X-RateLimit-Scope"); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: X-RateLimit-Scope %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestTheClockCanBeRead(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	c := newClient(t, sandboxtest.Options{Now: at})
	var clock struct {
		Now    string
		Frozen bool
	}
	c.ok("GET", "/_sandbox/clock", "", &clock)
	if clock.Now != "2026-03-01T09:30:00.000Z" || !clock.Frozen {
		t.Errorf("clock: %+v, want the frozen start", clock)
	}
	c.ok("POST", "/_sandbox/clock", `{"advance":"90s"}`, nil)
	c.ok("GET", "/_sandbox/clock", "", &clock)
	if clock.Now != "2026-03-01T09:31:30.000Z" {
		t.Errorf("after a 90s move the clock reads %s", clock.Now)
	}
	c = newClient(t, sandboxtest.Options{})
	c.ok("GET", "/_sandbox/clock", "", &clock)
	if clock.Frozen || clock.Now == "" {
		t.Errorf("a running clock: %+v", clock)
	}
}

// A key spelt with escapes, as a header's name, in a cookie or beside another
// key is still the key: neither the journal nor the log repeats it whole.
func TestDisguisedKeysNeverComeOutWhole(t *testing.T) {
	const secret = "0123456789abcdef"
	var logs bytes.Buffer
	// Built without the OpenAPI check of sandboxtest: a hostile client's
	// requests are off the document by design.
	built, err := app.New(app.Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(built.Close)
	c := &client{t: t, handler: built.Handler, key: testKey}
	c.do("GET", "/v1/campaigns?q=svc_test_"+secret+"&k=svc%5Ftest%5F"+secret, "")
	c.do("GET", "/v1/campaigns/svc%255Ftest%255F"+secret, "")
	c.do("GET", "/v1/testers", "", "Cookie", "session=svc%5Ftest_"+secret+"; theme=dark")
	c.do("GET", "/v1/testers", "", "Svc_test_"+secret, "1", "X-Key", "svc_test_"+secret)
	c.do("POST", "/v1/campaigns", `{"name":"svc\u005ftest\u005f`+secret+`","platform":"ios","testersRequired":1,"rewardPerBug":1}`)
	c.do("POST", "/v1/campaigns", `{"name":"svc%5Ftest_`+secret+`","platform":"web","testersRequired":1,"rewardPerBug":1}`)
	journal := c.do("GET", "/_sandbox/requests", "")
	if journal.status != http.StatusOK {
		t.Fatalf("journal: %d %s", journal.status, journal.raw)
	}
	for what, text := range map[string]string{"journal": string(journal.raw), "log": logs.String()} {
		for _, spelt := range []string{secret, "0123456789ABCDEF", `\u0030\u0031`} {
			if strings.Contains(text, spelt) {
				t.Errorf("the %s holds the key (%s):\n%s", what, spelt, text)
			}
		}
	}
}
