package attack

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// faultMemoryBar is the most RSS that keys' plans and journals may add to a
// sandbox run with -memory-budget 64MiB: one and a half times the budget.
const faultMemoryBar = 96 << 20

// largestFault is a fault as large as the documented bounds of its fields
// allow: a 16 KiB body and 16 headers of 128-byte names and 1 KiB values.
// i makes its strings differ from other keys'.
func largestFault(i int) string {
	headers := map[string]string{}
	for h := range 16 {
		name := fmt.Sprintf("X-%03d-%s", h, strings.Repeat("n", 122))
		headers[name] = fmt.Sprintf("%010d", i) + strings.Repeat("v", 1014)
	}
	fault, _ := json.Marshal(map[string]any{
		"path": "/v1/testers", "status": 500, "count": 1,
		"body": fmt.Sprintf("%010d", i) + strings.Repeat("b", 16<<10-10), "headers": headers,
	})
	return string(fault)
}

// attackFaultMemory has many keys each plan the largest faults, have
// requests hit them so that the journal keeps them, then plan until the
// sandbox refuses; then reads every journal, 8 at a time, while the
// sandbox's RSS is sampled.
func attackFaultMemory(bin string, a Sizes, out io.Writer) (bool, error) {
	sb, err := harness.StartSandboxLogging(bin, nil, nil, "-memory-budget", "64MiB")
	if err != nil {
		return false, err
	}
	defer sb.Stop()
	pid := sb.Cmd.Process.Pid
	before, err := harness.RSS(pid)
	if err != nil {
		return false, err
	}
	peakRSS := harness.PeakRSS(pid)
	defer peakRSS()
	const workers, hits = 8, 16
	client := harness.NewClient(workers)
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	plans, requests, journals := newOutcome(), newOutcome(), newOutcome()
	count := func(o *outcome, got answer, err error) {
		mu.Lock()
		defer mu.Unlock()
		o.add(got, err)
	}
	keyOf := func(k int) string { return fmt.Sprintf("svc_test_fault-memory-%04d", k) }
	began := time.Now()
	inParallel(a.faultKeys, workers, func(k int) {
		key, fault := keyOf(k), largestFault(k)
		plan := harness.Request{Method: "POST", Target: "/_sandbox/faults", Body: fault}
		for range hits {
			got, err := ask(client, sb.Base, key, plan)
			count(plans, got, err)
			got, err = ask(client, sb.Base, key, harness.Request{Method: "GET", Target: "/v1/testers"})
			count(requests, got, err)
		}
		// As many as the key may plan; the last is refused.
		for range 32 {
			got, err := ask(client, sb.Base, key, plan)
			count(plans, got, err)
			if err != nil || got.status != http.StatusOK {
				break
			}
		}
	})
	planned := time.Since(began)
	inParallel(a.faultKeys, workers, func(k int) {
		got, err := ask(client, sb.Base, keyOf(k), harness.Request{Method: "GET", Target: "/_sandbox/requests"})
		count(journals, got, err)
	})
	peak := peakRSS()
	rise := peak - before
	fmt.Fprintf(out, "-memory-budget 64MiB; %d keys, %d at a time, each plans the largest fault (a 16 KiB body, 16 headers of 128-byte names and 1 KiB values) and has a request hit it, %d times, then plans until refused; in %v\n",
		a.faultKeys, workers, hits, planned.Round(time.Millisecond))
	fmt.Fprintf(out, "plans: %s\nrequests: %s\njournal reads, %d at a time: %s; the largest %d bytes\n", plans.summary(), requests.summary(), workers, journals.summary(), journals.largest)
	fmt.Fprintf(out, "sandbox RSS %s -> peak %s (%+.1f MiB); bar: at most %d MiB\n", harness.MiB(before), harness.MiB(peak), float64(rise)/(1<<20), faultMemoryBar>>20)
	return rise <= faultMemoryBar, nil
}
