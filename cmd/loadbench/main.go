// Command loadbench measures the sandbox against a bare net/http server that
// writes the same bytes, over loopback, with the same load for both. The
// sandbox is the real cmd/sandbox binary, built for the run; the baseline is
// this binary re-executed; the rounds alternate between them so that a noisy
// machine hurts both alike, and the figures it prints are ratios with their
// latency percentiles.
//
//	go run ./cmd/loadbench                   # throughput: get, list, create, mix
//	go run ./cmd/loadbench -seed-bugs 200000 -workloads get,analytics,nomatch
//	go run ./cmd/loadbench -memory           # RSS: 200,000 creates, 20,000 fresh keys
//	go run ./cmd/loadbench -soak 10m         # RSS, goroutines and accounts over a long mixed run
//	go run ./cmd/loadbench -webhook-attack   # another account's deliveries while keys' webhooks hang
//	go run ./cmd/loadbench -attack all       # issue 17's other attacks, each against its bar
//
// It only ever talks to 127.0.0.1, and every run is bounded by its flags.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

type options struct {
	duration    time.Duration
	rounds      int
	connections int
	workloads   string
	memory      bool
	creates     int
	freshKeys   int
	records     int
	gomemlimit  string
	cpuProfile  string
	seedBugs    int
	soak        time.Duration
	soakEvery   time.Duration
	// webhookAttack is its own mode, in webhookattack.go.
	webhookAttack webhookAttack
	// attacks are the other attacks, in attack.go.
	attacks attacks
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == serveCommand {
		if err := serve(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench serve:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == tenantCommand {
		if err := runTenant(os.Args[2:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench tenant:", err)
			os.Exit(1)
		}
		return
	}
	var opts options
	flag.DurationVar(&opts.duration, "duration", 5*time.Second, "length of one round against one server")
	flag.IntVar(&opts.rounds, "rounds", 3, "rounds per server and workload; the median is reported")
	flag.IntVar(&opts.connections, "c", 32, "concurrent keep-alive connections")
	flag.StringVar(&opts.workloads, "workloads", "get,list,create,mix", "comma-separated workloads to run, in order: get, list, create, mix, analytics, nomatch")
	flag.IntVar(&opts.seedBugs, "seed-bugs", 0, "seed every account with this many bugs (none critical) through -fixtures instead of the embedded fixtures")
	flag.BoolVar(&opts.memory, "memory", false, "measure the sandbox's RSS instead of its throughput")
	flag.IntVar(&opts.creates, "creates", 200_000, "with -memory: creates in one account")
	flag.IntVar(&opts.freshKeys, "fresh-keys", 20_000, "with -memory: fresh keys, each making one read")
	flag.IntVar(&opts.records, "records", 0, "with -memory: also this many campaigns and as many bugs in one account (1000000 takes minutes)")
	flag.DurationVar(&opts.soak, "soak", 0, "run a soak of this length instead: fresh keys, webhooks to hanging, failing and redirecting receivers, oversized inputs")
	flag.DurationVar(&opts.soakEvery, "soak-every", 10*time.Second, "with -soak: how often to print RSS, goroutines and accounts")
	flag.StringVar(&opts.gomemlimit, "gomemlimit", "", "GOMEMLIMIT for the sandbox process (e.g. 1GiB); empty leaves it unset")
	flag.StringVar(&opts.cpuProfile, "cpuprofile", "", "write the sandbox's CPU profile of a throughput run to this file")
	opts.webhookAttack.flags(flag.CommandLine)
	opts.attacks.flags(flag.CommandLine)
	flag.Parse()
	run := runThroughput
	switch {
	case opts.attacks.names != "":
		run = runAttacks
	case opts.webhookAttack.enabled:
		run = runWebhookAttack
	case opts.soak > 0:
		run = runSoak
	case opts.memory:
		run = runMemory
	}
	if err := run(opts, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}
