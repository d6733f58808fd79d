package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// soakSandboxFlags make the sandbox reach its steady state within minutes: accounts
// expire after half a minute and at most 500 are held, so a soak with fresh
// keys cycles through both bounds many times.
var soakSandboxFlags = []string{"-account-ttl", "30s", "-max-accounts", "500", "-webhook-first-retry", "200ms", "-webhook-attempts", "3"}

// receivers are the webhook endpoints a soak registers, on loopback: one that
// answers, one that fails, one that never answers, one that redirects.
type receivers struct {
	listener net.Listener
	server   *http.Server
	base     string
	stop     chan struct{}
}

func startReceivers() (*receivers, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receivers{listener: listener, base: "http://" + listener.Addr().String(), stop: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, req *http.Request) { _, _ = io.Copy(io.Discard, req.Body) })
	mux.HandleFunc("/fail", func(w http.ResponseWriter, req *http.Request) { http.Error(w, "no", http.StatusInternalServerError) })
	mux.HandleFunc("/hang", func(w http.ResponseWriter, req *http.Request) {
		// Read first: only then does the server notice, and cancel the
		// context, when the sandbox gives up and closes the connection.
		_, _ = io.Copy(io.Discard, req.Body)
		select {
		case <-req.Context().Done():
		case <-r.stop:
		}
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "/ok", http.StatusTemporaryRedirect)
	})
	r.server = &http.Server{Handler: mux}
	go func() { _ = r.server.Serve(listener) }()
	return r, nil
}

func (r *receivers) close() {
	close(r.stop)
	_ = r.server.Close()
}

// soakSample is the sandbox's state at one moment of a soak.
type soakSample struct {
	at         time.Duration
	requests   int64
	rss        int64
	goroutines int
	accounts   int
}

type soakOptions struct {
	soak, soakEvery time.Duration
	connections     int
	gomemlimit      string
}

func soakFlags(fset *flag.FlagSet) func([]string, io.Writer) error {
	var o soakOptions
	fset.DurationVar(&o.soak, "for", 10*time.Minute, "how long the soak runs")
	fset.DurationVar(&o.soakEvery, "every", 10*time.Second, "how often to print RSS, goroutines and accounts")
	fset.IntVar(&o.connections, "c", 32, "concurrent workers, each with fresh keys")
	fset.StringVar(&o.gomemlimit, "gomemlimit", "", "GOMEMLIMIT for the sandbox process (e.g. 1GiB); empty leaves it unset")
	return func(args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		return runSoak(o, out)
	}
}

func runSoak(opts soakOptions, out io.Writer) error {
	bin, cleanup, err := harness.BuildSandbox()
	if err != nil {
		return err
	}
	defer cleanup()
	sb, err := harness.StartSandbox(bin, memLimitEnv(opts.gomemlimit), soakSandboxFlags...)
	if err != nil {
		return err
	}
	defer sb.Stop()
	recv, err := startReceivers()
	if err != nil {
		return err
	}
	defer recv.close()

	fmt.Fprintf(out, "soak: %s, %d workers, fresh keys, sandbox flags %s\n\n", opts.soak, opts.connections, strings.Join(soakSandboxFlags, " "))
	// Fixed widths rather than a tabwriter: rows are printed as they come.
	const row = "%8s %10s %11s %11s %9s\n"
	fmt.Fprintf(out, row, "elapsed", "requests", "RSS", "goroutines", "accounts")
	var (
		sent    atomic.Int64
		failure atomic.Value
		wg      sync.WaitGroup
	)
	deadline := time.Now().Add(opts.soak)
	client := harness.NewClient(opts.connections)
	var keys atomic.Int64
	for range opts.connections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if err := soakIteration(client, sb.Base, recv.base, fmt.Sprintf("svc_test_soak_%09d", keys.Add(1)), &sent); err != nil {
					failure.Store(err)
					return
				}
			}
		}()
	}
	var samples []soakSample
	started := time.Now()
	ticker := time.NewTicker(opts.soakEvery)
	defer ticker.Stop()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-ticker.C:
		case <-done:
			running = false
		}
		s, err := sample(client, sb, time.Since(started), sent.Load())
		if err != nil {
			return err
		}
		samples = append(samples, s)
		fmt.Fprintf(out, row, s.at.Round(time.Second), strconv.FormatInt(s.requests, 10), harness.MiB(s.rss), strconv.Itoa(s.goroutines), strconv.Itoa(s.accounts))
	}
	if err, ok := failure.Load().(error); ok {
		return err
	}
	mid, last := samples[len(samples)/2], samples[len(samples)-1]
	fmt.Fprintf(out, "\nfrom the middle of the run to its end: RSS %+.1f%%, goroutines %+d, accounts %d (cap 500)\n",
		100*float64(last.rss-mid.rss)/float64(mid.rss), last.goroutines-mid.goroutines, last.accounts)
	return nil
}

func sample(client *http.Client, sb *harness.Server, at time.Duration, requests int64) (soakSample, error) {
	s := soakSample{at: at, requests: requests}
	var err error
	if s.rss, err = harness.RSS(sb.Cmd.Process.Pid); err != nil {
		return s, err
	}
	_, raw, err := harness.Send(client, sb.Base, "", harness.Request{Method: "GET", Target: "/healthz"})
	if err != nil {
		return s, err
	}
	var health struct {
		Data struct {
			Goroutines int `json:"goroutines"`
			Accounts   int `json:"accounts"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &health); err != nil {
		return s, fmt.Errorf("read /healthz: %w", err)
	}
	s.goroutines, s.accounts = health.Data.Goroutines, health.Data.Accounts
	return s, nil
}

// soakStep is a request of a soak and the status it must get.
type soakStep struct {
	r    harness.Request
	want int
}

// soakIteration is one fresh key's session: a webhook to one of the
// receivers, writes that emit events, reads, and now and then the oversized
// inputs a shared sandbox must shrug off.
func soakIteration(client *http.Client, base, receiverBase, key string, sent *atomic.Int64) error {
	receiver := []string{"/ok", "/fail", "/hang", "/redirect"}[rand.IntN(4)]
	steps := []soakStep{
		{harness.Request{Method: "POST", Target: "/v1/webhooks", Body: fmt.Sprintf(`{"url":%q,"events":["*"]}`, receiverBase+receiver)}, 200},
		{harness.Request{Method: "POST", Target: "/v1/campaigns", Body: harness.CreateBody}, 200},
		{harness.Request{Method: "POST", Target: "/_sandbox/bugs", Body: `{"campaignId":"cmp_000005","title":"Soak","severity":"high"}`}, 200},
		{harness.Request{Method: "PATCH", Target: "/v1/bugs/bug_000010", Body: `{"status":"confirmed"}`}, 200},
		{harness.Request{Method: "GET", Target: "/v1/campaigns?limit=20"}, 200},
		{harness.Request{Method: "GET", Target: "/v1/bugs?campaignId=cmp_000005"}, 200},
	}
	if rand.IntN(10) == 0 {
		steps = append(steps,
			// Past the sandbox's 64 KiB header limit net/http itself answers 431;
			// between 8 KiB and that, the sandbox answers 414.
			soakStep{harness.Request{Method: "GET", Target: "/v1/campaigns?q=" + strings.Repeat("x", 16<<10)}, http.StatusRequestURITooLong},
			soakStep{harness.Request{Method: "GET", Target: "/v1/campaigns?q=" + strings.Repeat("x", 1<<20)}, http.StatusRequestHeaderFieldsTooLarge},
			soakStep{harness.Request{Method: "POST", Target: "/v1/campaigns", Body: `{"name":"` + strings.Repeat("x", 2<<20) + `"}`}, http.StatusRequestEntityTooLarge},
		)
	}
	for _, step := range steps {
		res, raw, err := harness.Send(client, base, key, step.r)
		sent.Add(1)
		if res == nil {
			return err
		}
		if res.StatusCode != step.want {
			return fmt.Errorf("%.200s: %d, want %d: %.200s", step.r.Line(), res.StatusCode, step.want, raw)
		}
	}
	return nil
}
