package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// attacks are the attacks of a hostile tenant, other than the webhook one. Each starts the
// real sandbox binary with its default flags, attacks it on loopback, bounded
// in count and time, prints its figures beside a baseline measured in the
// same run, and says whether the bar held.
type attacks struct {
	// names are the attacks to run, comma-separated, or all.
	names string
	// conns idle keep-alive connections are opened, and probes new
	// clients ask /healthz before and during.
	conns, probes int
	// maxConns, if not zero, is the sandbox's -max-conns, so that a small
	// attack reaches the cap too.
	maxConns int
	// bodies adversarial bodies of bodySize bytes are sent, bodiesAtOnce
	// at a time, while another tenant reads every tenantEvery; that tenant
	// reads alone for tenantAlone first.
	bodies, bodiesAtOnce, bodySize int
	tenantEvery, tenantAlone       time.Duration
	// bigNumbers is how many requests each huge rewardPerBug is sent;
	// digits and zeros size the two literals.
	bigNumbers, digits, zeros int
	// floodKeys fresh keys come from one client, floodWorkers at a time,
	// while another client's tenantAccounts are checked every checkEvery.
	floodKeys, floodWorkers, tenantAccounts int
	checkEvery                              time.Duration
	// delayedBodies POSTs of bodySize bytes are sent, bodiesAtOnce at a
	// time, into a planned delay.
	delayedBodies int
	// trickle is how long the trickled answer takes.
	trickle time.Duration
	// stalled requests' bodies stall before SIGTERM.
	stalled int
	// sweepAddrs addresses are swept behind -trust-forwarded-for; sweepLimit,
	// if not zero, is -client-limit-minute.
	sweepAddrs, sweepLimit int
}

// fullAttacks are the sizes.
var fullAttacks = attacks{
	conns: 20_000, probes: 400,
	bodies: 192, bodiesAtOnce: 64, bodySize: 1<<20 - 64, tenantEvery: 20 * time.Millisecond, tenantAlone: 3 * time.Second,
	bigNumbers: 20, digits: 10_000, zeros: 1_000_000,
	floodKeys: 100_000, floodWorkers: 64, tenantAccounts: 20, checkEvery: 2 * time.Second,
	delayedBodies: 2000, trickle: 20 * time.Second, stalled: 100, sweepAddrs: 1 << 16,
}

func (a *attacks) flags(fset *flag.FlagSet) {
	*a = fullAttacks
	fset.StringVar(&a.names, "attack", "", "run issue 17's attacks instead, each against its bar: all, or a comma-separated list of "+strings.Join(attackOrder, ", "))
	fset.IntVar(&a.conns, "attack-conns", a.conns, "with -attack conns: idle keep-alive connections (at most what this process's open-file hard limit allows)")
	fset.IntVar(&a.bodies, "attack-bodies", a.bodies, "with -attack bodies: adversarial 1 MiB bodies")
	fset.IntVar(&a.floodKeys, "attack-keys", a.floodKeys, "with -attack keyflood: fresh keys from one client")
	fset.IntVar(&a.delayedBodies, "attack-delayed-bodies", a.delayedBodies, "with -attack delaybodies: delayed 1 MiB POSTs from one key")
	fset.DurationVar(&a.trickle, "attack-trickle", a.trickle, "with -attack trickle: how long the trickled answer takes")
}

// attackOrder is the order of -attack all.
var attackOrder = []string{"conns", "bodies", "bignumber", "keyflood", "keypath", "delays", "delaybodies", "trickle", "stalled", "sweep"}

// attackRuns run one attack each against the sandbox binary bin and report
// whether its bar held.
var attackRuns = map[string]func(bin string, a attacks, out io.Writer) (held bool, err error){
	"conns":       attackConns,
	"bodies":      attackBodies,
	"bignumber":   attackBigNumber,
	"keyflood":    attackKeyFlood,
	"keypath":     attackKeyPath,
	"delays":      attackDelays,
	"delaybodies": attackDelayedBodies,
	"trickle":     attackTrickle,
	"stalled":     attackStalled,
	"sweep":       attackSweep,
}

func runAttacks(opts options, out io.Writer) error {
	a := opts.attacks
	names := attackOrder
	if a.names != "all" {
		names = strings.Split(a.names, ",")
	}
	for _, name := range names {
		if attackRuns[name] == nil {
			return fmt.Errorf("unknown attack %q: want all or some of %s", name, strings.Join(attackOrder, ", "))
		}
	}
	bin, cleanup, err := buildSandbox()
	if err != nil {
		return err
	}
	defer cleanup()
	var failed []string
	for _, name := range names {
		fmt.Fprintf(out, "== %s, %s, load average %s\n", name, time.Now().UTC().Format("2006-01-02 15:04"), loadAverage())
		held, err := attackRuns[name](bin, a, out)
		if err != nil {
			return fmt.Errorf("attack %s: %w", name, err)
		}
		fmt.Fprintf(out, "%s: bar held: %v\n\n", name, held)
		if !held {
			failed = append(failed, name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("the bar did not hold: %s", strings.Join(failed, ", "))
	}
	return nil
}

// startSandboxLogging runs the sandbox binary on a free loopback port with
// flags and no others, and hands its log to logs (nil drops it). The port
// comes from the one line the sandbox writes on standard output.
func startSandboxLogging(bin string, env []string, logs io.Writer, flags ...string) (*server, error) {
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, flags...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = logs
	url, err := startAnnouncing(cmd)
	if err != nil {
		return nil, fmt.Errorf("the sandbox did not say where it listens: %w", err)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("the sandbox listens at %q, not on loopback", url)
	}
	return &server{cmd: cmd, base: url}, nil
}

// startAnnouncing starts a server and returns the first line it writes on
// standard output, where it says where it listens.
func startAnnouncing(cmd *exec.Cmd) (string, error) {
	announced, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(announced).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// logCapture keeps a sandbox's log, which may be read while it is written.
// Once the sandbox has stopped, it holds the whole log.
type logCapture struct {
	mu    sync.Mutex
	text  bytes.Buffer
	wrote chan struct{}
}

func newLogCapture() *logCapture { return &logCapture{wrote: make(chan struct{}, 1)} }

func (l *logCapture) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.text.Write(p)
	l.mu.Unlock()
	select {
	case l.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *logCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

// value waits, at most a few seconds, for the log to say name=value, and
// returns the value.
func (l *logCapture) value(name string) (string, error) {
	pattern := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `=(\S+)`)
	timeout := time.After(5 * time.Second)
	for {
		if m := pattern.FindStringSubmatch(l.String()); m != nil {
			return m[1], nil
		}
		select {
		case <-l.wrote:
		case <-timeout:
			return "", fmt.Errorf("the sandbox's log does not say %s", name)
		}
	}
}

// spread is a set of latencies as the tables show them.
type spread struct {
	n             int
	p50, p99, max time.Duration
}

// spreadOf takes the p99 of 100 as the 100th, for the attacks and the
// throughput figures alike.
func spreadOf(latencies []time.Duration) spread {
	s := spread{n: len(latencies)}
	if s.n == 0 {
		return s
	}
	sorted := slices.Sorted(slices.Values(latencies))
	s.p50, s.p99, s.max = sorted[s.n/2], sorted[s.n*99/100], sorted[s.n-1]
	return s
}

func (s spread) String() string {
	return fmt.Sprintf("%d\t%s\t%s\t%s", s.n, ms(s.p50), ms(s.p99), ms(s.max))
}

// ms prints a latency at a resolution a loaded machine can tell apart.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// loadAverage is the machine's load over the last 1, 5 and 15 minutes.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}

// cpuTime is the CPU time all threads of a process have used so far, from
// their scheduler statistics, which count nanoseconds rather than ticks.
func cpuTime(pid int) (time.Duration, error) {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(stats) == 0 {
		return 0, fmt.Errorf("no scheduler statistics for pid %d", pid)
	}
	var total time.Duration
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			// A thread that ended between the listing and the read.
			continue
		}
		ns, err := strconv.ParseInt(strings.Fields(string(raw))[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// openFiles is how many file descriptors a process holds.
func openFiles(pid int) (int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(entries), err
}

// fileLimit is a process's soft limit of open files.
func fileLimit(pid int) (int, error) {
	rest, err := procLine(pid, "limits", "Max open files")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.Fields(rest)[0])
}

// procLine is the rest of the line of /proc/PID/file that starts with name.
func procLine(pid int, file, name string) (string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			return rest, nil
		}
	}
	return "", fmt.Errorf("no %q in /proc/%d/%s", name, pid, file)
}

// maxAnswer is the bound on any answer of the attacks.
const maxAnswer = 64 << 10

// answer is what one attacking request got back: at most maxAnswer+1
// bytes of it are read, which is enough to tell that it was too large.
type answer struct {
	status int
	code   string
	size   int
	raw    []byte
	// rateLimit is the X-RateLimit-Limit of a refusal: which budget it was.
	rateLimit string
}

var envelopeCode = regexp.MustCompile(`"code":"([A-Z_]+)"`)

// newRequest is request r on key, which may be empty for none.
func newRequest(base, key string, r request) (*http.Request, error) {
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, base+r.target, body)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// ask sends r on key and returns the answer, whatever its status.
func ask(client *http.Client, base, key string, r request) (answer, error) {
	req, err := newRequest(base, key, r)
	if err != nil {
		return answer{}, err
	}
	return askRequest(client, req)
}

func askRequest(client *http.Client, req *http.Request) (answer, error) {
	res, err := client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer+1))
	if err != nil {
		return answer{}, err
	}
	rest, err := io.Copy(io.Discard, res.Body)
	got := answer{status: res.StatusCode, size: len(raw) + int(rest), raw: raw, rateLimit: res.Header.Get("X-RateLimit-Limit")}
	if m := envelopeCode.FindSubmatch(raw); m != nil {
		got.code = string(m[1])
	}
	return got, err
}

// inParallel calls do for 0 to n-1, workers calls at a time, and returns
// when all have returned.
func inParallel(n, workers int, do func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				do(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
