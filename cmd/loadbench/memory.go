package main

import (
	"flag"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

type memoryOptions struct {
	connections                 int
	creates, freshKeys, records int
	gomemlimit                  string
}

func memoryFlags(fset *flag.FlagSet) func([]string, io.Writer) error {
	var o memoryOptions
	fset.IntVar(&o.connections, "c", 32, "concurrent keep-alive connections")
	fset.IntVar(&o.creates, "creates", 200_000, "creates in one account")
	fset.IntVar(&o.freshKeys, "fresh-keys", 20_000, "fresh keys, each making one read")
	fset.IntVar(&o.records, "records", 0, "also this many campaigns and as many bugs in one account (1000000 takes minutes)")
	fset.StringVar(&o.gomemlimit, "gomemlimit", "", "GOMEMLIMIT for the sandbox process (e.g. 1GiB); empty leaves it unset")
	return func(args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		return runMemory(o, out)
	}
}

func runMemory(opts memoryOptions, out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tRSS before\tRSS after\tadded\tper item\t")
	steps := []struct {
		name  string
		items int
		drive func(base string) error
	}{
		{fmt.Sprintf("%d creates, one key", opts.creates), opts.creates, func(base string) error {
			return drive(base, opts.connections, opts.creates, func(i int) (string, harness.Request) {
				return harness.BenchKey, harness.Request{Method: "POST", Target: "/v1/campaigns", Body: harness.CreateBody}
			})
		}},
		{fmt.Sprintf("%d campaigns and %d bugs, one key", opts.records, opts.records), 2 * opts.records, func(base string) error {
			return drive(base, opts.connections, 2*opts.records, func(i int) (string, harness.Request) {
				if i%2 == 0 {
					return harness.BenchKey, harness.Request{Method: "POST", Target: "/v1/campaigns", Body: harness.CreateBody}
				}
				return harness.BenchKey, harness.Request{Method: "POST", Target: "/_sandbox/bugs", Body: `{"campaignId":"cmp_000001","title":"Crash on login","description":"Tap login twice quickly.","severity":"high"}`}
			})
		}},
		{fmt.Sprintf("%d fresh keys, one read each", opts.freshKeys), opts.freshKeys, func(base string) error {
			return drive(base, opts.connections, opts.freshKeys, func(i int) (string, harness.Request) {
				return fmt.Sprintf("svc_test_fresh_%08d", i), harness.Request{Method: "GET", Target: "/v1/campaigns/cmp_000001"}
			})
		}},
	}
	bin, cleanup, err := harness.BuildSandbox()
	if err != nil {
		return err
	}
	defer cleanup()
	for _, step := range steps {
		if step.items == 0 {
			continue
		}
		// Room for a million records on top of the seed.
		sb, err := harness.StartSandbox(bin, memLimitEnv(opts.gomemlimit), "-max-records", "100000000")
		if err != nil {
			return err
		}
		// One request first, so the baseline includes a warm server.
		if _, _, err := harness.Send(harness.NewClient(1), sb.Base, harness.BenchKey, harness.Request{Method: "GET", Target: "/v1/testers"}); err != nil {
			sb.Stop()
			return err
		}
		before, _ := harness.RSS(sb.Cmd.Process.Pid)
		if err := step.drive(sb.Base); err != nil {
			sb.Stop()
			return err
		}
		after, err := harness.RSS(sb.Cmd.Process.Pid)
		sb.Stop()
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d B\t\n", step.name, harness.MiB(before), harness.MiB(after), harness.MiB(after-before), (after-before)/int64(step.items))
	}
	return tw.Flush()
}

// drive sends n requests from connections workers; request i uses the key
// and request that pick returns.
func drive(base string, connections, n int, pick func(i int) (string, harness.Request)) error {
	client := harness.NewClient(connections)
	next := make(chan int)
	errs := make(chan error, connections)
	var wg sync.WaitGroup
	for range connections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				key, r := pick(i)
				if _, _, err := harness.Send(client, base, key, r); err != nil {
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
