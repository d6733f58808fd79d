package attack

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// Sizes are how large each attack is. Each attack starts the real sandbox
// binary with its default flags and any it names (webhooks also turns the
// rate limits and client budgets off, with harness.Unlimited), attacks it
// on loopback, bounded in count and time, prints its figures beside a
// baseline measured in the same run, and says whether its bar held.
type Sizes struct {
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
	// sweepAddrs addresses are swept behind -trust-forwarded-for.
	sweepAddrs int
	// faultKeys keys plan as many of the largest faults as they may.
	faultKeys int
	// webhooks sizes the attack on webhook delivery.
	webhooks webhookAttack
	// verdictPhase is how long the keys of the verdicts attack ask, at
	// their control budget, for each control.
	verdictPhase time.Duration
}

// FullSizes are the sizes the bars were set for.
var FullSizes = Sizes{
	conns: 20_000, probes: 400,
	bodies: 192, bodiesAtOnce: 64, bodySize: 1<<20 - 64, tenantEvery: 20 * time.Millisecond, tenantAlone: 3 * time.Second,
	bigNumbers: 20, digits: 10_000, zeros: 1_000_000,
	floodKeys: 100_000, floodWorkers: 64, tenantAccounts: 20, checkEvery: 2 * time.Second,
	delayedBodies: 2000, trickle: 20 * time.Second, stalled: 100, sweepAddrs: 1 << 16, faultKeys: 300,
	webhooks:     webhookAttack{keys: 8, hooks: 16, phase: 20 * time.Second, drain: 15 * time.Second, every: 100 * time.Millisecond},
	verdictPhase: 20 * time.Second,
}

// Flags are the flags that change the sizes, from FullSizes.
func Flags(fset *flag.FlagSet) *Sizes {
	a := FullSizes
	fset.IntVar(&a.conns, "conns", a.conns, "conns: idle keep-alive connections (at most what this process's open-file hard limit allows)")
	fset.IntVar(&a.bodies, "bodies", a.bodies, "bodies: adversarial 1 MiB bodies")
	fset.IntVar(&a.floodKeys, "keys", a.floodKeys, "keyflood: fresh keys from one client")
	fset.IntVar(&a.faultKeys, "fault-keys", a.faultKeys, "faultmemory: keys that plan the largest faults")
	fset.IntVar(&a.delayedBodies, "delayed-bodies", a.delayedBodies, "delaybodies: delayed 1 MiB POSTs from one key")
	fset.IntVar(&a.bodiesAtOnce, "bodies-at-once", a.bodiesAtOnce, "bodies, delaybodies: how many bodies are sent at a time")
	fset.DurationVar(&a.trickle, "trickle", a.trickle, "trickle: how long the trickled answer takes")
	fset.DurationVar(&a.verdictPhase, "verdict-phase", a.verdictPhase, "verdicts: how long the keys ask for each control")
	a.webhooks.flags(fset)
	return &a
}

// Names are the attacks, in the order of all.
var Names = []string{"conns", "bodies", "bignumber", "keyflood", "keypath", "delays", "settle", "faultmemory", "delaybodies", "trickle", "stalled", "sweep", "webhooks", "verdicts"}

// attackRuns run one attack each against the sandbox binary bin and report
// whether its bar held.
var attackRuns = map[string]func(bin string, a Sizes, out io.Writer) (held bool, err error){
	"conns":       attackConns,
	"bodies":      attackBodies,
	"bignumber":   attackBigNumber,
	"keyflood":    attackKeyFlood,
	"keypath":     attackKeyPath,
	"delays":      attackDelays,
	"settle":      attackSettle,
	"faultmemory": attackFaultMemory,
	"delaybodies": attackDelayedBodies,
	"trickle":     attackTrickle,
	"stalled":     attackStalled,
	"sweep":       attackSweep,
	"webhooks":    attackWebhooks,
	"verdicts":    attackVerdicts,
}

// Run runs the attacks named, comma-separated, or all of them, and fails if
// a bar did not hold.
func Run(names string, a *Sizes, out io.Writer) error {
	run := Names
	if names != "all" {
		run = strings.Split(names, ",")
	}
	for _, name := range run {
		if attackRuns[name] == nil {
			return fmt.Errorf("unknown attack %q: want all or some of %s", name, strings.Join(Names, ", "))
		}
	}
	bin, cleanup, err := harness.BuildSandbox()
	if err != nil {
		return err
	}
	defer cleanup()
	var failed []string
	for _, name := range run {
		fmt.Fprintf(out, "== %s, %s, load average %s\n", name, time.Now().UTC().Format("2006-01-02 15:04"), harness.LoadAverage())
		held, err := attackRuns[name](bin, *a, out)
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

// openFiles is how many file descriptors a process holds.
func openFiles(pid int) (int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(entries), err
}

// fileLimit is a process's soft limit of open files.
func fileLimit(pid int) (int, error) {
	rest, err := harness.ProcLine(pid, "limits", "Max open files")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.Fields(rest)[0])
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
	header http.Header
}

// label is the answer's status, and its error code when it has one.
func (a answer) label() string {
	if a.code == "" {
		return strconv.Itoa(a.status)
	}
	return strconv.Itoa(a.status) + " " + a.code
}

// outcome is what the sandbox answered to a run of requests.
type outcome struct {
	answers    map[string]int
	largest    int
	unanswered int
}

func newOutcome() *outcome { return &outcome{answers: map[string]int{}} }

// add counts got by its label, or a request that got no answer.
func (o *outcome) add(got answer, err error) {
	if err != nil {
		o.unanswered++
		return
	}
	o.addAs(got.label(), got)
}

// addAs counts got under label.
func (o *outcome) addAs(label string, got answer) {
	o.answers[label]++
	o.largest = max(o.largest, got.size)
}

// summary lists the counts by label, sorted so that runs compare line by
// line.
func (o *outcome) summary() string {
	var parts []string
	for _, label := range slices.Sorted(maps.Keys(o.answers)) {
		parts = append(parts, fmt.Sprintf("%d × %s", o.answers[label], label))
	}
	if o.unanswered > 0 {
		parts = append(parts, fmt.Sprintf("%d unanswered", o.unanswered))
	}
	return strings.Join(parts, ", ")
}

var envelopeCode = regexp.MustCompile(`"code":"([A-Z_]+)"`)

// ask sends r on key and returns the answer, whatever its status.
func ask(client *http.Client, base, key string, r harness.Request) (answer, error) {
	req, err := harness.NewRequest(base, key, r)
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
	got := answer{status: res.StatusCode, size: len(raw) + int(rest), raw: raw, header: res.Header}
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
