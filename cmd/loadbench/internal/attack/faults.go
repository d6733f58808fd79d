package attack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// The attacks of a tenant through what a key may plan, keep or hold: delay
// faults at the connection cap, delayed large bodies, long trickles,
// shutdown beside stalled bodies, and a sweep of client addresses.

// planFault plans fault for key, or fails.
func planFault(base, key, fault string) error {
	client := &http.Client{Timeout: 10 * time.Second}
	got, err := ask(client, base, key, harness.Request{Method: "POST", Target: "/_sandbox/faults", Body: fault})
	if err != nil {
		return err
	}
	if got.status != http.StatusOK {
		return fmt.Errorf("plan %s: %d %s", fault, got.status, got.raw)
	}
	return nil
}

// attackDelays has one key plan a 30 s delay on every request and open
// requests until the connection cap is full of them, while a bystander key
// and new clients' /healthz are measured; the hostile key is over its
// limit of 5 a minute, so all but its first answers must be 429s at once.
func attackDelays(bin string, a Sizes, out io.Writer) (bool, error) {
	maxConns := a.maxConns
	if maxConns == 0 {
		maxConns = 50
	}
	sb, err := harness.StartSandboxLogging(bin, nil, nil, "-max-conns", strconv.Itoa(maxConns), "-rate-limit-minute", "5")
	if err != nil {
		return false, err
	}
	defer sb.Stop()
	const hostile, bystander = "svc_test_hostile-delays-0001", "svc_test_bystander-"
	if err := planFault(sb.Base, hostile, `{"rate":1,"delayMs":30000,"count":1000}`); err != nil {
		return false, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg                                           sync.WaitGroup
		atOnce, refused, refusedAtOnce, served, lost atomic.Int32
	)
	held := maxConns + 10
	for range held {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			req, _ := harness.NewRequest(sb.Base, hostile, harness.Request{Method: "GET", Target: "/v1/testers"})
			began := time.Now()
			res, err := client.Do(req.WithContext(ctx))
			if err != nil {
				lost.Add(1)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			quick := time.Since(began) < time.Second
			if quick {
				atOnce.Add(1)
			}
			if res.StatusCode == http.StatusTooManyRequests {
				refused.Add(1)
				if quick {
					refusedAtOnce.Add(1)
				}
			} else {
				served.Add(1)
			}
		})
	}
	// Long enough for the hostile requests to be sent and parked.
	time.Sleep(time.Second)
	probes := a.probes
	health := probeHealthz(sb.Base, probes)
	others := probeKey(sb.Base, bystander, probes)
	answeredAtOnce := atOnce.Load()
	cancel()
	wg.Wait()

	fmt.Fprintf(out, "-max-conns %d -rate-limit-minute 5; one key plans a 30 s delay on every request and sends %d at once, one connection each\n", maxConns, held)
	fmt.Fprintf(out, "hostile key: %d answered within 1 s (%d of them 429, %d served); %d got no answer (parked in the delay, or closed at the cap)\n",
		answeredAtOnce, refused.Load(), served.Load(), lost.Load())
	fmt.Fprintf(out, "new clients, one connection each, 4 at a time; bar: all answered, p99 under %v\n", healthzBar)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "probe\tanswered\tp50\tp99\tmax\t")
	fmt.Fprintf(tw, "GET /healthz\t%s\t\n", health)
	fmt.Fprintf(tw, "bystander keys' GET /v1/testers\t%s\t\n", others)
	if err := tw.Flush(); err != nil {
		return false, err
	}
	fmt.Fprintf(out, "bar: every probe answered, p99 under %v; the hostile key's 429s all within 1 s\n", healthzBar)
	overLimitAtOnce := refused.Load() > 0 && refusedAtOnce.Load() == refused.Load()
	return health.N == probes && others.N == probes && health.P99 < healthzBar && others.P99 < healthzBar && overLimitAtOnce, nil
}

// probeKey asks GET /v1/testers n times, each with a key of its own that
// starts with prefix, on a new connection, and returns the latencies of the
// 200s.
func probeKey(base, prefix string, n int) harness.Spread {
	return probe(base, "/v1/testers", n, func(i int) string { return fmt.Sprintf("%s%06d", prefix, i) })
}

// delayedBodiesBar is the most RSS that one key's delayed large bodies may
// add.
const delayedBodiesBar = 150 << 20

// attackDelayedBodies has one key plan a 30 s delay and send large POSTs,
// many at a time, each given up after a few seconds, while the sandbox's
// RSS is sampled.
func attackDelayedBodies(bin string, a Sizes, out io.Writer) (bool, error) {
	sb, err := harness.StartSandboxLogging(bin, nil, nil)
	if err != nil {
		return false, err
	}
	defer sb.Stop()
	pid := sb.Cmd.Process.Pid
	const key = "svc_test_delayed-bodies-0001"
	// A fault is planned for at most 1000 requests; the next takes over.
	for range (a.delayedBodies + 999) / 1000 {
		if err := planFault(sb.Base, key, `{"delayMs":30000,"count":1000}`); err != nil {
			return false, err
		}
	}
	before, err := harness.RSS(pid)
	if err != nil {
		return false, err
	}
	// Deferred too, so that an early return does not leave it sampling.
	peakRSS := harness.PeakRSS(pid)
	defer peakRSS()
	const wrapper = `{"name":"","platform":"ios","testersRequired":1,"rewardPerBug":1}`
	body := `{"name":"` + strings.Repeat("b", a.bodySize-len(wrapper)) + `","platform":"ios","testersRequired":1,"rewardPerBug":1}`
	var mu sync.Mutex
	answers := newOutcome()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxConnsPerHost: a.bodiesAtOnce, MaxIdleConnsPerHost: a.bodiesAtOnce}}
	began := time.Now()
	inParallel(a.delayedBodies, a.bodiesAtOnce, func(int) {
		got, err := ask(client, sb.Base, key, harness.Request{Method: "POST", Target: "/v1/campaigns", Body: body})
		mu.Lock()
		defer mu.Unlock()
		answers.add(got, err)
	})
	took := time.Since(began)
	peak := peakRSS()
	client.CloseIdleConnections()
	rise := peak - before
	fmt.Fprintf(out, "one key plans a 30 s delay and sends %d POSTs of %d bytes, %d at a time, in %v\n", a.delayedBodies, len(body), a.bodiesAtOnce, took.Round(time.Millisecond))
	fmt.Fprintf(out, "answers, each waited for 5 s at most: %s\n", answers.summary())
	fmt.Fprintf(out, "sandbox RSS %s -> peak %s (%+.1f MiB); bar: under %d MiB\n", harness.MiB(before), harness.MiB(peak), float64(rise)/(1<<20), delayedBodiesBar>>20)
	return rise < delayedBodiesBar, nil
}

// attackTrickle plans a trickle as long as asked and reads the answer
// whole, past the sandbox's 10 s write timeout when it is longer.
func attackTrickle(bin string, a Sizes, out io.Writer) (bool, error) {
	sb, err := harness.StartSandboxLogging(bin, nil, nil)
	if err != nil {
		return false, err
	}
	defer sb.Stop()
	const key = "svc_test_trickle-0001"
	fault := fmt.Sprintf(`{"network":"trickle","trickleMs":%d,"count":1}`, a.trickle.Milliseconds())
	if err := planFault(sb.Base, key, fault); err != nil {
		return false, err
	}
	req, err := harness.NewRequest(sb.Base, key, harness.Request{Method: "GET", Target: "/v1/campaigns?limit=100"})
	if err != nil {
		return false, err
	}
	began := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	read, readErr := io.Copy(io.Discard, res.Body)
	took := time.Since(began)
	whole := readErr == nil && read == res.ContentLength
	fmt.Fprintf(out, "a trickle of %v: %d of %d bytes in %v (%v); bar: the whole body\n", a.trickle, read, res.ContentLength, took.Round(time.Millisecond), readErr)
	return whole, nil
}

// attackStalled opens requests whose bodies stall, then stops the sandbox
// with SIGTERM: it must exit 0 within its grace period.
func attackStalled(bin string, a Sizes, out io.Writer) (bool, error) {
	sb, err := harness.StartSandboxLogging(bin, nil, nil)
	if err != nil {
		return false, err
	}
	defer sb.Stop()
	addr := strings.TrimPrefix(sb.Base, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range a.stalled {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false, err
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /v1/campaigns HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer svc_test_stalled-%04d\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":", addr, i)
	}
	// Long enough for the sandbox to have read every request's headers.
	time.Sleep(500 * time.Millisecond)
	began := time.Now()
	if err := sb.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return false, err
	}
	err = sb.Cmd.Wait()
	took := time.Since(began)
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		return false, err
	}
	fmt.Fprintf(out, "%d requests whose bodies stall, then SIGTERM: exit code %d after %v; bar: 0 within the 10 s grace and a second\n", a.stalled, code, took.Round(time.Millisecond))
	return code == 0 && took < 11*time.Second, nil
}

// attackSweep sends one request from each of a sweep of addresses behind
// -trust-forwarded-for, then spends the last address's whole budget, and
// asks as a client that was not part of it, and from loopback.
func attackSweep(bin string, a Sizes, out io.Writer) (bool, error) {
	sb, err := harness.StartSandboxLogging(bin, nil, nil, "-trust-forwarded-for")
	if err != nil {
		return false, err
	}
	defer sb.Stop()
	// The sandbox's default -client-limit-minute: one more request than
	// this spends the last address's budget.
	const limit = 60_000
	client := harness.NewClient(16)
	defer client.CloseIdleConnections()
	from := func(addr string) (int, error) {
		req, _ := http.NewRequest("GET", sb.Base+"/healthz", nil)
		if addr != "" {
			req.Header.Set("X-Forwarded-For", addr)
		}
		got, err := askRequest(client, req)
		return got.status, err
	}
	began := time.Now()
	var failed atomic.Int32
	inParallel(a.sweepAddrs, 16, func(i int) {
		if _, err := from(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)); err != nil {
			failed.Add(1)
		}
	})
	swept := time.Since(began)
	inParallel(limit+1, 16, func(int) {
		if _, err := from("192.0.2.200"); err != nil {
			failed.Add(1)
		}
	})
	spent, _ := from("192.0.2.200")
	newcomer, err1 := from("198.51.100.7")
	local, err2 := from("")
	if err := errors.Join(err1, err2); err != nil {
		return false, err
	}
	fmt.Fprintf(out, "-trust-forwarded-for: %d addresses swept in %v, then %d requests from one more (%d failed)\n", a.sweepAddrs, swept.Round(time.Millisecond), limit+1, failed.Load())
	fmt.Fprintf(out, "the spent address: %d; a client not in the sweep: %d; /healthz from loopback: %d; bar: 429, 200, 200\n", spent, newcomer, local)
	return spent == http.StatusTooManyRequests && newcomer == http.StatusOK && local == http.StatusOK, nil
}
