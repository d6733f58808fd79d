package clientverdict_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/docs"
	"github.com/testcampaign/kit/sandbox/app"
	"github.com/testcampaign/kit/sandbox/clientverdict"
	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/ratelimit"
)

// frozenAt is where the proofs' clocks stand: every wait a client makes is
// a move of its account's clock, which the test controls, never a sleep.
var frozenAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// startSandbox serves a whole sandbox, as cmd/sandbox assembles it, on a
// loopback port with frozen clocks, and with the per-minute limit given
// (0 for the default).
func startSandbox(t *testing.T, minuteLimit int) string {
	t.Helper()
	built, err := app.New(app.Config{
		FrozenAt: frozenAt,
		Limits:   ratelimit.Limits{Minute: minuteLimit},
		Webhooks: app.WebhookConfig{LoopbackOnly: true, Attempts: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(built.Handler)
	srv.Config.MaxHeaderBytes = httpapi.MaxHeaderBytes
	srv.Config.ConnContext = clientverdict.ConnContext
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		built.Close()
	})
	return srv.URL
}

// sdk is a client of the API as an SDK would be: it sends what it is told,
// and its misbehaviours are the test's to choose.
type sdk struct {
	t    *testing.T
	base string
	key  string
	// scheme is how it writes Authorization's scheme; "Bearer" if empty.
	scheme string
}

// answer is what the client got: nil when the exchange failed.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// send sends one request with a JSON body, if any, and returns the answer,
// or nil when the connection failed or the answer was cut short.
func (c *sdk) send(method, path, body string, header ...string) *answer {
	c.t.Helper()
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, reader)
	if err != nil {
		c.t.Fatal(err)
	}
	scheme := c.scheme
	if scheme == "" {
		scheme = "Bearer"
	}
	req.Header.Set("Authorization", scheme+" "+c.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer res.Body.Close()
	read, err := io.ReadAll(res.Body)
	if err != nil {
		return nil
	}
	return &answer{status: res.StatusCode, header: res.Header, body: read}
}

// control calls a control of the client's account and decodes its data.
func (c *sdk) control(method, path, body string, data any) {
	c.t.Helper()
	a := c.send(method, path, body)
	if a == nil || a.status != http.StatusOK {
		c.t.Fatalf("%s %s: %+v", method, path, a)
	}
	if data == nil {
		return
	}
	var envelope struct{ Data json.RawMessage }
	if err := json.Unmarshal(a.body, &envelope); err != nil {
		c.t.Fatal(err)
	}
	if err := json.Unmarshal(envelope.Data, data); err != nil {
		c.t.Fatal(err)
	}
}

func (c *sdk) plan(fault string) {
	c.t.Helper()
	c.control(http.MethodPost, "/_sandbox/faults", fault, nil)
}

// wait is a client's wait, made on the account's frozen clock.
func (c *sdk) wait(d time.Duration) {
	c.t.Helper()
	c.control(http.MethodPost, "/_sandbox/clock", fmt.Sprintf(`{"advance":%q}`, d.String()), nil)
}

// waitRetryAfter waits as long as the answer's Retry-After says.
func (c *sdk) waitRetryAfter(a *answer) {
	c.t.Helper()
	seconds, err := strconv.Atoi(a.header.Get("Retry-After"))
	if err != nil {
		c.t.Fatalf("Retry-After %q: %v", a.header.Get("Retry-After"), err)
	}
	c.wait(time.Duration(seconds) * time.Second)
}

func (c *sdk) verdict() clientverdict.Verdict {
	c.t.Helper()
	var v clientverdict.Verdict
	c.control(http.MethodGet, "/_sandbox/verdict", "", &v)
	return v
}

const newCampaign = `{"name":"Checkout","platform":"ios","testersRequired":5,"rewardPerBug":10}`

// receiver is a webhook receiver under test, on a loopback port; verify
// says whether it checks what a delivery carries.
func receiver(t *testing.T, verify bool, status int) string {
	t.Helper()
	var secret string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if verify {
			stamp := r.Header.Get("Webhook-Timestamp")
			mac := hmac.New(sha256.New, []byte(secret))
			fmt.Fprintf(mac, "%s.%s", stamp, body)
			want := "v1=" + hex.EncodeToString(mac.Sum(nil))
			seconds, _ := strconv.ParseInt(stamp, 10, 64)
			// The receiver's own clock is the account's, which stands at
			// frozenAt.
			age := frozenAt.Sub(time.Unix(seconds, 0))
			if !hmac.Equal([]byte(r.Header.Get("Webhook-Signature")), []byte(want)) || age > 5*time.Minute || age < -5*time.Minute {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	secretOf[srv.URL] = &secret
	return srv.URL
}

// secretOf lets a receiver learn the secret its registration returned.
var secretOf = map[string]*string{}

// register registers a receiver for campaign.created and gives it its
// secret.
func (c *sdk) register(url string) {
	c.t.Helper()
	var hook struct{ Secret string }
	c.control(http.MethodPost, "/v1/webhooks", fmt.Sprintf(`{"url":%q,"events":["campaign.created"]}`, url+"/hook"), &hook)
	*secretOf[url] = hook.Secret
}

// deliver makes one campaign.created delivery, touched by the webhook
// fault given, if any, and waits until it has been attempted.
func (c *sdk) deliver(webhookFault string) {
	c.t.Helper()
	if webhookFault != "" {
		c.plan(fmt.Sprintf(`{"event":"campaign.created","webhook":%q}`, webhookFault))
	}
	if a := c.send(http.MethodPost, "/v1/campaigns", newCampaign); a == nil || a.status != http.StatusOK {
		c.t.Fatalf("create a campaign: %+v", a)
	}
	c.control(http.MethodPost, "/_sandbox/deliveries/settle", `{}`, nil)
}

// proof is one rule's two clients: one that holds it and one that breaks
// it, each driven against its own account.
type proof struct {
	rule        string
	minuteLimit int
	holds       func(c *sdk)
	breaks      func(c *sdk)
}

var proofs = []proof{
	{
		rule:   "CLI-1",
		holds:  func(c *sdk) { c.send(http.MethodGet, "/v1/campaigns", "") },
		breaks: func(c *sdk) { c.scheme = "bearer"; c.send(http.MethodGet, "/v1/campaigns", "") },
	},
	{
		rule:  "CLI-2",
		holds: func(c *sdk) { c.send(http.MethodPost, "/v1/campaigns", newCampaign) },
		breaks: func(c *sdk) {
			c.send(http.MethodPost, "/v1/campaigns", newCampaign, "Content-Type", "text/plain")
		},
	},
	{
		rule:   "CLI-3",
		holds:  func(c *sdk) { c.send(http.MethodGet, "/v1/campaigns?platform=ios", "") },
		breaks: func(c *sdk) { c.send(http.MethodGet, "/v1/campaigns?api_key="+c.key, "") },
	},
	{
		rule: "CLI-4",
		holds: func(c *sdk) {
			c.plan(`{"path":"/v1/campaigns","status":429,"retryAfter":2}`)
			c.waitRetryAfter(c.send(http.MethodGet, "/v1/campaigns", ""))
			c.send(http.MethodGet, "/v1/testers", "")
		},
		breaks: func(c *sdk) {
			c.plan(`{"path":"/v1/campaigns","status":429,"retryAfter":2}`)
			c.send(http.MethodGet, "/v1/campaigns", "")
			c.wait(time.Second)
			c.send(http.MethodGet, "/v1/testers", "")
		},
	},
	{
		rule:        "CLI-5",
		minuteLimit: 2,
		holds: func(c *sdk) {
			c.send(http.MethodGet, "/v1/campaigns", "")
			last := c.send(http.MethodGet, "/v1/testers", "")
			reset, _ := strconv.ParseInt(last.header.Get("X-RateLimit-Reset"), 10, 64)
			c.wait(time.Unix(reset, 0).Sub(frozenAt))
			c.send(http.MethodGet, "/v1/analytics", "")
		},
		breaks: func(c *sdk) {
			c.send(http.MethodGet, "/v1/campaigns", "")
			c.send(http.MethodGet, "/v1/testers", "")
			c.send(http.MethodGet, "/v1/analytics", "")
		},
	},
	{
		rule: "CLI-6",
		holds: func(c *sdk) {
			c.plan(`{"path":"/v1/campaigns","status":503,"retryAfter":1}`)
			c.waitRetryAfter(c.send(http.MethodGet, "/v1/campaigns", ""))
			c.send(http.MethodGet, "/v1/campaigns", "")
		},
		breaks: func(c *sdk) {
			c.plan(`{"path":"/v1/campaigns","status":503,"retryAfter":1}`)
			c.send(http.MethodGet, "/v1/campaigns", "")
			c.send(http.MethodGet, "/v1/campaigns", "")
		},
	},
	{
		rule:   "CLI-7",
		holds:  func(c *sdk) { retry(c, 5) },
		breaks: func(c *sdk) { retry(c, 6) },
	},
	{
		rule: "CLI-8",
		holds: func(c *sdk) {
			c.plan(`{"path":"/v1/testers","status":500,"count":2}`)
			c.send(http.MethodGet, "/v1/testers", "")
			c.wait(200 * time.Millisecond)
			c.send(http.MethodGet, "/v1/testers", "")
			c.wait(400 * time.Millisecond)
			c.send(http.MethodGet, "/v1/testers", "")
		},
		breaks: func(c *sdk) {
			c.plan(`{"path":"/v1/testers","status":500,"count":2}`)
			c.send(http.MethodGet, "/v1/testers", "")
			c.send(http.MethodGet, "/v1/testers", "")
			c.send(http.MethodGet, "/v1/testers", "")
		},
	},
	{
		rule: "CLI-9",
		holds: func(c *sdk) {
			c.send(http.MethodPost, "/v1/campaigns", `{"name":""}`)
			c.send(http.MethodPost, "/v1/campaigns", newCampaign)
		},
		breaks: func(c *sdk) {
			c.send(http.MethodPost, "/v1/campaigns", `{"name":""}`)
			c.send(http.MethodPost, "/v1/campaigns", `{"name":""}`)
		},
	},
	{
		rule: "CLI-10",
		holds: func(c *sdk) {
			c.plan(`{"path":"/v1/campaigns","status":401}`)
			c.send(http.MethodGet, "/v1/campaigns", "")
			c.send(http.MethodGet, "/v1/testers", "")
		},
		breaks: func(c *sdk) {
			c.plan(`{"path":"/v1/campaigns","status":401}`)
			c.send(http.MethodGet, "/v1/campaigns", "")
			c.send(http.MethodGet, "/v1/campaigns", "")
		},
	},
	{
		rule: "CLI-11",
		holds: func(c *sdk) {
			c.plan(`{"method":"POST","path":"/v1/campaigns","network":"truncate"}`)
			c.send(http.MethodPost, "/v1/campaigns", newCampaign)
			c.send(http.MethodGet, "/v1/campaigns", "")
		},
		breaks: func(c *sdk) {
			c.plan(`{"method":"POST","path":"/v1/campaigns","network":"truncate"}`)
			c.send(http.MethodPost, "/v1/campaigns", newCampaign)
			c.send(http.MethodPost, "/v1/campaigns", newCampaign)
		},
	},
	{
		rule:   "CLI-12",
		holds:  func(c *sdk) { c.register(receiver(c.t, true, http.StatusOK)); c.deliver("badSignature") },
		breaks: func(c *sdk) { c.register(receiver(c.t, false, http.StatusOK)); c.deliver("badSignature") },
	},
	{
		rule:   "CLI-13",
		holds:  func(c *sdk) { c.register(receiver(c.t, true, http.StatusOK)); c.deliver("staleTimestamp") },
		breaks: func(c *sdk) { c.register(receiver(c.t, false, http.StatusOK)); c.deliver("staleTimestamp") },
	},
	{
		rule:   "CLI-14",
		holds:  func(c *sdk) { c.register(receiver(c.t, true, http.StatusNoContent)); c.deliver("") },
		breaks: func(c *sdk) { c.register(receiver(c.t, true, http.StatusInternalServerError)); c.deliver("") },
	},
}

// retry sends a request that fails every time, as often as sends says,
// each retry waiting twice as long as the one before.
func retry(c *sdk, sends int) {
	c.plan(`{"path":"/v1/testers","status":500,"count":10}`)
	wait := 200 * time.Millisecond
	for i := 0; i < sends; i++ {
		if i > 0 {
			c.wait(wait)
			wait *= 2
		}
		c.send(http.MethodGet, "/v1/testers", "")
	}
}

// TestEachRuleHasAHoldingAndABreakingClient proves the verdict on every
// client rule with two real HTTP clients against the assembled sandbox: one
// that holds the rule, and breaks none, and one that breaks it.
func TestEachRuleHasAHoldingAndABreakingClient(t *testing.T) {
	proven := map[string]bool{}
	servers := map[int]string{}
	for i, p := range proofs {
		proven[p.rule] = true
		base, ok := servers[p.minuteLimit]
		if !ok {
			base = startSandbox(t, p.minuteLimit)
			servers[p.minuteLimit] = base
		}
		t.Run(p.rule, func(t *testing.T) {
			good := &sdk{t: t, base: base, key: fmt.Sprintf("svc_test_holds_%d", i)}
			p.holds(good)
			v := good.verdict()
			if got := outcome(t, v, p.rule); got.Outcome != clientverdict.Held {
				t.Errorf("the client that holds %s: %s, %+v", p.rule, got.Outcome, got.Breaks)
			}
			if !v.Held {
				t.Errorf("the client that holds %s broke another rule:\n%s", p.rule, broken(v))
			}
			bad := &sdk{t: t, base: base, key: fmt.Sprintf("svc_test_breaks_%d", i)}
			p.breaks(bad)
			v = bad.verdict()
			got := outcome(t, v, p.rule)
			if got.Outcome != clientverdict.Broken || got.BrokenTimes == 0 || len(got.Breaks) == 0 {
				t.Fatalf("the client that breaks %s: %s, %+v", p.rule, got.Outcome, got)
			}
			if v.Held {
				t.Error("a verdict with a broken rule says held")
			}
			for _, b := range got.Breaks {
				if b.Why == "" || len(b.Requests)+len(b.Deliveries) == 0 {
					t.Errorf("%s: a break without a why or evidence: %+v", p.rule, b)
				}
			}
		})
	}
	for _, r := range docs.ClientRules() {
		if !proven[r.ID] {
			t.Errorf("%s has no holding and breaking client", r.ID)
		}
	}
}

func outcome(t *testing.T, v clientverdict.Verdict, id string) clientverdict.RuleVerdict {
	t.Helper()
	for _, r := range v.Rules {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("the verdict has no %s", id)
	return clientverdict.RuleVerdict{}
}

// broken lists a verdict's breaks, a line each.
func broken(v clientverdict.Verdict) string {
	var b bytes.Buffer
	for _, r := range v.Rules {
		for _, br := range r.Breaks {
			fmt.Fprintf(&b, "%s: %s\n", r.ID, br.Why)
		}
	}
	return b.String()
}
