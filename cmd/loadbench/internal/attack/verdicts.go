package attack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// Sizes of the verdicts attack.
const (
	// verdictKeys keys fill their traces, each with traceFill requests, as
	// full as a trace gets.
	verdictKeys = 10
	traceFill   = 10_000
	// controlBudget is each key's /_sandbox requests a minute, the
	// sandbox's default, which the keys ask at.
	controlBudget = 600
	// verdictBar is how many times the bystander's median under the
	// verdicts may be its median under an equal flood of GET
	// /_sandbox/clock.
	verdictBar = 3
)

// attackVerdicts has ten keys fill their traces with 10,000 requests each
// that break client rules, several at a time, and then ask for their
// verdicts at their control budget, while a bystander key reads; an equal
// flood of GET /_sandbox/clock, the cheapest control, from the same keys is
// the baseline. Bar: the bystander's median under the verdicts is within 3
// times its median under the clock flood.
func attackVerdicts(bin string, a Sizes, out io.Writer) (bool, error) {
	sb, err := harness.StartSandboxLogging(bin, nil, nil,
		"-rate-limit-minute", "2000000000", "-rate-limit-hour", "2000000000", "-rate-limit-day", "2000000000",
		"-client-limit-minute", "0", "-client-new-accounts-minute", "0")
	if err != nil {
		return false, err
	}
	defer sb.Stop()
	keys := make([]string, verdictKeys)
	for k := range keys {
		keys[k] = fmt.Sprintf("svc_test_hostile-verdict-%04d", k)
		for _, fault := range []string{`{"path":"/v1/testers","status":500,"count":1000}`, `{"method":"POST","path":"/v1/campaigns","network":"malformed","count":1000}`} {
			for range 2 {
				if err := planFault(sb.Base, keys[k], fault); err != nil {
					return false, err
				}
			}
		}
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	began := time.Now()
	filled := newOutcome()
	var mu sync.Mutex
	inParallel(verdictKeys*traceFill, 16, func(i int) {
		req, err := hostileRequest(sb.Base, keys[i%verdictKeys], i/verdictKeys)
		if err != nil {
			panic(err)
		}
		got, err := askRequest(client, req)
		mu.Lock()
		filled.add(got, err)
		mu.Unlock()
	})
	fmt.Fprintf(out, "%d keys sent %d requests each that break client rules in %.1f s: %s\n", verdictKeys, traceFill, time.Since(began).Seconds(), filled.summary())
	phase := a.verdictPhase
	if phase == 0 {
		phase = 20 * time.Second
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(out, "each key asks at its control budget, %d a minute, for %s; a bystander key reads GET /v1/testers one at a time meanwhile\n", controlBudget, phase)
	fmt.Fprintln(tw, "the keys ask\tanswers\tbystander reads\tp50\tp99\tmax\t")
	spreads := map[string]harness.Spread{}
	for _, target := range []string{"/_sandbox/clock", "/_sandbox/verdict"} {
		answers, bystander := floodControl(sb.Base, keys, target, phase)
		spreads[target] = bystander
		fmt.Fprintf(tw, "GET %s\t%s\t%s\t\n", target, answers.summary(), bystander)
	}
	if err := tw.Flush(); err != nil {
		return false, err
	}
	clock, verdict := spreads["/_sandbox/clock"], spreads["/_sandbox/verdict"]
	fmt.Fprintf(out, "bar: the bystander's p50 under the verdicts (%s) within %d times its p50 under the clock flood (%s)\n", harness.MS(verdict.P50), verdictBar, harness.MS(clock.P50))
	return verdict.N > 0 && clock.N > 0 && verdict.P50 <= verdictBar*clock.P50, nil
}

// hostileRequest is request n of a key that breaks as many client rules as
// it can: its key in the query under a misspelt scheme, a 404 sent again at
// once, a body of the wrong type, failures retried at once past any count,
// a POST whose answer was not JSON sent again.
func hostileRequest(base, key string, n int) (*http.Request, error) {
	var r harness.Request
	switch n % 5 {
	case 0:
		r = harness.Request{Method: "GET", Target: "/v1/campaigns/cmp_999999?api_key=" + key}
	case 1:
		r = harness.Request{Method: "POST", Target: "/v1/campaigns", Body: fmt.Sprintf(`{"name":"%d"}`, n/10)}
	case 2:
		r = harness.Request{Method: "GET", Target: "/v1/testers"}
	default:
		r = harness.Request{Method: "POST", Target: "/v1/campaigns", Body: `{"name":"v","platform":"ios","testersRequired":1,"rewardPerBug":1}`}
	}
	req, err := harness.NewRequest(base, key, r)
	if err != nil {
		return nil, err
	}
	switch n % 5 {
	case 0:
		req.Header.Set("Authorization", "bearer "+key)
	case 1:
		req.Header.Set("Content-Type", "text/plain")
	}
	return req, nil
}

// floodControl has every key ask GET target at its control budget for the
// phase, while a bystander key reads GET /v1/testers one request after
// another, and returns the keys' answers and the bystander's latencies.
func floodControl(base string, keys []string, target string, phase time.Duration) (*outcome, harness.Spread) {
	ctx, cancel := context.WithTimeout(context.Background(), phase)
	defer cancel()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		answers = newOutcome()
	)
	every := time.Minute / controlBudget
	for _, key := range keys {
		wg.Go(func() {
			client := &http.Client{Timeout: 10 * time.Second}
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				got, err := ask(client, base, key, harness.Request{Method: "GET", Target: target})
				mu.Lock()
				answers.add(got, err)
				mu.Unlock()
			}
		})
	}
	client := &http.Client{Timeout: 10 * time.Second}
	bystander := fmt.Sprintf("svc_test_verdict-bystander-%d", len(target))
	var latencies []time.Duration
	for ctx.Err() == nil {
		start := time.Now()
		got, err := ask(client, base, bystander, harness.Request{Method: "GET", Target: "/v1/testers"})
		if err == nil && got.status == http.StatusOK {
			latencies = append(latencies, time.Since(start))
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	wg.Wait()
	return answers, harness.SpreadOf(latencies)
}
