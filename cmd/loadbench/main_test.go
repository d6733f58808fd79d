package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as loadbench's child servers, as the
// real binary does.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == serveCommand {
		if err := serve(os.Args[2:]); err != nil {
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == tenantCommand {
		if err := runTenant(os.Args[2:], os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

func TestThroughputReportsEveryWorkloadAgainstTheBaseline(t *testing.T) {
	var out bytes.Buffer
	err := runThroughput(options{duration: 100 * time.Millisecond, rounds: 1, connections: 2, workloads: "get,list,create,mix"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"get", "list", "create", "mix"} {
		row := rowOf(out.String(), name)
		if row == nil || row[len(row)-1] != "0" {
			t.Errorf("workload %s: row %q, want one with no errors in:\n%s", name, row, out.String())
		}
	}
}

func TestMemoryReportsEachScenario(t *testing.T) {
	var out bytes.Buffer
	if err := runMemory(options{connections: 2, creates: 200, freshKeys: 50, records: 30}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "200 creates, one key") || !strings.Contains(out.String(), "50 fresh keys") ||
		!strings.Contains(out.String(), "30 campaigns and 30 bugs") {
		t.Errorf("output lacks a scenario:\n%s", out.String())
	}
}

func rowOf(table, name string) []string {
	for _, line := range strings.Split(table, "\n") {
		if fields := strings.Fields(line); len(fields) > 0 && fields[0] == name {
			return fields
		}
	}
	return nil
}

func TestSoakSamplesUntilTheEnd(t *testing.T) {
	var out bytes.Buffer
	if err := runSoak(options{connections: 2, soak: 1500 * time.Millisecond, soakEvery: 500 * time.Millisecond}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "from the middle of the run to its end") || strings.Count(out.String(), "MiB") < 3 {
		t.Errorf("soak output lacks samples or the verdict:\n%s", out.String())
	}
}

func TestWebhookAttackCountsALostDeliveryAsNever(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := &victimReceiver{arrived: map[string]time.Time{}}
	sent := map[string]time.Time{}
	for i := range 100 {
		name := strconv.Itoa(i)
		sent[name] = start
		if i != 0 {
			v.arrived[name] = start.Add(time.Duration(i) * time.Millisecond)
		}
	}
	got := v.latency(sent)
	// As the throughput figures do, p99 of 100 is the 100th: one lost
	// delivery in a hundred fails the bar.
	if got.sent != 100 || got.delivered != 99 || got.p50 != 51*time.Millisecond || got.p99 != never || got.max != never {
		t.Errorf("latency = %+v, want 99 of 100 delivered, p50 51ms, and p99 and max the lost one", got)
	}
	if shown(got.max) != "never" {
		t.Errorf("a lost delivery shows as %q", shown(got.max))
	}
}
