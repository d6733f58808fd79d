package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

const benchKey = "svc_test_loadbench_0123456789"

type request struct {
	method, target, body string
}

func (r request) line() string { return r.method + " " + r.target }

const createBody = `{"name":"Load","platform":"android","testersRequired":3,"rewardPerBug":0.5}`

// workloads are the request sequences each connection repeats.
var workloads = map[string][]request{
	"get":    {{"GET", "/v1/campaigns/cmp_000001", ""}},
	"list":   {{"GET", "/v1/campaigns?limit=20", ""}},
	"create": {{"POST", "/v1/campaigns", createBody}},
	// Reads whose cost must not grow with the account: run them with
	// -seed-bugs, where no seeded bug is critical.
	"analytics": {{"GET", "/v1/analytics", ""}},
	"nomatch":   {{"GET", "/v1/bugs?severity=critical", ""}},
	// Mostly reads, as SDK test suites make, with one create in ten.
	"mix": {
		{"GET", "/v1/campaigns?limit=20", ""},
		{"GET", "/v1/campaigns/cmp_000001", ""},
		{"GET", "/v1/bugs?status=new", ""},
		{"GET", "/v1/campaigns?limit=20", ""},
		{"POST", "/v1/campaigns", createBody},
		{"GET", "/v1/campaigns/cmp_000003", ""},
		{"GET", "/v1/bugs?status=new", ""},
		{"GET", "/v1/campaigns?limit=20", ""},
		{"GET", "/v1/campaigns/cmp_000001", ""},
		{"GET", "/v1/testers", ""},
	},
}

// server is a child process serving on a loopback port.
type server struct {
	cmd  *exec.Cmd
	base string
}

// startBaseline re-executes this binary as the baseline server.
func startBaseline(replay string) (*server, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, serveCommand, "baseline", "-replay", replay)
	cmd.Stderr = os.Stderr
	port, err := startAnnouncing(cmd)
	if err != nil {
		return nil, fmt.Errorf("the baseline did not say its port: %w", err)
	}
	return &server{cmd: cmd, base: "http://127.0.0.1:" + port}, nil
}

// buildSandbox builds cmd/sandbox into a temporary directory, so that what is
// measured is the real binary with its real server settings; cleanup removes
// the directory.
func buildSandbox() (bin string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "loadbench")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	bin = filepath.Join(dir, "sandbox")
	build := exec.Command("go", "build", "-o", bin, "github.com/testcampaign/kit/cmd/sandbox")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("build the sandbox: %w", err)
	}
	return bin, cleanup, nil
}

// unlimited are rate limits no load here reaches: the benchmark measures
// serving, not refusing. Every load comes from one address, and the memory
// run opens thousands of accounts, so the client budgets are off too.
var unlimited = []string{
	"-rate-limit-minute", "2000000000", "-rate-limit-hour", "2000000000", "-rate-limit-day", "2000000000",
	"-control-limit-minute", "2000000000", "-client-limit-minute", "0", "-client-new-accounts-minute", "0",
}

// startSandbox runs the sandbox binary on a free loopback port without rate
// limits, and drops its log.
func startSandbox(bin string, env []string, flags ...string) (*server, error) {
	return startSandboxLogging(bin, env, io.Discard, append(slices.Clone(unlimited), flags...)...)
}

// stop asks the server to shut down, as an operator would, so that it
// writes what it writes at exit (a CPU profile); it kills it if it has not
// stopped within stopGrace.
func (s *server) stop() {
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		_ = s.cmd.Process.Kill()
	}
	timer := time.AfterFunc(stopGrace, func() { _ = s.cmd.Process.Kill() })
	defer timer.Stop()
	_ = s.cmd.Wait()
}

// stopGrace is longer than the sandbox's own shutdown grace period.
const stopGrace = 15 * time.Second

func newClient(connections int) *http.Client {
	return &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: connections, MaxConnsPerHost: connections},
	}
}

func send(client *http.Client, base, key string, r request) (*http.Response, []byte, error) {
	req, err := newRequest(base, key, r)
	if err != nil {
		return nil, nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("%.200s: status %d: %.200s", r.line(), res.StatusCode, raw)
	}
	return res, raw, err
}

// record asks the sandbox once for each request of every workload and keeps
// what it answered, for the baseline to replay.
func record(base string) (map[string]recorded, error) {
	client := newClient(1)
	responses := map[string]recorded{}
	for _, requests := range workloads {
		for _, r := range requests {
			res, raw, err := send(client, base, benchKey, r)
			if err != nil {
				return nil, err
			}
			header := http.Header{}
			for _, name := range []string{"Content-Type", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"} {
				header[name] = res.Header.Values(name)
			}
			responses[r.line()] = recorded{Header: header, Body: raw}
		}
	}
	return responses, nil
}

// result is one round against one server.
type result struct {
	perSecond float64
	p50, p99  time.Duration
	errors    int
}

// load sends the workload from connections workers for d and measures it.
func load(base string, requests []request, connections int, d time.Duration) result {
	client := newClient(connections)
	deadline := time.Now().Add(d)
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      int
		wg        sync.WaitGroup
	)
	start := time.Now()
	for w := range connections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			failed := 0
			for i := w; time.Now().Before(deadline); i++ {
				began := time.Now()
				if _, _, err := send(client, base, benchKey, requests[i%len(requests)]); err != nil {
					failed++
					continue
				}
				mine = append(mine, time.Since(began))
			}
			mu.Lock()
			defer mu.Unlock()
			latencies = append(latencies, mine...)
			errs += failed
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	s := spreadOf(latencies)
	return result{perSecond: float64(s.n) / elapsed.Seconds(), p50: s.p50, p99: s.p99, errors: errs}
}

func median(results []result) result {
	slices.SortFunc(results, func(a, b result) int { return cmp.Compare(a.perSecond, b.perSecond) })
	return results[len(results)/2]
}

func runThroughput(opts options, out io.Writer) error {
	bin, cleanup, err := buildSandbox()
	if err != nil {
		return err
	}
	defer cleanup()
	flags := []string{"-log-format", "text"}
	if opts.cpuProfile != "" {
		flags = append(flags, "-cpuprofile", opts.cpuProfile)
	}
	if opts.seedBugs > 0 {
		dir := filepath.Join(filepath.Dir(bin), "fixtures")
		if err := writeFixtures(dir, opts.seedBugs); err != nil {
			return err
		}
		flags = append(flags, "-fixtures", dir, "-max-records", fmt.Sprint(2*opts.seedBugs))
	}
	began := time.Now()
	sb, err := startSandbox(bin, memLimitEnv(opts), flags...)
	if err != nil {
		return err
	}
	defer sb.stop()
	if opts.seedBugs > 0 {
		// The template is seeded before the server listens.
		fmt.Fprintf(out, "loadbench: the sandbox loaded %d seeded bugs and listened after %s\n", opts.seedBugs, time.Since(began).Round(time.Millisecond))
	}
	responses, err := record(sb.base)
	if err != nil {
		return err
	}
	replay := filepath.Join(filepath.Dir(bin), "replay.json")
	raw, err := json.Marshal(responses)
	if err != nil {
		return err
	}
	if err := os.WriteFile(replay, raw, 0o600); err != nil {
		return err
	}
	bl, err := startBaseline(replay)
	if err != nil {
		return err
	}
	defer bl.stop()

	fmt.Fprintf(out, "loadbench: %d connections, %d rounds of %s per server, alternating; medians\n\n", opts.connections, opts.rounds, opts.duration)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tbaseline req/s\tsandbox req/s\tratio\tbaseline p50\tsandbox p50\tbaseline p99\tsandbox p99\tp99 ratio\terrors\t")
	for _, name := range strings.Split(opts.workloads, ",") {
		requests, ok := workloads[name]
		if !ok {
			return fmt.Errorf("unknown workload %q", name)
		}
		var base, sand []result
		for range opts.rounds {
			base = append(base, load(bl.base, requests, opts.connections, opts.duration))
			sand = append(sand, load(sb.base, requests, opts.connections, opts.duration))
		}
		b, s := median(base), median(sand)
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f×\t%s\t%s\t%s\t%s\t%.1f×\t%d\t\n", name, b.perSecond, s.perSecond, s.perSecond/b.perSecond,
			round(b.p50), round(s.p50), round(b.p99), round(s.p99), float64(s.p99)/float64(max(b.p99, 1)), b.errors+s.errors)
	}
	return tw.Flush()
}

func memLimitEnv(opts options) []string {
	if opts.gomemlimit == "" {
		return nil
	}
	return []string{"GOMEMLIMIT=" + opts.gomemlimit}
}

func round(d time.Duration) time.Duration {
	return d.Round(10 * time.Microsecond)
}

// rss is the resident memory of a process, from /proc.
func rss(pid int) (int64, error) {
	rest, err := procLine(pid, "status", "VmRSS:")
	if err != nil {
		return 0, err
	}
	var kb int64
	_, err = fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb)
	return kb << 10, err
}

func runMemory(opts options, out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tRSS before\tRSS after\tadded\tper item\t")
	steps := []struct {
		name  string
		items int
		drive func(base string) error
	}{
		{fmt.Sprintf("%d creates, one key", opts.creates), opts.creates, func(base string) error {
			return drive(base, opts.connections, opts.creates, func(i int) (string, request) {
				return benchKey, request{"POST", "/v1/campaigns", createBody}
			})
		}},
		{fmt.Sprintf("%d campaigns and %d bugs, one key", opts.records, opts.records), 2 * opts.records, func(base string) error {
			return drive(base, opts.connections, 2*opts.records, func(i int) (string, request) {
				if i%2 == 0 {
					return benchKey, request{"POST", "/v1/campaigns", createBody}
				}
				return benchKey, request{"POST", "/_sandbox/bugs", `{"campaignId":"cmp_000001","title":"Crash on login","description":"Tap login twice quickly.","severity":"high"}`}
			})
		}},
		{fmt.Sprintf("%d fresh keys, one read each", opts.freshKeys), opts.freshKeys, func(base string) error {
			return drive(base, opts.connections, opts.freshKeys, func(i int) (string, request) {
				return fmt.Sprintf("svc_test_fresh_%08d", i), request{"GET", "/v1/campaigns/cmp_000001", ""}
			})
		}},
	}
	bin, cleanup, err := buildSandbox()
	if err != nil {
		return err
	}
	defer cleanup()
	for _, step := range steps {
		if step.items == 0 {
			continue
		}
		// Room for a million records on top of the seed.
		sb, err := startSandbox(bin, memLimitEnv(opts), "-max-records", "100000000")
		if err != nil {
			return err
		}
		// One request first, so the baseline includes a warm server.
		if _, _, err := send(newClient(1), sb.base, benchKey, request{"GET", "/v1/testers", ""}); err != nil {
			sb.stop()
			return err
		}
		before, _ := rss(sb.cmd.Process.Pid)
		if err := step.drive(sb.base); err != nil {
			sb.stop()
			return err
		}
		after, err := rss(sb.cmd.Process.Pid)
		sb.stop()
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d B\t\n", step.name, mib(before), mib(after), mib(after-before), (after-before)/int64(step.items))
	}
	return tw.Flush()
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// drive sends n requests from connections workers; request i uses the key
// and request that pick returns.
func drive(base string, connections, n int, pick func(i int) (string, request)) error {
	client := newClient(connections)
	next := make(chan int)
	errs := make(chan error, connections)
	var wg sync.WaitGroup
	for range connections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				key, r := pick(i)
				if _, _, err := send(client, base, key, r); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for i := range n {
		select {
		case next <- i:
		case err = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	return err
}
