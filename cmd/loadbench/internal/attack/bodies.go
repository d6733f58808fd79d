package attack

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// Bars of the bodies attack.
const (
	bodiesRSSBar    = 150_000_000
	bodiesTenantBar = 50 * time.Millisecond
)

// adversarialBody is one of the cheap bodies with costly answers.
type adversarialBody struct {
	kind string
	body string
}

// campaignPrefix is a valid campaign create without its closing brace.
const campaignPrefix = `{"name":"Load","platform":"web","testersRequired":1,"rewardPerBug":1`

// adversarialBodies are the four kinds, each size bytes or just
// under.
func adversarialBodies(size int) []adversarialBody {
	var unknown strings.Builder
	unknown.WriteString(campaignPrefix)
	for i := 0; ; i++ {
		field := `,"u` + strconv.Itoa(i) + `":0`
		if unknown.Len()+len(field)+1 > size {
			break
		}
		unknown.WriteString(field)
	}
	unknown.WriteString("}")

	const controlHead, controlTail = `{"name":"Load","platform":"`, `","testersRequired":1,"rewardPerBug":1}`
	control := controlHead + strings.Repeat(`\u0001`, (size-len(controlHead)-len(controlTail))/len(`\u0001`)) + controlTail

	const nestHead, nestTail = `{"name":`, `}`
	depth := (size - len(nestHead) - len(nestTail)) / 2
	nested := nestHead + strings.Repeat("[", depth) + strings.Repeat("]", depth) + nestTail

	number := campaignPrefix + strings.Repeat("0", size-len(campaignPrefix)-1) + "}"
	return []adversarialBody{
		{"unknown fields", unknown.String()},
		{"control characters in an echoed field", control},
		{"deep nesting", nested},
		{"a huge number literal", number},
	}
}

// attackBodies sends the adversarial bodies, each from a fresh key, while
// another tenant reads its own account at a steady pace; the tenant reads
// alone first, for the baseline.
func attackBodies(bin string, a Sizes, out io.Writer) (bool, error) {
	sb, err := harness.StartSandboxLogging(bin, nil, nil)
	if err != nil {
		return false, err
	}
	defer sb.Stop()
	pid := sb.Cmd.Process.Pid
	const tenantKey = "svc_test_tenant_beside_bodies"
	if _, _, err := harness.Send(harness.NewClient(1), sb.Base, tenantKey, harness.GetCampaign); err != nil {
		return false, err
	}
	tenant, err := startTenant(sb.Base, tenantKey, a.tenantEvery)
	if err != nil {
		return false, err
	}
	<-time.After(a.tenantAlone)
	tenant.nextPhase()

	before, err := harness.RSS(pid)
	if err != nil {
		return false, err
	}
	// Deferred too, so that an early return does not leave it sampling.
	peakRSS := harness.PeakRSS(pid)
	defer peakRSS()
	began := time.Now()
	kinds := adversarialBodies(a.bodySize)
	outcomes := sendBodies(sb.Base, kinds, a.bodies, a.bodiesAtOnce)
	took := time.Since(began)
	phases, err := tenant.stop()
	if err != nil {
		return false, err
	}
	alone, during := phases[0], phases[1]
	peak := max(before, peakRSS())
	after, _ := harness.RSS(pid)

	fmt.Fprintf(out, "%d bodies of %d KiB, %d at a time, each from a fresh key, took %s\n", a.bodies, a.bodySize>>10, a.bodiesAtOnce, took.Round(time.Millisecond))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "body\tanswers\tlargest answer\t")
	largest, unanswered := 0, 0
	for _, kind := range kinds {
		o := outcomes[kind.kind]
		largest, unanswered = max(largest, o.largest), unanswered+o.unanswered
		fmt.Fprintf(tw, "%s\t%s\t%d B\t\n", kind.kind, o.summary(), o.largest)
	}
	if err := tw.Flush(); err != nil {
		return false, err
	}
	added := peak - before
	fmt.Fprintf(out, "sandbox RSS: %s before, %s at the peak, %s after: %.1f MB added (bar: under %d MB); largest answer %d B (bar: at most %d)\n",
		harness.MiB(before), harness.MiB(peak), harness.MiB(after), float64(added)/1e6, bodiesRSSBar/1_000_000, largest, maxAnswer)
	fmt.Fprintf(out, "another tenant's GET every %v on its own key, from a process of its own; bar: p99 under %v\n", a.tenantEvery, bodiesTenantBar)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tanswered\tp50\tp99\tmax\tfailed\t")
	fmt.Fprintf(tw, "alone (baseline)\t%s\t%d\t\n", harness.SpreadOf(alone.latencies), alone.failed)
	fmt.Fprintf(tw, "during the bodies\t%s\t%d\t\n", harness.SpreadOf(during.latencies), during.failed)
	if err := tw.Flush(); err != nil {
		return false, err
	}
	return added < bodiesRSSBar && largest <= maxAnswer && unanswered == 0 && during.failed == 0 && harness.SpreadOf(during.latencies).P99 < bodiesTenantBar, nil
}

// sendBodies sends n bodies, at most atOnce at a time, body i of the kind
// i modulo the kinds and from key i.
func sendBodies(base string, kinds []adversarialBody, n, atOnce int) map[string]*outcome {
	// A body goes out in one write rather than 256 of the default 4 KiB,
	// so that the senders, in this process, hardly compete with the tenant
	// whose latency is measured.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConnsPerHost: atOnce, MaxConnsPerHost: atOnce, WriteBufferSize: 1 << 20,
	}}
	outcomes := map[string]*outcome{}
	for _, kind := range kinds {
		outcomes[kind.kind] = newOutcome()
	}
	var mu sync.Mutex
	inParallel(n, atOnce, func(i int) {
		kind := kinds[i%len(kinds)]
		got, err := ask(client, base, fmt.Sprintf("svc_test_body_%06d", i), harness.Request{Method: "POST", Target: "/v1/campaigns", Body: kind.body})
		mu.Lock()
		defer mu.Unlock()
		outcomes[kind.kind].add(got, err)
	})
	return outcomes
}

// bigNumberCase is one rewardPerBug literal and what the sandbox must
// answer to it.
type bigNumberCase struct {
	name, literal string
	want          int
}

// bigNumberCPUBar is what one refusal of a huge literal may cost the
// sandbox; reading it whole used to take 2.5 s.
const bigNumberCPUBar = 100 * time.Millisecond

// campaignsNamed counts the campaigns named name that key's account holds,
// among its newest hundred.
func campaignsNamed(client *http.Client, base, key, name string) (int, error) {
	_, raw, err := harness.Send(client, base, key, harness.Request{Method: "GET", Target: "/v1/campaigns?limit=100"})
	if err != nil {
		return 0, err
	}
	var page struct {
		Data struct {
			Items []struct {
				Name string `json:"name"`
			} `json:"items"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return 0, fmt.Errorf("list campaigns: %w: %.200s", err, raw)
	}
	n := 0
	for _, c := range page.Data.Items {
		if c.Name == name {
			n++
		}
	}
	return n, nil
}

// attackBigNumber sends campaigns whose rewardPerBug is a huge literal, and
// measures the sandbox's CPU time per request beside an ordinary reward's.
func attackBigNumber(bin string, a Sizes, out io.Writer) (bool, error) {
	sb, err := harness.StartSandboxLogging(bin, nil, nil)
	if err != nil {
		return false, err
	}
	defer sb.Stop()
	pid := sb.Cmd.Process.Pid
	cases := []bigNumberCase{
		{"an ordinary reward, 2.5 (baseline)", "2.5", http.StatusOK},
		{fmt.Sprintf("%d digits", a.digits), strings.Repeat("9", a.digits), http.StatusBadRequest},
		{fmt.Sprintf("1. and %d zeros", a.zeros), "1." + strings.Repeat("0", a.zeros), http.StatusBadRequest},
	}
	client := harness.NewClient(1)
	fmt.Fprintf(out, "POST /v1/campaigns %d times each, one at a time, one key per literal; bar: 400 with an answer of at most %d B, under %v of CPU each, nothing stored\n",
		a.bigNumbers, maxAnswer, bigNumberCPUBar)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rewardPerBug\tbody\tanswers\tlargest answer\tCPU per request\tvs baseline\tstored\t")
	held := true
	var baseline time.Duration
	for n, c := range cases {
		body := `{"name":"Big","platform":"web","testersRequired":1,"rewardPerBug":` + c.literal + `}`
		key := fmt.Sprintf("svc_test_bignumber_%d", n)
		if _, err := ask(client, sb.Base, key, harness.Request{Method: "GET", Target: "/v1/testers"}); err != nil {
			return false, err
		}
		o := newOutcome()
		spentBefore, err := harness.CPUTime(pid)
		if err != nil {
			return false, err
		}
		for range a.bigNumbers {
			got, err := ask(client, sb.Base, key, harness.Request{Method: "POST", Target: "/v1/campaigns", Body: body})
			if err != nil {
				return false, err
			}
			o.add(got, nil)
			held = held && got.status == c.want && got.size <= maxAnswer
		}
		spent, err := harness.CPUTime(pid)
		if err != nil {
			return false, err
		}
		perRequest := (spent - spentBefore) / time.Duration(a.bigNumbers)
		stored, err := campaignsNamed(client, sb.Base, key, "Big")
		if err != nil {
			return false, err
		}
		if n == 0 {
			baseline = perRequest
		} else {
			held = held && perRequest < bigNumberCPUBar && stored == 0
		}
		fmt.Fprintf(tw, "%s\t%d B\t%s\t%d B\t%s\t%.1f×\t%d\t\n", c.name, len(body), o.summary(), o.largest,
			perRequest.Round(time.Microsecond), float64(perRequest)/float64(max(baseline, 1)), stored)
	}
	return held, tw.Flush()
}
