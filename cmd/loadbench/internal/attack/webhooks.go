package attack

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// webhookAttack is the attack on webhook delivery: keys whose webhooks
// point at receivers that never answer, against another account whose
// receiver answers at once.
type webhookAttack struct {
	// keys attack with hooks webhooks each.
	keys, hooks int
	// phase is how long each phase sends; drain how long deliveries may
	// still arrive after it.
	phase, drain time.Duration
	// every is how often each key, attacker or victim, creates a campaign.
	every time.Duration
}

// webhookAttackBar is the figure the victim's p99 must stay under.
const webhookAttackBar = 2 * time.Second

func (a *webhookAttack) flags(fset *flag.FlagSet) {
	fset.IntVar(&a.keys, "webhook-keys", a.keys, "webhooks: attacking keys")
	fset.IntVar(&a.hooks, "webhook-hooks", a.hooks, "webhooks: webhooks per attacking key")
	fset.DurationVar(&a.phase, "webhook-for", a.phase, "webhooks: how long each phase sends")
	fset.DurationVar(&a.drain, "webhook-drain", a.drain, "webhooks: how long a phase waits for the last deliveries")
	fset.DurationVar(&a.every, "webhook-every", a.every, "webhooks: how often each key creates a campaign")
}

// spellings are ways to write 127.0.0.1 in a URL: the sandbox must count
// them as one host.
var spellings = []string{"127.0.0.1", "localhost", "LOCALHOST", "localhost.", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "127.0.0.1", "localhost"}

// victimReceiver answers every delivery at once and notes when each of the
// victim's campaigns arrived; paths under /hang never answer until the run
// ends, as a tenant's receiver with one broken endpoint.
type victimReceiver struct {
	mu      sync.Mutex
	arrived map[string]time.Time
	// nudge tells the phase waiting for the last deliveries of an arrival.
	nudge chan struct{}
}

func (v *victimReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/hang") {
		hang(w, r)
		return
	}
	var event struct {
		Data struct{ Name string } `json:"data"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if json.Unmarshal(body, &event) == nil {
		v.mu.Lock()
		if _, seen := v.arrived[event.Data.Name]; !seen {
			v.arrived[event.Data.Name] = time.Now()
		}
		v.mu.Unlock()
		select {
		case v.nudge <- struct{}{}:
		default:
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// hang holds a delivery until the sandbox gives up on it.
func hang(_ http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

// listen serves h on a free loopback port until close is called.
func listen(h http.Handler) (port string, close func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(l) }()
	_, port, _ = net.SplitHostPort(l.Addr().String())
	return port, func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = srv.Close()
	}, nil
}

// attackPhase is one measurement: who attacks, and where their webhooks go.
type attackPhase struct {
	name string
	// targets gives the URL of an attacking key's webhook i.
	targets func(i int) string
	keys    int
}

// victimLatency is what one phase measured of the victim's deliveries.
// Its Spread counts every delivery sent.
type victimLatency struct {
	harness.Spread
	delivered int
}

// attackWebhooks has the victim create campaigns in three phases: alone,
// while keys' webhooks hang, and while one key's hang on a path of the
// victim's own receiver.
func attackWebhooks(bin string, sizes Sizes, out io.Writer) (bool, error) {
	a := sizes.webhooks
	// Loopback only: whatever the URLs say, nothing leaves this machine.
	sb, err := harness.StartSandbox(bin, nil, "-webhook-loopback-only")
	if err != nil {
		return false, err
	}
	defer sb.Stop()

	hangingPorts := make([]string, a.hooks)
	for i := range hangingPorts {
		port, closeHanging, err := listen(http.HandlerFunc(hang))
		if err != nil {
			return false, err
		}
		defer closeHanging()
		hangingPorts[i] = port
	}
	victim := &victimReceiver{arrived: map[string]time.Time{}, nudge: make(chan struct{}, 1)}
	victimPort, closeVictim, err := listen(victim)
	if err != nil {
		return false, err
	}
	defer closeVictim()

	phases := []attackPhase{
		{name: "baseline (no attack)", keys: 0},
		{name: fmt.Sprintf("%d keys x %d webhooks to hanging receivers", a.keys, a.hooks), keys: a.keys, targets: func(i int) string {
			return "http://" + spellings[i%len(spellings)] + ":" + hangingPorts[i] + "/hook"
		}},
		{name: fmt.Sprintf("1 key x %d webhooks to a hanging path of the victim's receiver", a.hooks), keys: 1, targets: func(i int) string {
			return "http://" + spellings[i%len(spellings)] + ":" + victimPort + "/hang/" + strconv.Itoa(i)
		}},
	}
	client := harness.NewClient(64)
	fmt.Fprintf(out, "victim: 1 key, 1 webhook, a campaign every %v for %v per phase; bar: p99 under %v\n\n", a.every, a.phase, webhookAttackBar)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tsent\tdelivered\tp50\tp99\tmax\tholds\t")
	holds := true
	for n, phase := range phases {
		got, err := runAttackPhase(client, sb.Base, a, phase, n, victim, "http://127.0.0.1:"+victimPort+"/hook")
		if err != nil {
			return false, fmt.Errorf("%s: %w", phase.name, err)
		}
		ok := got.delivered == got.N && got.P99 < webhookAttackBar
		holds = holds && ok
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%v\t\n", phase.name, got.N, got.delivered, shown(got.P50), shown(got.P99), shown(got.Max), ok)
	}
	return holds, tw.Flush()
}

// runAttackPhase registers the phase's attacking keys and a fresh victim key,
// has all of them create campaigns for the phase's length, and measures when
// the victim's deliveries arrive.
func runAttackPhase(client *http.Client, base string, a webhookAttack, phase attackPhase, n int, victim *victimReceiver, victimURL string) (victimLatency, error) {
	victimKey := fmt.Sprintf("svc_test_victim_%d", n)
	if err := registerHook(client, base, victimKey, victimURL); err != nil {
		return victimLatency{}, err
	}
	var attackers []string
	for k := range phase.keys {
		key := fmt.Sprintf("svc_test_attacker_%d_%d", n, k)
		for i := range a.hooks {
			if err := registerHook(client, base, key, phase.targets(i)); err != nil {
				return victimLatency{}, err
			}
		}
		attackers = append(attackers, key)
	}

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		sent = map[string]time.Time{}
		errs []error
	)
	stop := time.Now().Add(a.phase)
	create := func(key, name string) error {
		body := fmt.Sprintf(`{"name":%q,"platform":"web","testersRequired":1,"rewardPerBug":1}`, name)
		_, _, err := harness.Send(client, base, key, harness.Request{Method: "POST", Target: "/v1/campaigns", Body: body})
		return err
	}
	for k, key := range append(attackers, victimKey) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(a.every)
			defer tick.Stop()
			for i := 0; time.Now().Before(stop); i++ {
				name := fmt.Sprintf("attack-%d-%d-%d", n, k, i)
				if key == victimKey {
					name = fmt.Sprintf("victim-%d-%d", n, i)
				}
				at := time.Now()
				if err := create(key, name); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				if key == victimKey {
					mu.Lock()
					sent[name] = at
					mu.Unlock()
				}
				<-tick.C
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return victimLatency{}, errs[0]
	}
	drained := time.After(a.drain)
	for victim.count(sent) < len(sent) {
		select {
		case <-victim.nudge:
		case <-drained:
			return victim.latency(sent), nil
		}
	}
	return victim.latency(sent), nil
}

func registerHook(client *http.Client, base, key, url string) error {
	_, _, err := harness.Send(client, base, key, harness.Request{Method: "POST", Target: "/v1/webhooks", Body: fmt.Sprintf(`{"url":%q,"events":["campaign.created"]}`, url)})
	return err
}

func (v *victimReceiver) count(sent map[string]time.Time) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for name := range sent {
		if _, ok := v.arrived[name]; ok {
			n++
		}
	}
	return n
}

// never stands for the delay of a delivery that did not arrive.
const never = time.Duration(1<<63 - 1)

// latency is the delay from each create to its delivery; one that never
// arrived counts as never, which sorts after every delay that did.
func (v *victimReceiver) latency(sent map[string]time.Time) victimLatency {
	v.mu.Lock()
	defer v.mu.Unlock()
	delivered := 0
	delays := make([]time.Duration, 0, len(sent))
	for name, at := range sent {
		delay := never
		if arrived, ok := v.arrived[name]; ok {
			delay = arrived.Sub(at)
			delivered++
		}
		delays = append(delays, delay)
	}
	return victimLatency{Spread: harness.SpreadOf(delays), delivered: delivered}
}

// shown prints a delay, or that it never came within the drain.
func shown(d time.Duration) string {
	if d == never {
		return "never"
	}
	return d.Round(time.Millisecond).String()
}
