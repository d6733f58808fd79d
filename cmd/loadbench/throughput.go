package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// workloads are the request sequences each connection repeats.
var workloads = map[string][]harness.Request{
	"get":    {harness.GetCampaign},
	"list":   {{Method: "GET", Target: "/v1/campaigns?limit=20"}},
	"create": {{Method: "POST", Target: "/v1/campaigns", Body: harness.CreateBody}},
	// Reads whose cost must not grow with the account: run them with
	// -seed-bugs, where no seeded bug is critical.
	"analytics": {{Method: "GET", Target: "/v1/analytics"}},
	"nomatch":   {{Method: "GET", Target: "/v1/bugs?severity=critical"}},
	// Mostly reads, as SDK test suites make, with one create in ten.
	"mix": {
		{Method: "GET", Target: "/v1/campaigns?limit=20"},
		harness.GetCampaign,
		{Method: "GET", Target: "/v1/bugs?status=new"},
		{Method: "GET", Target: "/v1/campaigns?limit=20"},
		{Method: "POST", Target: "/v1/campaigns", Body: harness.CreateBody},
		{Method: "GET", Target: "/v1/campaigns/cmp_000003"},
		{Method: "GET", Target: "/v1/bugs?status=new"},
		{Method: "GET", Target: "/v1/campaigns?limit=20"},
		harness.GetCampaign,
		{Method: "GET", Target: "/v1/testers"},
	},
}

// serverOptions are how the sandbox under measurement is started.
type serverOptions struct {
	seedBugs   int
	cpuProfile string
	gomemlimit string
}

func (o *serverOptions) flags(fset *flag.FlagSet) {
	fset.IntVar(&o.seedBugs, "seed-bugs", 0, "seed every account with this many bugs (none critical) through -fixtures instead of the embedded fixtures")
	fset.StringVar(&o.cpuProfile, "cpuprofile", "", "write the sandbox's CPU profile to this file when it stops")
	fset.StringVar(&o.gomemlimit, "gomemlimit", "", "GOMEMLIMIT for the sandbox process (e.g. 1GiB); empty leaves it unset")
}

type throughputOptions struct {
	serverOptions
	duration             time.Duration
	rounds               int
	connections, threads int
	workloads            string
	wrk                  string
}

func throughputFlags(fset *flag.FlagSet) func([]string, io.Writer) error {
	var o throughputOptions
	o.serverOptions.flags(fset)
	fset.DurationVar(&o.duration, "duration", 8*time.Second, "length of one run of wrk against one server")
	fset.IntVar(&o.rounds, "rounds", 3, "runs per server and workload, alternating; the run with the median rate is reported")
	fset.IntVar(&o.connections, "c", 32, "wrk's keep-alive connections")
	fset.IntVar(&o.threads, "t", 1, "wrk's threads")
	fset.StringVar(&o.workloads, "workloads", "get,list,create,mix", "comma-separated workloads to run, in order: get, list, create, mix, analytics, nomatch")
	fset.StringVar(&o.wrk, "wrk", "wrk", "the wrk binary (Debian: apt-get install wrk)")
	return func(args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		return runThroughput(o, out)
	}
}

// servers are the sandbox and the bare server that replays its answers.
type servers struct {
	sandbox *harness.Server
	bare    *http.Server
	// bareBase is the bare server's URL.
	bareBase string
	// dir holds the sandbox binary and, with -seed-bugs, its fixtures.
	dir     string
	cleanup func()
}

// startServers builds and starts the sandbox, asks it once for each request
// of every workload, and starts the bare server on what it answered.
func startServers(o serverOptions, out io.Writer) (*servers, error) {
	bin, cleanup, err := harness.BuildSandbox()
	if err != nil {
		return nil, err
	}
	s := &servers{dir: filepath.Dir(bin), cleanup: cleanup}
	flags := []string{"-log-format", "text"}
	if o.cpuProfile != "" {
		flags = append(flags, "-cpuprofile", o.cpuProfile)
	}
	if o.seedBugs > 0 {
		dir := filepath.Join(s.dir, "fixtures")
		if err := writeFixtures(dir, o.seedBugs); err != nil {
			s.stop()
			return nil, err
		}
		flags = append(flags, "-fixtures", dir, "-max-records", fmt.Sprint(2*o.seedBugs))
	}
	began := time.Now()
	s.sandbox, err = harness.StartSandbox(bin, memLimitEnv(o.gomemlimit), flags...)
	if err != nil {
		s.stop()
		return nil, err
	}
	if o.seedBugs > 0 {
		// The template is seeded before the server listens.
		fmt.Fprintf(out, "loadbench: the sandbox loaded %d seeded bugs and listened after %s\n", o.seedBugs, time.Since(began).Round(time.Millisecond))
	}
	responses, err := record(s.sandbox.Base)
	if err != nil {
		s.stop()
		return nil, err
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.stop()
		return nil, err
	}
	s.bareBase = "http://" + listener.Addr().String()
	s.bare = &http.Server{Handler: bare(responses)}
	go func() { _ = s.bare.Serve(listener) }()
	return s, nil
}

func (s *servers) stop() {
	if s.bare != nil {
		_ = s.bare.Close()
	}
	if s.sandbox != nil {
		s.sandbox.Stop()
	}
	s.cleanup()
}

// recorded is a response the bare server replays: the sandbox's own bytes.
type recorded struct {
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// record asks the sandbox once for each request of every workload and keeps
// what it answered, for the bare server to replay. The writes go first, so
// that every read is answered as it would be after them.
func record(base string) (map[string]recorded, error) {
	client := harness.NewClient(1)
	responses := map[string]recorded{}
	requests := recordedLines()
	isRead := func(line string) int {
		if requests[line].Method == http.MethodGet {
			return 1
		}
		return 0
	}
	lines := slices.SortedFunc(maps.Keys(requests), func(a, b string) int {
		return cmp.Or(cmp.Compare(isRead(a), isRead(b)), strings.Compare(a, b))
	})
	for _, line := range lines {
		res, raw, err := harness.Send(client, base, harness.BenchKey, requests[line])
		if err != nil {
			return nil, err
		}
		header := http.Header{}
		for _, name := range []string{"Content-Type", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "X-Ratelimit-Scope"} {
			header[name] = res.Header.Values(name)
		}
		responses[line] = recorded{Header: header, Body: raw}
	}
	return responses, nil
}

// bare does what any handler must and nothing more: read the body, then
// write the recorded headers and bytes for the request line.
func bare(responses map[string]recorded) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		res, ok := responses[r.Method+" "+r.RequestURI]
		if !ok {
			http.Error(w, "not recorded", http.StatusNotFound)
			return
		}
		for name, values := range res.Header {
			w.Header()[name] = values
		}
		_, _ = w.Write(res.Body)
	})
}

// wrkScript is the Lua script that makes wrk send a workload's requests
// and print its figures on one line that runWrk reads. A workload of one
// request sets it once, so wrk builds it once; several are cycled through,
// which costs wrk a Lua call per request.
func wrkScript(requests []harness.Request) string {
	var b strings.Builder
	headers := func(r harness.Request) string {
		h := fmt.Sprintf(`{["Authorization"] = %q`, "Bearer "+harness.BenchKey)
		if r.Body != "" {
			h += `, ["Content-Type"] = "application/json"`
		}
		return h + "}"
	}
	body := func(r harness.Request) string {
		if r.Body == "" {
			return "nil"
		}
		return strconv.Quote(r.Body)
	}
	if len(requests) == 1 {
		r := requests[0]
		fmt.Fprintf(&b, "wrk.method = %q\nwrk.path = %q\nwrk.headers = %s\nwrk.body = %s\n", r.Method, r.Target, headers(r), body(r))
	} else {
		// Formatted in init, once wrk knows the Host header.
		b.WriteString("local requests = {}\ninit = function(args)\n")
		for _, r := range requests {
			fmt.Fprintf(&b, "  table.insert(requests, wrk.format(%q, %q, %s, %s))\n", r.Method, r.Target, headers(r), body(r))
		}
		b.WriteString("end\nlocal i = 0\nrequest = function()\n  i = i % #requests + 1\n  return requests[i]\nend\n")
	}
	b.WriteString(`done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("loadbench %d %d %d %d %d\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), e.connect + e.read + e.write + e.timeout + e.status))
end
`)
	return b.String()
}

// wrkRun is one run of wrk against one server.
type wrkRun struct {
	perSecond float64
	p50, p99  time.Duration
	errors    int
	// wrkCPU and serverCPU are the CPU the generator and the server used,
	// in cores: 1 is one core busy the whole run.
	wrkCPU, serverCPU float64
}

// runWrk runs wrk with script against base and reads its figures, and the
// CPU it and the server, process serverPID, used meanwhile.
func runWrk(o throughputOptions, script, base string, serverPID int) (wrkRun, error) {
	cmd := exec.Command(o.wrk, "-t", strconv.Itoa(o.threads), "-c", strconv.Itoa(o.connections),
		"-d", strconv.Itoa(int(o.duration.Seconds()))+"s", "-s", script, base)
	cmd.Stderr = os.Stderr
	serverBefore, err := harness.CPUTime(serverPID)
	if err != nil {
		return wrkRun{}, err
	}
	began := time.Now()
	output, err := cmd.Output()
	wall := time.Since(began)
	if err != nil {
		return wrkRun{}, fmt.Errorf("wrk: %w: %s", err, output)
	}
	serverAfter, err := harness.CPUTime(serverPID)
	if err != nil {
		return wrkRun{}, err
	}
	var requests, errs int
	var durationUS, p50US, p99US int64
	scanner := bufio.NewScanner(strings.NewReader(string(output)))
	found := false
	for scanner.Scan() {
		if _, err := fmt.Sscanf(scanner.Text(), "loadbench %d %d %d %d %d", &requests, &durationUS, &p50US, &p99US, &errs); err == nil {
			found = true
		}
	}
	if !found || durationUS <= 0 {
		return wrkRun{}, fmt.Errorf("wrk printed no figures: %s", output)
	}
	state := cmd.ProcessState
	return wrkRun{
		perSecond: float64(requests) / (float64(durationUS) / 1e6),
		p50:       time.Duration(p50US) * time.Microsecond, p99: time.Duration(p99US) * time.Microsecond,
		errors:    errs,
		wrkCPU:    (state.UserTime() + state.SystemTime()).Seconds() / wall.Seconds(),
		serverCPU: (serverAfter - serverBefore).Seconds() / wall.Seconds(),
	}, nil
}

// roundRatios is the lowest and the highest of the rounds' ratios, each
// round's sandbox run against its bare run: how far one build's ratio moves
// on this machine, which a median alone hides.
func roundRatios(bare, sandbox []wrkRun) string {
	ratios := make([]float64, len(bare))
	for i := range bare {
		ratios[i] = sandbox[i].perSecond / bare[i].perSecond
	}
	return fmt.Sprintf("%.2f–%.2f", slices.Min(ratios), slices.Max(ratios))
}

func median(runs []wrkRun) wrkRun {
	sorted := slices.SortedFunc(slices.Values(runs), func(a, b wrkRun) int { return cmp.Compare(a.perSecond, b.perSecond) })
	return sorted[len(sorted)/2]
}

// saturated is the share of its threads past which wrk, not the server, may
// be what limits a run.
const saturated = 0.9

func runThroughput(o throughputOptions, out io.Writer) error {
	// wrk's -d takes whole seconds; anything else would be cut short
	// without a word, down to no run at all below a second.
	if o.duration < time.Second || o.duration%time.Second != 0 {
		return fmt.Errorf("-duration %v: wrk runs for whole seconds, so give a whole number of seconds, at least 1s", o.duration)
	}
	if _, err := exec.LookPath(o.wrk); err != nil {
		return fmt.Errorf("%w (Debian: apt-get install wrk)", err)
	}
	var names []string
	for _, name := range strings.Split(o.workloads, ",") {
		if workloads[name] == nil {
			return fmt.Errorf("unknown workload %q", name)
		}
		names = append(names, name)
	}
	s, err := startServers(o.serverOptions, out)
	if err != nil {
		return err
	}
	defer s.stop()

	fmt.Fprintf(out, "loadbench: wrk -t%d -c%d -d%s, %d runs per server and workload, alternating; the run with the median rate of each, and the lowest and highest ratio of a round's two runs; %s UTC, load average %s\n\n",
		o.threads, o.connections, o.duration, o.rounds, time.Now().UTC().Format("2006-01-02 15:04"), harness.LoadAverage())
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tbare req/s\tsandbox req/s\tratio\tround ratios\tbare p50\tsandbox p50\tbare p99\tsandbox p99\tp99 ratio\twrk CPU bare\twrk CPU sandbox\tserver CPU bare\tserver CPU sandbox\terrors\t")
	var warnings []string
	for _, name := range names {
		script := filepath.Join(s.dir, name+".lua")
		if err := os.WriteFile(script, []byte(wrkScript(workloads[name])), 0o600); err != nil {
			return err
		}
		var bareRuns, sandboxRuns []wrkRun
		for round := range o.rounds {
			// Each server goes first in every other round, so that neither
			// always follows the other's load.
			order := []bool{false, true}
			if round%2 == 1 {
				order = []bool{true, false}
			}
			for _, sandbox := range order {
				base, pid, runs := s.bareBase, os.Getpid(), &bareRuns
				if sandbox {
					base, pid, runs = s.sandbox.Base, s.sandbox.Cmd.Process.Pid, &sandboxRuns
				}
				run, err := runWrk(o, script, base, pid)
				if err != nil {
					return err
				}
				if run.wrkCPU >= saturated*float64(o.threads) {
					warnings = append(warnings, fmt.Sprintf("%s, %s, run %d: wrk used %.0f%% of its %d thread(s): the generator, not the server, may be the limit",
						name, map[bool]string{false: "bare", true: "sandbox"}[sandbox], round+1, 100*run.wrkCPU/float64(o.threads), o.threads))
				}
				*runs = append(*runs, run)
			}
		}
		b, sb := median(bareRuns), median(sandboxRuns)
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f×\t%s\t%s\t%s\t%s\t%s\t%.2f×\t%.0f%%\t%.0f%%\t%.0f%%\t%.0f%%\t%d\t\n", name, b.perSecond, sb.perSecond, sb.perSecond/b.perSecond, roundRatios(bareRuns, sandboxRuns),
			harness.MS(b.p50), harness.MS(sb.p50), harness.MS(b.p99), harness.MS(sb.p99), float64(sb.p99)/float64(max(b.p99, 1)),
			100*b.wrkCPU, 100*sb.wrkCPU, 100*b.serverCPU, 100*sb.serverCPU, sumErrors(bareRuns)+sumErrors(sandboxRuns))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(out, "warning:", w)
	}
	return nil
}

func sumErrors(runs []wrkRun) int {
	n := 0
	for _, r := range runs {
		n += r.errors
	}
	return n
}

func memLimitEnv(gomemlimit string) []string {
	if gomemlimit == "" {
		return nil
	}
	return []string{"GOMEMLIMIT=" + gomemlimit}
}

func serveFlags(fset *flag.FlagSet) func([]string, io.Writer) error {
	var o serverOptions
	o.flags(fset)
	return func(args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return serve(ctx, o, out)
	}
}

// serve starts the servers, says where they listen, and serves until ctx is
// done: for wrk, curl or a profiler run by hand.
func serve(ctx context.Context, o serverOptions, out io.Writer) error {
	s, err := startServers(o, out)
	if err != nil {
		return err
	}
	defer s.stop()
	lines := slices.Sorted(maps.Keys(recordedLines()))
	raw, err := json.Marshal(map[string]any{"sandbox": s.sandbox.Base, "bare": s.bareBase, "key": harness.BenchKey, "requests": lines})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s\n", raw)
	<-ctx.Done()
	return nil
}

// recordedLines are the request lines the bare server answers.
func recordedLines() map[string]harness.Request {
	lines := map[string]harness.Request{}
	for _, requests := range workloads {
		for _, r := range requests {
			lines[r.Line()] = r
		}
	}
	return lines
}
