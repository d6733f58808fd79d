package clientverdict_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testcampaign/kit/docs"
	"github.com/testcampaign/kit/sandbox/clientverdict"
)

// client is one entry of the catalogue: an SDK's behaviour, and the rules
// the verdict must find broken by it, no more and no fewer. A client that
// must be held names the rules it meets, which must then be held, not
// left unexercised.
type client struct {
	name string
	// meets are the rules the client must be judged on.
	meets []string
	// breaks are the rules it must break; every other rule must hold or
	// be unexercised.
	breaks []string
	// why, if set, must be in the why of the first break of breaks[0].
	why string
	run func(c *sdk)
}

// catalogue holds, for every client rule, clients that must be held (each
// kind of correct client that looks like a misbehaviour from afar:
// concurrent, jittered, retried by its HTTP library, making separate calls,
// polling) and clients that must be broken (every misbehaviour
// docs/contract.md lists).
var catalogue = []client{
	// CLI-1
	{name: "Bearer, one space", meets: []string{"CLI-1"}, run: func(c *sdk) { c.send(http.MethodGet, "/v1/campaigns", "") }},
	{name: "scheme in lower case", breaks: []string{"CLI-1"}, run: func(c *sdk) { c.scheme = "bearer"; c.send(http.MethodGet, "/v1/campaigns", "") }},
	{name: "two spaces after Bearer", breaks: []string{"CLI-1"}, run: func(c *sdk) { c.scheme = "Bearer "; c.send(http.MethodGet, "/v1/campaigns", "") }},

	// CLI-2
	{name: "JSON body with a charset", meets: []string{"CLI-2"}, run: func(c *sdk) {
		c.send(http.MethodPost, "/v1/campaigns", newCampaign, "Content-Type", "application/json; charset=utf-8")
	}},
	{name: "JSON body sent as text/plain", breaks: []string{"CLI-2"}, run: func(c *sdk) {
		c.send(http.MethodPost, "/v1/campaigns", newCampaign, "Content-Type", "text/plain")
	}},
	{name: "JSON body without Content-Type", breaks: []string{"CLI-2"}, run: func(c *sdk) {
		c.send(http.MethodPost, "/v1/campaigns", newCampaign, "Content-Type", "")
	}},

	// CLI-3
	{name: "a campaign named like a key", meets: []string{"CLI-3"}, run: func(c *sdk) {
		c.send(http.MethodPost, "/v1/campaigns", `{"name":"svc_test_example","platform":"ios","testersRequired":5,"rewardPerBug":10}`)
	}},
	{name: "its key in the query", breaks: []string{"CLI-3"}, run: func(c *sdk) { c.send(http.MethodGet, "/v1/campaigns?api_key="+c.key, "") }},
	{name: "its key percent-encoded in the query", breaks: []string{"CLI-3"}, run: func(c *sdk) {
		c.send(http.MethodGet, "/v1/campaigns?token="+strings.ReplaceAll(c.key, "_", "%5F"), "")
	}},
	{name: "its key JSON-escaped in a body", breaks: []string{"CLI-3"}, run: func(c *sdk) {
		escaped := strings.ReplaceAll(c.key, "_", `\u005f`)
		c.send(http.MethodPost, "/v1/campaigns", `{"name":"`+escaped+`","platform":"ios","testersRequired":5,"rewardPerBug":10}`)
	}},

	// CLI-4
	{name: "waits out a 429's Retry-After", meets: []string{"CLI-4", "CLI-6"}, run: func(c *sdk) {
		c.plan(`{"path":"/v1/campaigns","status":429,"retryAfter":2}`)
		c.waitRetryAfter(c.send(http.MethodGet, "/v1/campaigns", ""))
		c.send(http.MethodGet, "/v1/testers", "")
	}},
	{name: "stops after a 429", meets: []string{"CLI-4", "CLI-6"}, run: func(c *sdk) {
		c.plan(`{"path":"/v1/campaigns","status":429,"retryAfter":2}`)
		c.send(http.MethodGet, "/v1/campaigns", "")
	}},
	{name: "GETs in flight when a 429 arrives", meets: []string{"CLI-4"}, run: func(c *sdk) {
		c.plan(`{"path":"/v1/campaigns","status":429,"retryAfter":2}`)
		c.parallel(5, http.MethodGet, "/v1/campaigns")
	}},
	{name: "another request before a 429's Retry-After", breaks: []string{"CLI-4"}, run: func(c *sdk) {
		c.plan(`{"path":"/v1/campaigns","status":429,"retryAfter":2}`)
		c.send(http.MethodGet, "/v1/campaigns", "")
		c.wait(time.Second)
		c.send(http.MethodGet, "/v1/testers", "")
	}},

	// CLI-5
	{name: "waits for X-RateLimit-Reset", meets: []string{"CLI-5"}, run: spend(true)},
	{name: "sends before X-RateLimit-Reset", breaks: []string{"CLI-5"}, run: spend(false)},

	// CLI-6
	{name: "waits out a 503's Retry-After", meets: []string{"CLI-6"}, run: func(c *sdk) {
		c.plan(`{"path":"/v1/campaigns","status":503,"retryAfter":1}`)
		c.waitRetryAfter(c.send(http.MethodGet, "/v1/campaigns", ""))
		c.send(http.MethodGet, "/v1/campaigns", "")
	}},
	{name: "parallel identical GETs, one answered 503", meets: []string{"CLI-6"}, run: func(c *sdk) {
		c.plan(`{"path":"/v1/campaigns","status":503,"retryAfter":1}`)
		c.parallel(5, http.MethodGet, "/v1/campaigns")
	}},
	{name: "retries a 503 before its Retry-After", breaks: []string{"CLI-6"}, run: func(c *sdk) {
		c.plan(`{"path":"/v1/campaigns","status":503,"retryAfter":1}`)
		c.send(http.MethodGet, "/v1/campaigns", "")
		c.send(http.MethodGet, "/v1/campaigns", "")
	}},
	{name: "retries a 503 whose Retry-After is a date too soon", breaks: []string{"CLI-6"}, run: func(c *sdk) {
		c.plan(`{"path":"/v1/campaigns","status":503,"headers":{"Retry-After":"Thu, 01 Jan 2026 00:00:05 GMT"}}`)
		c.send(http.MethodGet, "/v1/campaigns", "")
		c.wait(time.Second)
		c.send(http.MethodGet, "/v1/campaigns", "")
	}},

	// CLI-7
	{name: "gives up after 5 sends", meets: []string{"CLI-7", "CLI-8"}, run: func(c *sdk) { retryWaiting(c, 500, 200, 400, 800, 1600) }},
	{name: "two calls 30 s apart, each retried twice", meets: []string{"CLI-7", "CLI-8"}, run: func(c *sdk) {
		retryWaiting(c, 500, 200, 400)
		c.wait(30 * time.Second)
		retryWaiting(c, 500, 200, 400)
	}},
	{name: "sends 6 times in a row", breaks: []string{"CLI-7"}, why: "sent 6 times in a row", run: func(c *sdk) { retryWaiting(c, 500, 200, 400, 800, 1600, 3200) }},
	{name: "sends 8 times in a row", breaks: []string{"CLI-7"}, why: "sent 8 times in a row", run: func(c *sdk) {
		retryWaiting(c, 500, 200, 400, 800, 1600, 3200, 6400, 12800)
	}},

	// CLI-8
	{name: "exponential back-off", meets: []string{"CLI-8"}, run: func(c *sdk) { retryWaiting(c, 500, 200, 400, 800) }},
	{name: "full jitter", meets: []string{"CLI-8"}, run: func(c *sdk) { retryWaiting(c, 500, 150, 500, 180) }},
	{name: "full jitter, small draws first", meets: []string{"CLI-8"}, run: func(c *sdk) { retryWaiting(c, 500, 40, 90, 310, 260) }},
	{name: "equal jitter", meets: []string{"CLI-8"}, run: func(c *sdk) { retryWaiting(c, 500, 130, 260, 700, 1100) }},
	{name: "decorrelated jitter", meets: []string{"CLI-8"}, run: func(c *sdk) { retryWaiting(c, 500, 250, 180, 420, 300) }},
	{name: "a GET net/http sends again on a new connection", meets: []string{"CLI-7"}, run: func(c *sdk) {
		c.send(http.MethodGet, "/v1/testers", "")
		c.plan(`{"method":"GET","path":"/v1/campaigns","network":"close"}`)
		if a := c.send(http.MethodGet, "/v1/campaigns", ""); a == nil || a.status != http.StatusOK {
			c.t.Fatalf("net/http did not send the GET again by itself: %+v", a)
		}
	}},
	{name: "five sends of a GET, the first sent twice by net/http", meets: []string{"CLI-7", "CLI-8"}, run: func(c *sdk) {
		c.send(http.MethodGet, "/v1/campaigns", "")
		c.plan(`{"method":"GET","path":"/v1/testers","network":"close"}`)
		c.plan(`{"method":"GET","path":"/v1/testers","status":500,"count":5}`)
		c.send(http.MethodGet, "/v1/testers", "")
		for _, ms := range []time.Duration{200, 400, 800, 1600} {
			c.wait(ms * time.Millisecond)
			c.send(http.MethodGet, "/v1/testers", "")
		}
		if sent := c.journalCount("/v1/testers"); sent != 6 {
			c.t.Fatalf("%d GETs reached the sandbox, want the application's 5 and net/http's 1", sent)
		}
	}},
	{name: "retries at once", breaks: []string{"CLI-8"}, run: func(c *sdk) { retryWaiting(c, 500, 0, 0) }},
	{name: "a steady 150 ms pace", breaks: []string{"CLI-8"}, run: func(c *sdk) { retryWaiting(c, 500, 150, 150, 150, 150) }},
	{name: "a shrinking pace", breaks: []string{"CLI-8"}, run: func(c *sdk) { retryWaiting(c, 500, 150, 120, 100, 80) }},

	// CLI-9
	{name: "fixes a 400 before sending again", meets: []string{"CLI-9"}, run: func(c *sdk) {
		c.send(http.MethodPost, "/v1/campaigns", `{"name":""}`)
		c.send(http.MethodPost, "/v1/campaigns", newCampaign)
	}},
	{name: "polls a 404 until the record appears", meets: []string{"CLI-9"}, run: func(c *sdk) {
		c.send(http.MethodPost, "/v1/campaigns", newCampaign)
		c.plan(`{"method":"GET","path":"/v1/campaigns/cmp_000001","status":404,"count":2}`)
		for range 3 {
			if a := c.send(http.MethodGet, "/v1/campaigns/cmp_000001", ""); a.status == http.StatusOK {
				return
			}
			c.wait(500 * time.Millisecond)
		}
		c.t.Fatal("the record never appeared")
	}},
	{name: "five parallel identical 404s", meets: []string{"CLI-9"}, run: func(c *sdk) {
		c.parallel(5, http.MethodGet, "/v1/campaigns/cmp_999999")
	}},
	{name: "sends a 400 again unchanged", breaks: []string{"CLI-9"}, run: func(c *sdk) {
		c.send(http.MethodPost, "/v1/campaigns", `{"name":""}`)
		c.wait(time.Second)
		c.send(http.MethodPost, "/v1/campaigns", `{"name":""}`)
	}},
	{name: "sends a 404 again at once", breaks: []string{"CLI-9"}, run: func(c *sdk) {
		c.send(http.MethodGet, "/v1/campaigns/cmp_999999", "")
		c.send(http.MethodGet, "/v1/campaigns/cmp_999999", "")
	}},

	// CLI-10
	{name: "stops after a 401", meets: []string{"CLI-10"}, run: func(c *sdk) {
		c.plan(`{"path":"/v1/campaigns","status":401}`)
		c.send(http.MethodGet, "/v1/campaigns", "")
	}},
	{name: "moves on after a 401", meets: []string{"CLI-10"}, run: func(c *sdk) {
		c.plan(`{"path":"/v1/campaigns","status":401}`)
		c.send(http.MethodGet, "/v1/campaigns", "")
		c.send(http.MethodGet, "/v1/testers", "")
	}},
	{name: "sends a 401 again", breaks: []string{"CLI-10"}, run: func(c *sdk) {
		c.plan(`{"path":"/v1/campaigns","status":401}`)
		c.send(http.MethodGet, "/v1/campaigns", "")
		c.wait(time.Second)
		c.send(http.MethodGet, "/v1/campaigns", "")
	}},

	// CLI-11
	{name: "a truncated POST handed to the caller", meets: []string{"CLI-11"}, run: func(c *sdk) {
		c.plan(`{"method":"POST","path":"/v1/campaigns","network":"truncate"}`)
		c.send(http.MethodPost, "/v1/campaigns", newCampaign)
		c.send(http.MethodGet, "/v1/campaigns", "")
	}},
	{name: "a lost POST checked, no record found, sent again", meets: []string{"CLI-11"}, run: func(c *sdk) {
		c.plan(`{"method":"POST","path":"/v1/campaigns","network":"reset"}`)
		c.send(http.MethodPost, "/v1/campaigns", newCampaign)
		c.send(http.MethodGet, "/v1/campaigns", "")
		c.send(http.MethodPost, "/v1/campaigns", newCampaign)
	}},
	{name: "a lost POST checked, the record found", meets: []string{"CLI-11"}, run: func(c *sdk) {
		c.plan(`{"method":"POST","path":"/v1/campaigns","network":"reset","phase":"after"}`)
		c.send(http.MethodPost, "/v1/campaigns", newCampaign)
		c.send(http.MethodGet, "/v1/campaigns", "")
	}},
	lostPost("reset after the API answered", `"network":"reset","phase":"after"`, "two records where the client meant one"),
	lostPost("close after the API answered", `"network":"close","phase":"after"`, "two records"),
	lostPost("reset before the API saw it", `"network":"reset"`, "without checking"),
	lostPost("close before the API saw it", `"network":"close"`, "without checking"),
	lostPost("truncated", `"network":"truncate"`, "two records"),
	lostPost("answered not in JSON", `"network":"malformed"`, "without checking"),
	lostPost("a 504 after the API answered", `"status":504,"phase":"after"`, "two records"),
	{name: "a POST given up on and sent again", breaks: []string{"CLI-11"}, why: "the client gave up", run: func(c *sdk) {
		c.plan(`{"method":"POST","path":"/v1/campaigns","delayMs":30000}`)
		c.giveUp(http.MethodPost, "/v1/campaigns", newCampaign)
		c.send(http.MethodPost, "/v1/campaigns", newCampaign)
	}},
	{name: "a POST given up on during a delay after the API answered, sent again", breaks: []string{"CLI-11"}, why: "carriedOut true", run: func(c *sdk) {
		c.plan(`{"method":"POST","path":"/v1/campaigns","delayMs":30000,"phase":"after"}`)
		c.giveUp(http.MethodPost, "/v1/campaigns", newCampaign)
		c.send(http.MethodPost, "/v1/campaigns", newCampaign)
	}},
	{name: "a lost POST checked, the record found, sent again anyway", breaks: []string{"CLI-11"}, why: "showed what the first had made", run: func(c *sdk) {
		c.plan(`{"method":"POST","path":"/v1/campaigns","network":"reset","phase":"after"}`)
		c.send(http.MethodPost, "/v1/campaigns", newCampaign)
		c.send(http.MethodGet, "/v1/campaigns", "")
		c.send(http.MethodPost, "/v1/campaigns", newCampaign)
	}},

	// CLI-12, CLI-13, CLI-14
	{name: "a receiver that verifies signatures", meets: []string{"CLI-12", "CLI-14"}, run: func(c *sdk) {
		c.register(receiver(c.t, true, http.StatusOK))
		c.deliver("badSignature")
		c.deliver("")
	}},
	{name: "a receiver that accepts a forged signature", breaks: []string{"CLI-12"}, run: func(c *sdk) {
		c.register(receiver(c.t, false, http.StatusOK))
		c.deliver("badSignature")
	}},
	{name: "a receiver that checks timestamps", meets: []string{"CLI-13"}, run: func(c *sdk) {
		c.register(receiver(c.t, true, http.StatusOK))
		c.deliver("staleTimestamp")
	}},
	{name: "a receiver that accepts a stale timestamp", breaks: []string{"CLI-13"}, run: func(c *sdk) {
		c.register(receiver(c.t, false, http.StatusOK))
		c.deliver("staleTimestamp")
	}},
	{name: "a receiver that answers 204", meets: []string{"CLI-14"}, run: func(c *sdk) {
		c.register(receiver(c.t, true, http.StatusNoContent))
		c.deliver("")
	}},
	{name: "a receiver that answers 500", breaks: []string{"CLI-14"}, run: func(c *sdk) {
		c.register(receiver(c.t, true, http.StatusInternalServerError))
		c.deliver("")
	}},
}

// lostPost is a client that sends a POST again after the fault given lost
// its answer, which breaks CLI-11 with why in its why.
func lostPost(how, fault, why string) client {
	return client{name: "a POST sent again, its answer lost: " + how, breaks: []string{"CLI-11"}, why: why, run: func(c *sdk) {
		c.plan(`{"method":"POST","path":"/v1/campaigns",` + fault + `}`)
		c.send(http.MethodPost, "/v1/campaigns", newCampaign)
		c.send(http.MethodPost, "/v1/campaigns", newCampaign)
	}}
}

// spend spends a budget of 2 a minute, and then waits for its reset or
// not before the next request (CLI-5).
func spend(waits bool) func(c *sdk) {
	return func(c *sdk) {
		c.send(http.MethodGet, "/v1/campaigns", "")
		last := c.send(http.MethodGet, "/v1/testers", "")
		if waits {
			c.wait(resetIn(c, last))
		}
		c.send(http.MethodGet, "/v1/analytics", "")
	}
}

// resetIn is how long the client must wait, from where its account's clock
// stands, for the X-RateLimit-Reset of an answer.
func resetIn(c *sdk, a *answer) time.Duration {
	c.t.Helper()
	reset, err := strconv.ParseInt(a.header.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil {
		c.t.Fatalf("X-RateLimit-Reset %q: %v", a.header.Get("X-RateLimit-Reset"), err)
	}
	return time.Unix(reset, 0).Sub(frozenAt)
}

// retryWaiting plans a status to fail every send of GET /v1/testers and
// sends it once, then once after each wait, in milliseconds.
func retryWaiting(c *sdk, status int, waits ...int) {
	c.plan(fmt.Sprintf(`{"path":"/v1/testers","status":%d,"count":%d}`, status, len(waits)+1))
	c.send(http.MethodGet, "/v1/testers", "")
	for _, ms := range waits {
		if ms > 0 {
			c.wait(time.Duration(ms) * time.Millisecond)
		}
		c.send(http.MethodGet, "/v1/testers", "")
	}
}

// parallel sends n identical requests at once, each on a connection of its
// own, as n workers of an application would, each with its connection open
// already.
func (c *sdk) parallel(n int, method, path string) {
	c.t.Helper()
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for range n {
		transport := &http.Transport{}
		c.t.Cleanup(transport.CloseIdleConnections)
		// Opened with a request of no account, which no trace keeps.
		healthz, err := http.NewRequest(http.MethodGet, c.base+"/healthz", nil)
		if err != nil {
			c.t.Fatal(err)
		}
		warm, err := transport.RoundTrip(healthz)
		if err != nil {
			c.t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, warm.Body)
		warm.Body.Close()
		go func() {
			defer done.Done()
			req, err := http.NewRequest(method, c.base+path, nil)
			if err != nil {
				panic(err)
			}
			req.Header.Set("Authorization", "Bearer "+c.key)
			ready.Done()
			<-start
			if res, err := transport.RoundTrip(req); err == nil {
				res.Body.Close()
			}
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

// giveUp sends a request and gives up on it once the sandbox has it, as a
// client whose timeout ran out would, then waits until the sandbox has
// seen it go.
func (c *sdk) giveUp(method, path, body string) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	gone := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		gone <- err
	}()
	for range 1000 {
		var page struct{ Items []struct{ Pending bool } }
		c.control(http.MethodGet, "/_sandbox/requests?limit=1", "", &page)
		if len(page.Items) == 1 && page.Items[0].Pending {
			break
		}
	}
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		c.t.Fatalf("the request was not given up: %v", err)
	}
	c.settle()
}

// journalCount is how many GETs of path the journal holds.
func (c *sdk) journalCount(path string) int {
	c.t.Helper()
	var counted struct{ Count int }
	c.control(http.MethodGet, "/_sandbox/requests?method=GET&count=true&path="+path, "", &counted)
	return counted.Count
}

// settle waits until the sandbox has answered or seen given up every
// request of the account, as its journal says.
func (c *sdk) settle() {
	c.t.Helper()
	for range 1000 {
		var page struct{ Items []struct{ Pending bool } }
		c.control(http.MethodGet, "/_sandbox/requests?limit=100", "", &page)
		if !slices.ContainsFunc(page.Items, func(r struct{ Pending bool }) bool { return r.Pending }) {
			return
		}
	}
	c.t.Fatal("a request of the journal stays pending")
}

// TestCatalogueOfClients holds the verdict to every client of the
// catalogue, through real HTTP clients against the assembled sandbox: each
// rule a client must break is broken, with a why and evidence; every other
// rule is held or not exercised, and those it meets are held.
func TestCatalogueOfClients(t *testing.T) {
	servers := map[int]string{}
	base := func(minuteLimit int) string {
		if _, ok := servers[minuteLimit]; !ok {
			servers[minuteLimit] = startSandbox(t, minuteLimit)
		}
		return servers[minuteLimit]
	}
	heldBy, brokenBy := map[string]bool{}, map[string]bool{}
	for i, cl := range catalogue {
		t.Run(cl.name, func(t *testing.T) {
			limit := 0
			if slices.Contains(cl.meets, "CLI-5") || slices.Contains(cl.breaks, "CLI-5") {
				limit = 2
			}
			c := &sdk{t: t, base: base(limit), key: fmt.Sprintf("svc_test_catalogue_%d", i)}
			cl.run(c)
			c.settle()
			v := c.verdict()
			var got []string
			for _, r := range v.Rules {
				if r.Outcome == clientverdict.Broken {
					got = append(got, r.ID)
				}
			}
			if !slices.Equal(got, cl.breaks) {
				t.Fatalf("broken rules %v, want %v:\n%s", got, cl.breaks, broken(v))
			}
			if v.Held != (len(cl.breaks) == 0) {
				t.Errorf("held is %t with %v broken", v.Held, got)
			}
			for _, id := range cl.meets {
				if r := outcome(t, v, id); r.Outcome != clientverdict.Held {
					t.Errorf("%s: %s, want held", id, r.Outcome)
				}
				heldBy[id] = true
			}
			for _, id := range cl.breaks {
				r := outcome(t, v, id)
				if r.BrokenTimes != len(r.Breaks) && len(r.Breaks) < clientverdict.MaxBreaksShown {
					t.Errorf("%s: broken %d times, %d breaks shown", id, r.BrokenTimes, len(r.Breaks))
				}
				for _, b := range r.Breaks {
					if b.Why == "" || len(b.Requests)+len(b.Deliveries) == 0 {
						t.Errorf("%s: a break without a why or evidence: %+v", id, b)
					}
				}
				brokenBy[id] = true
			}
			if cl.why != "" {
				if why := outcome(t, v, cl.breaks[0]).Breaks[0].Why; !strings.Contains(why, cl.why) {
					t.Errorf("%s's why %q does not say %q", cl.breaks[0], why, cl.why)
				}
			}
		})
	}
	for _, r := range docs.ClientRules() {
		if !heldBy[r.ID] || !brokenBy[r.ID] {
			t.Errorf("%s: the catalogue has a client that holds it %t, one that breaks it %t", r.ID, heldBy[r.ID], brokenBy[r.ID])
		}
	}
}
