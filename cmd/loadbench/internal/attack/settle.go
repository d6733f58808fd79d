package attack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// settleProbes is how many new clients' /healthz, and how many other keys'
// reads, are asked while the settles wait.
const settleProbes = 20

// attackSettle has one key whose webhook hangs send more 30 s settles than
// the connection cap holds, one connection each, while new clients'
// /healthz and other keys' reads are asked: a settle waits as a delayed
// request does, so every probe must be answered.
func attackSettle(bin string, a Sizes, out io.Writer) (bool, error) {
	maxConns := a.maxConns
	if maxConns == 0 {
		maxConns = 50
	}
	sb, err := harness.StartSandboxLogging(bin, nil, nil, "-max-conns", strconv.Itoa(maxConns), "-webhook-loopback-only")
	if err != nil {
		return false, err
	}
	defer sb.Stop()
	port, closeHanging, err := listen(http.HandlerFunc(hang))
	if err != nil {
		return false, err
	}
	defer closeHanging()
	const hostile, bystander = "svc_test_hostile-settle-0001", "svc_test_settle-bystander-"
	client := &http.Client{Timeout: 10 * time.Second}
	if err := registerHook(client, sb.Base, hostile, "http://127.0.0.1:"+port+"/hook"); err != nil {
		return false, err
	}
	created, err := ask(client, sb.Base, hostile, harness.Request{Method: "POST", Target: "/v1/campaigns", Body: `{"name":"settle","platform":"web","testersRequired":1,"rewardPerBug":1}`})
	if err != nil || created.status != http.StatusOK {
		return false, fmt.Errorf("create a campaign: %d %s (%v)", created.status, created.raw, err)
	}
	client.CloseIdleConnections()

	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg                   sync.WaitGroup
		atOnce, waited, lost atomic.Int32
	)
	settles := maxConns + 10
	for range settles {
		wg.Go(func() {
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			req, _ := harness.NewRequest(sb.Base, hostile, harness.Request{Method: "POST", Target: "/_sandbox/deliveries/settle", Body: `{"timeoutMs":30000}`})
			began := time.Now()
			res, err := c.Do(req.WithContext(ctx))
			if err != nil {
				lost.Add(1)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if time.Since(began) < time.Second {
				atOnce.Add(1)
			} else {
				waited.Add(1)
			}
		})
	}
	// Long enough for the settles to be sent and waiting.
	time.Sleep(time.Second)
	health := probeHealthz(sb.Base, settleProbes)
	others := probeKey(sb.Base, bystander, settleProbes)
	answeredAtOnce := atOnce.Load()
	cancel()
	wg.Wait()

	fmt.Fprintf(out, "-max-conns %d; one key whose webhook hangs sends %d settles of 30 s at once, one connection each\n", maxConns, settles)
	fmt.Fprintf(out, "hostile key: %d settles answered within 1 s; %d got no answer by the end (waiting, or closed at the cap)\n", answeredAtOnce, lost.Load())
	fmt.Fprintf(out, "new clients, one connection each, 4 at a time; bar: %d of %d answered, p99 under %v\n", settleProbes, settleProbes, healthzBar)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "probe\tanswered\tp50\tp99\tmax\t")
	fmt.Fprintf(tw, "GET /healthz\t%s\t\n", health)
	fmt.Fprintf(tw, "bystander keys' GET /v1/testers\t%s\t\n", others)
	if err := tw.Flush(); err != nil {
		return false, err
	}
	return health.N == settleProbes && others.N == settleProbes && health.P99 < healthzBar && others.P99 < healthzBar, nil
}
