package attack

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// Client addresses of the key flood: the flood comes from the first, the
// tenant it must not hurt from the second. Both are loopback.
const (
	floodAddress  = "127.0.0.1"
	tenantAddress = "127.0.0.2"
)

// clientFrom is a client whose connections leave from the loopback address
// ip, so that the sandbox counts it as a client of its own.
func clientFrom(ip string, connections int) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: connections, MaxConnsPerHost: connections},
	}
}

// tenantCheck is one look of the tenant at all its accounts.
type tenantCheck struct {
	kept      int
	latencies []time.Duration
}

// keptAccounts are the accounts of the tenant, each holding a campaign it
// created: while the campaign is there, the account was not evicted.
type keptAccounts struct {
	client    *http.Client
	base      string
	campaigns map[string]string
}

func openKeptAccounts(client *http.Client, base string, n int) (*keptAccounts, error) {
	k := &keptAccounts{client: client, base: base, campaigns: map[string]string{}}
	for i := range n {
		key := fmt.Sprintf("svc_test_tenant_%03d_kept", i)
		_, raw, err := harness.Send(client, base, key, harness.Request{Method: "POST", Target: "/v1/campaigns", Body: fmt.Sprintf(`{"name":"kept-%d","platform":"web","testersRequired":1,"rewardPerBug":1}`, i)})
		if err != nil {
			return nil, err
		}
		var created struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &created); err != nil || created.Data.ID == "" {
			return nil, fmt.Errorf("create a campaign for %s: %.200s", key, raw)
		}
		k.campaigns[key] = created.Data.ID
	}
	return k, nil
}

// check reads every account's campaign.
func (k *keptAccounts) check() tenantCheck {
	var c tenantCheck
	for key, id := range k.campaigns {
		began := time.Now()
		got, err := ask(k.client, k.base, key, harness.Request{Method: "GET", Target: "/v1/campaigns/" + id})
		c.latencies = append(c.latencies, time.Since(began))
		if err == nil && got.status == http.StatusOK {
			c.kept++
		}
	}
	return c
}

// checks sums up several checks: the fewest accounts any of them found.
func checksRow(name string, checks []tenantCheck, owned int) string {
	fewest := owned
	var latencies []time.Duration
	for _, c := range checks {
		fewest = min(fewest, c.kept)
		latencies = append(latencies, c.latencies...)
	}
	return fmt.Sprintf("%s\t%d\t%d / %d\t%s\t", name, len(checks), fewest, owned, harness.SpreadOf(latencies))
}

// attackKeyFlood floods the sandbox with fresh keys from one client while a
// second client checks its own accounts every few seconds.
func attackKeyFlood(bin string, a Sizes, out io.Writer) (bool, error) {
	sb, err := harness.StartSandboxLogging(bin, nil, nil)
	if err != nil {
		return false, err
	}
	defer sb.Stop()
	tenantClient := clientFrom(tenantAddress, 4)
	tenant, err := openKeptAccounts(tenantClient, sb.Base, a.tenantAccounts)
	if err != nil {
		return false, fmt.Errorf("the tenant on %s: %w", tenantAddress, err)
	}
	alone := []tenantCheck{tenant.check()}

	var (
		during  []tenantCheck
		stop    = make(chan struct{})
		checked = make(chan struct{})
	)
	go func() {
		defer close(checked)
		tick := time.NewTicker(a.checkEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				during = append(during, tenant.check())
			}
		}
	}()
	began := time.Now()
	answers := flood(clientFrom(floodAddress, a.floodWorkers), sb.Base, a.floodKeys, a.floodWorkers)
	took := time.Since(began)
	close(stop)
	<-checked
	after := []tenantCheck{tenant.check()}
	_, health, err := harness.Send(tenantClient, sb.Base, "", harness.Request{Method: "GET", Target: "/healthz"})
	if err != nil {
		return false, err
	}
	var held struct {
		Data struct {
			Accounts int `json:"accounts"`
		} `json:"data"`
	}
	if err := json.Unmarshal(health, &held); err != nil {
		return false, fmt.Errorf("read /healthz: %w", err)
	}

	fmt.Fprintf(out, "flood: %d fresh keys from %s, %d at a time, in %s (%.0f/s): %s\n", a.floodKeys, floodAddress, a.floodWorkers,
		took.Round(time.Millisecond), float64(a.floodKeys)/took.Seconds(), answers.summary())
	fmt.Fprintf(out, "the other client, %s: %d accounts, each holding a campaign it created, checked every %v; %d accounts held at the end; bar: every check finds every campaign\n",
		tenantAddress, a.tenantAccounts, a.checkEvery, held.Data.Accounts)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tchecks\taccounts kept (fewest)\treads\tp50\tp99\tmax\t")
	fmt.Fprintln(tw, checksRow("before the flood (baseline)", alone, a.tenantAccounts))
	fmt.Fprintln(tw, checksRow("during the flood", during, a.tenantAccounts))
	fmt.Fprintln(tw, checksRow("after the flood", after, a.tenantAccounts))
	if err := tw.Flush(); err != nil {
		return false, err
	}
	kept := true
	for _, c := range slices.Concat(alone, during, after) {
		kept = kept && c.kept == a.tenantAccounts
	}
	return kept, nil
}

// flood reads one campaign with n fresh keys from workers at a time, and
// counts the answers by label, and for a 429 by the limit it names too.
func flood(client *http.Client, base string, n, workers int) *outcome {
	var mu sync.Mutex
	answers := newOutcome()
	inParallel(n, workers, func(i int) {
		got, err := ask(client, base, fmt.Sprintf("svc_test_flood_%08d", i), harness.GetCampaign)
		mu.Lock()
		defer mu.Unlock()
		// A refusal's X-RateLimit-Limit tells which budget it was.
		if err == nil && got.status == http.StatusTooManyRequests {
			answers.addAs(fmt.Sprintf("%s (limit %s)", got.label(), got.header.Get("X-RateLimit-Limit")), got)
			return
		}
		answers.add(got, err)
	})
	return answers
}

// randomKey is a test key no one has used.
func randomKey(name string) string {
	return "svc_test_" + name + "_" + strings.ToLower(rand.Text())
}

// attackKeyPath pastes keys into paths, queries, bodies and headers, and looks for
// them whole in every answer and in the sandbox's log.
func attackKeyPath(bin string, _ Sizes, out io.Writer) (bool, error) {
	logs := newLogCapture()
	sb, err := harness.StartSandboxLogging(bin, nil, logs)
	if err != nil {
		return false, err
	}
	stopped := false
	defer func() {
		if !stopped {
			sb.Stop()
		}
	}()
	own, pasted := randomKey("own"), randomKey("pasted")
	live := "svc_live_" + strings.ToLower(rand.Text())
	attempts := []struct {
		where, key string
		r          harness.Request
		// header, if set, is sent too, replacing what newRequest set.
		header http.Header
	}{
		{"another key as a campaign id", own, harness.Request{Method: "GET", Target: "/v1/campaigns/" + pasted}, nil},
		{"its own key as a campaign id", own, harness.Request{Method: "GET", Target: "/v1/campaigns/" + own}, nil},
		{"a key as a route", own, harness.Request{Method: "GET", Target: "/v1/" + pasted + "/x"}, nil},
		{"a key as a bug id", own, harness.Request{Method: "PATCH", Target: "/v1/bugs/" + pasted, Body: `{"status":"confirmed"}`}, nil},
		{"a key as a filter value", own, harness.Request{Method: "GET", Target: "/v1/campaigns?status=" + pasted}, nil},
		{"a key as a campaign filter", own, harness.Request{Method: "GET", Target: "/v1/bugs?campaignId=" + pasted}, nil},
		{"a key as a query name", own, harness.Request{Method: "GET", Target: "/v1/campaigns?" + pasted + "=1"}, nil},
		{"a key as a page cursor", own, harness.Request{Method: "GET", Target: "/v1/campaigns?cursor=" + pasted}, nil},
		{"a key as an enum value in a body", own, harness.Request{Method: "POST", Target: "/v1/campaigns", Body: `{"name":"K","platform":"` + pasted + `","testersRequired":1,"rewardPerBug":1}`}, nil},
		{"a key as a repeated field name", own, harness.Request{Method: "POST", Target: "/v1/campaigns", Body: `{"` + pasted + `":1,"` + pasted + `":2}`}, nil},
		{"a key as a webhook URL", own, harness.Request{Method: "POST", Target: "/v1/webhooks", Body: `{"url":"` + pasted + `","events":["*"]}`}, nil},
		{"a key as a fault route", own, harness.Request{Method: "POST", Target: "/_sandbox/faults", Body: `{"route":"` + pasted + `","status":500}`}, nil},
		{"a malformed key", pasted + "!", harness.Request{Method: "GET", Target: "/v1/campaigns"}, nil},
		{"a live key", live, harness.Request{Method: "GET", Target: "/v1/campaigns"}, nil},
		{"a key as the content type", own, harness.Request{Method: "POST", Target: "/v1/campaigns", Body: `{}`}, http.Header{"Content-Type": {"application/" + pasted}}},
		{"a key in another scheme", "", harness.Request{Method: "GET", Target: "/v1/campaigns"}, http.Header{"Authorization": {"Basic " + pasted}}},
		{"a key with a second word", "", harness.Request{Method: "GET", Target: "/v1/campaigns"}, http.Header{"Authorization": {"Bearer " + pasted + " " + own}}},
		{"a key as the forwarded address", own, harness.Request{Method: "GET", Target: "/v1/campaigns"}, http.Header{"X-Forwarded-For": {pasted}}},
		{"a key as the user agent", own, harness.Request{Method: "GET", Target: "/v1/campaigns"}, http.Header{"User-Agent": {pasted}}},
		{"the request journal", own, harness.Request{Method: "GET", Target: "/_sandbox/requests"}, nil},
	}
	client := harness.NewClient(1)
	secrets := []string{own, pasted, live}
	fmt.Fprintln(out, "keys pasted into paths, queries, bodies and headers; bar: no key appears whole in any answer (headers and body) or log line")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "request\tanswer\tbytes\tfull keys\thints\t")
	held := true
	for _, attempt := range attempts {
		req, err := harness.NewRequest(sb.Base, attempt.key, attempt.r)
		if err != nil {
			return false, err
		}
		for name, values := range attempt.header {
			req.Header[name] = values
		}
		got, err := askRequest(client, req)
		if err != nil {
			return false, err
		}
		var header strings.Builder
		_ = got.header.Write(&header)
		full, hints := keysIn(header.String()+string(got.raw), secrets)
		held = held && full == 0
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t\n", attempt.where, got.label(), got.size, full, hints)
	}
	if err := tw.Flush(); err != nil {
		return false, err
	}
	sb.Stop()
	stopped = true
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	leaking, hinted := 0, 0
	for _, line := range lines {
		full, hints := keysIn(line, secrets)
		if full > 0 {
			leaking++
			fmt.Fprintf(out, "log line with a key: %.300s\n", line)
		}
		if hints > 0 {
			hinted++
		}
	}
	fmt.Fprintf(out, "sandbox log: %d lines, %d with a key's hint, %d with a whole key\n", len(lines), hinted, leaking)
	return held && leaking == 0, nil
}

// keysIn counts the keys found whole in text, and the hints (the prefix and
// last four characters) of those keys.
func keysIn(text string, keys []string) (full, hints int) {
	for _, key := range keys {
		full += strings.Count(text, key)
		hints += strings.Count(text, "…"+key[len(key)-4:])
	}
	return full, hints
}
