package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// replayCommand is the hidden command the bare server runs as under
// valgrind: loadbench replay -recorded FILE -memprofile FILE.
const replayCommand = "replay"

// measuredEnv makes a Go process's instruction count repeatable: one
// thread running Go code; no preemption signals, whose timing would move
// work between runs; and no sampling of allocations for the heap profile,
// whose random samples walk stacks and grow the profile written at exit.
var measuredEnv = []string{"GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1,memprofilerate=0"}

// frozenAt is the sandbox's clock in the measurement, so that its answers,
// and the work of writing them, are the same in every run.
const frozenAt = "2026-01-01T00:00:00Z"

type instructionsOptions struct {
	requests, warmup, top, parallel int
	workloads                       string
	bars                            string
}

func instructionsFlags(fset *flag.FlagSet) func([]string, io.Writer) error {
	var o instructionsOptions
	fset.IntVar(&o.requests, "n", 1000, "requests of the shorter run; the longer sends 1000 more, and the difference is the cost of 1000")
	fset.IntVar(&o.warmup, "warmup", 50, "requests sent before either run's n, to fill caches and pools")
	fset.IntVar(&o.top, "top", 15, "functions of the sandbox listed per workload, by instructions in the 1000 requests; 0 for none")
	fset.IntVar(&o.parallel, "parallel", 2, "processes measured at once; the counts do not depend on it")
	fset.StringVar(&o.workloads, "workloads", "get,list,create,mix", "comma-separated workloads, in order: "+strings.Join(workloadNames(), ", "))
	fset.StringVar(&o.bars, "bars", "", "fail unless bare/sandbox reaches each of these, such as get=0.8,list=0.75,create=0.6")
	return func(args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		return runInstructions(o, out)
	}
}

// extraRequests is what the longer run adds to the shorter: per request
// figures are the difference over it.
const extraRequests = 1000

// counted is what one process under cachegrind did in its life.
type counted struct {
	instructions, allocations int64
	// profile is cachegrind's output file, for cg_diff and cg_annotate.
	profile string
}

// perRequest is one server's cost of a workload's request.
type perRequest struct {
	instructions, allocations float64
	// top is cg_annotate's table of the 1000 requests' functions.
	top string
}

func runInstructions(o instructionsOptions, out io.Writer) error {
	for _, tool := range []string{"valgrind", "cg_diff", "cg_annotate"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%w (Debian: apt-get install valgrind)", err)
		}
	}
	names, err := parseWorkloads(o.workloads)
	if err != nil {
		return err
	}
	bars, err := parseBars(o.bars)
	if err != nil {
		return err
	}
	began := time.Now()
	dir, err := os.MkdirTemp("", "loadbench-instructions")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// Without cgo the binaries make no C calls, whose libc code would
	// count too, and run on Go's own resolver and threads.
	sandboxBin, bareBin := filepath.Join(dir, "sandbox"), filepath.Join(dir, "loadbench")
	for bin, pkg := range map[string]string{sandboxBin: "./cmd/sandbox", bareBin: "./cmd/loadbench"} {
		build := exec.Command("go", "build", "-o", bin, "github.com/testcampaign/kit/"+strings.TrimPrefix(pkg, "./"))
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build %s: %w", pkg, err)
		}
	}
	sandboxFlags := append([]string{"-addr", "127.0.0.1:0", "-frozen-clock", frozenAt, "-log-format", "text"}, harness.Unlimited...)
	recordedFile, err := recordFor(dir, sandboxBin, sandboxFlags)
	if err != nil {
		return err
	}
	servers := map[string][]string{
		"sandbox": append([]string{sandboxBin}, sandboxFlags...),
		"bare":    {bareBin, replayCommand, "-recorded", recordedFile},
	}

	type job struct{ workload, server string }
	results := map[job]perRequest{}
	var mu sync.Mutex
	var errs []error
	slots := make(chan struct{}, max(o.parallel, 1))
	var wg sync.WaitGroup
	for _, name := range names {
		for _, server := range []string{"bare", "sandbox"} {
			wg.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				cost, err := measure(dir, servers[server], workloads[name], o, server == "sandbox")
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("%s, %s: %w", name, server, err))
					return
				}
				results[job{name, server}] = cost
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}

	fmt.Fprintf(out, "loadbench: cachegrind's instructions and the runtime's allocations per request, the difference of %d and %d requests after %d warm-up ones, each run a fresh process on one keep-alive connection; CGO_ENABLED=0, %s, %s UTC, in %s\n\n",
		o.requests, o.requests+extraRequests, o.warmup, strings.Join(measuredEnv, " "), time.Now().UTC().Format("2006-01-02 15:04"), time.Since(began).Round(time.Second))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tbare instructions\tsandbox instructions\tbare/sandbox\tbare allocations\tsandbox allocations\t")
	var below []string
	for _, name := range names {
		b, s := results[job{name, "bare"}], results[job{name, "sandbox"}]
		ratio := b.instructions / s.instructions
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f\t%.1f\t%.1f\t\n", name, b.instructions, s.instructions, ratio, b.allocations, s.allocations)
		if bar, ok := bars[name]; ok && ratio < bar {
			below = append(below, fmt.Sprintf("%s: bare/sandbox %.2f, below its bar of %.2f", name, ratio, bar))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if o.top > 0 {
		for _, name := range names {
			fmt.Fprintf(out, "\nthe sandbox, %s: the %d functions with the most instructions in %d requests (cg_annotate)\n%s", name, o.top, extraRequests, results[job{name, "sandbox"}].top)
		}
	}
	if len(below) > 0 {
		return errors.New(strings.Join(below, "; "))
	}
	return nil
}

func workloadNames() []string {
	return []string{"get", "list", "create", "mix", "analytics", "nomatch"}
}

func parseWorkloads(list string) ([]string, error) {
	var names []string
	for _, name := range strings.Split(list, ",") {
		if workloads[name] == nil {
			return nil, fmt.Errorf("unknown workload %q", name)
		}
		names = append(names, name)
	}
	return names, nil
}

// parseBars reads -bars: workload=ratio, comma-separated.
func parseBars(list string) (map[string]float64, error) {
	bars := map[string]float64{}
	if list == "" {
		return bars, nil
	}
	for _, pair := range strings.Split(list, ",") {
		name, value, ok := strings.Cut(pair, "=")
		bar, err := strconv.ParseFloat(value, 64)
		if !ok || err != nil || workloads[name] == nil || bar <= 0 {
			return nil, fmt.Errorf("-bars: %q is not workload=ratio, such as get=0.8", pair)
		}
		bars[name] = bar
	}
	return bars, nil
}

// recordFor starts the sandbox as the measurement does, without valgrind,
// records its answers for the bare server, and writes them to a file.
func recordFor(dir, sandboxBin string, flags []string) (string, error) {
	cmd := exec.Command(sandboxBin, flags...)
	cmd.Env = append(os.Environ(), measuredEnv...)
	s, err := harness.StartServer(cmd)
	if err != nil {
		return "", err
	}
	defer s.Stop()
	responses, err := record(s.Base)
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(responses)
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, "recorded.json")
	return file, os.WriteFile(file, raw, 0o600)
}

// measure runs server twice under cachegrind, each time in a fresh
// process sent warmup requests and then n or n+1000, and returns the cost
// of one request: the difference over 1000. With annotate, the table of
// the functions that cost the most in those 1000 comes with it.
func measure(dir string, server []string, requests []harness.Request, o instructionsOptions, annotate bool) (perRequest, error) {
	short, err := countRun(dir, server, requests, o.warmup+o.requests)
	if err != nil {
		return perRequest{}, err
	}
	long, err := countRun(dir, server, requests, o.warmup+o.requests+extraRequests)
	if err != nil {
		return perRequest{}, err
	}
	cost := perRequest{
		instructions: float64(long.instructions-short.instructions) / extraRequests,
		allocations:  float64(long.allocations-short.allocations) / extraRequests,
	}
	if annotate && o.top > 0 {
		cost.top, err = topFunctions(short.profile, long.profile, o.top)
	}
	return cost, err
}

// countRun starts server under cachegrind, sends it n requests cycling
// through requests on one keep-alive connection, stops it, and reads what
// it counted.
func countRun(dir string, server []string, requests []harness.Request, n int) (counted, error) {
	run, err := os.MkdirTemp(dir, "run")
	if err != nil {
		return counted{}, err
	}
	profile, memProfile := filepath.Join(run, "cachegrind.out"), filepath.Join(run, "heap.txt")
	args := append([]string{"--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=" + profile, "--log-file=" + filepath.Join(run, "valgrind.log")}, server...)
	args = append(args, "-memprofile", memProfile)
	cmd := exec.Command("valgrind", args...)
	cmd.Env = append(os.Environ(), measuredEnv...)
	s, err := harness.StartServer(cmd)
	if err != nil {
		return counted{}, err
	}
	client := harness.NewClient(1)
	for i := range n {
		if _, _, err := harness.Send(client, s.Base, harness.BenchKey, requests[i%len(requests)]); err != nil {
			s.Stop()
			return counted{}, err
		}
	}
	client.CloseIdleConnections()
	s.Stop()
	c := counted{profile: profile}
	if c.instructions, err = cachegrindTotal(profile); err != nil {
		return counted{}, err
	}
	if c.allocations, err = heapMallocs(memProfile); err != nil {
		return counted{}, err
	}
	return c, nil
}

// cachegrindTotal reads the instructions a cachegrind output file counts
// in all: its summary line.
func cachegrindTotal(file string) (int64, error) {
	return fieldOf(file, "summary:")
}

// heapMallocs reads the runtime's count of heap allocations from a heap
// profile written as text (pprof debug=1), which ends with MemStats.
func heapMallocs(file string) (int64, error) {
	return fieldOf(file, "# Mallocs =")
}

// fieldOf reads the number after prefix on the first line of file that
// starts with it.
func fieldOf(file, prefix string) (int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), prefix); ok {
			return strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		}
	}
	if err := lines.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s has no line %q", file, prefix)
}

// topFunctions is cg_annotate's table of the functions that differ most
// between two runs, that is, that cost the most in the requests the longer
// one added, cut to its first top rows.
func topFunctions(short, long string, top int) (string, error) {
	diff := long + ".diff"
	cmd := exec.Command("cg_diff", short, long)
	raw, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("cg_diff: %w", err)
	}
	if err := os.WriteFile(diff, raw, 0o600); err != nil {
		return "", err
	}
	annotated, err := exec.Command("cg_annotate", "--auto=no", diff).Output()
	if err != nil {
		return "", fmt.Errorf("cg_annotate: %w", err)
	}
	return functionTable(annotated, top), nil
}

// functionTable picks, from cg_annotate's report, the rows of its
// function table after the line naming its columns, top of them.
func functionTable(report []byte, top int) string {
	var b strings.Builder
	rows := -1
	for line := range bytes.Lines(report) {
		text := string(bytes.TrimRight(line, "\n"))
		switch {
		case rows < 0 && strings.Contains(text, "file:function"):
			rows = 0
		case rows >= 0 && rows < top && strings.TrimSpace(text) != "" && !strings.HasPrefix(text, "--"):
			fmt.Fprintf(&b, "  %s\n", strings.TrimSpace(text))
			rows++
		}
	}
	return b.String()
}

// replayFlags serves the bare server alone, on recorded answers, as
// measure starts it under cachegrind: it writes its URL on standard output
// and, when interrupted, its heap profile, whose end counts allocations.
func replayFlags(fset *flag.FlagSet) func([]string, io.Writer) error {
	var recordedFile, memProfile string
	fset.StringVar(&recordedFile, "recorded", "", "the answers to replay, as loadbench instructions wrote them")
	fset.StringVar(&memProfile, "memprofile", "", "write the heap profile, as text, here when interrupted")
	return func(args []string, out io.Writer) error {
		if err := noArgs(args); err != nil {
			return err
		}
		raw, err := os.ReadFile(recordedFile)
		if err != nil {
			return err
		}
		var responses map[string]recorded
		if err := json.Unmarshal(raw, &responses); err != nil {
			return fmt.Errorf("%s: %w", recordedFile, err)
		}
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		srv := &http.Server{Handler: bare(responses)}
		go func() { _ = srv.Serve(listener) }()
		fmt.Fprintf(out, "http://%s\n", listener.Addr())
		<-ctx.Done()
		_ = srv.Close()
		if memProfile == "" {
			return nil
		}
		return writeHeapProfile(memProfile)
	}
}

// writeHeapProfile writes the heap profile as text, runtime.MemStats at its
// end, as the sandbox's -memprofile does.
func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	err = pprof.Lookup("heap").WriteTo(f, 1)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return err
}
