package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// needWrk skips a test that drives wrk on a developer's machine without it,
// and fails it in CI (CI set), where .ci/run installs it.
func needWrk(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("wrk"); err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal("wrk is not installed; .ci/run installs it from Debian's packages")
	}
	t.Skip("wrk is not installed (apt-get install wrk); CI runs this test")
}

func TestThroughputReportsEveryWorkloadAgainstTheBareServer(t *testing.T) {
	needWrk(t)
	var out, errOut bytes.Buffer
	err := run([]string{"throughput", "-duration", "1s", "-rounds", "1", "-c", "2", "-workloads", "get,list,create,mix"}, nil, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	for _, name := range []string{"get", "list", "create", "mix"} {
		row := rowOf(out.String(), name)
		// The name, two rates, their ratio and the rounds' spread of it,
		// six latencies and a ratio, four CPU shares, the errors.
		if len(row) != 19 || row[len(row)-1] != "0" || row[1] == "0" || row[2] == "0" || !strings.HasSuffix(row[3], "×") ||
			row[4] != strings.TrimSuffix(row[3], "×")+"–"+strings.TrimSuffix(row[3], "×") {
			t.Errorf("workload %s: row %q, want one with both rates and no errors in:\n%s", name, row, out.String())
		}
	}
}

func TestMemoryReportsEachScenario(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"memory", "-c", "2", "-creates", "200", "-fresh-keys", "50", "-records", "30"}, nil, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
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
	var out, errOut bytes.Buffer
	if err := run([]string{"soak", "-for", "1500ms", "-every", "500ms", "-c", "2"}, nil, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "from the middle of the run to its end") || strings.Count(out.String(), "MiB") < 3 {
		t.Errorf("soak output lacks samples or the verdict:\n%s", out.String())
	}
}

func TestCommandLinesThatAreWrongSayWhy(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "usage: loadbench COMMAND"},
		{[]string{"throughput-please"}, `unknown command "throughput-please"`},
		{[]string{"attack"}, "name an attack, or all"},
		{[]string{"attack", "nosuch"}, `unknown attack "nosuch"`},
		{[]string{"memory", "extra"}, "unexpected arguments"},
		{[]string{"throughput", "-workloads", "get,nosuch", "-wrk", "true"}, `unknown workload "nosuch"`},
		{[]string{"throughput", "-duration", "1500ms", "-wrk", "true"}, "-duration 1.5s: wrk runs for whole seconds"},
		{[]string{"throughput", "-duration", "500ms", "-wrk", "true"}, "-duration 500ms: wrk runs for whole seconds"},
	} {
		var out, errOut bytes.Buffer
		err := run(c.args, nil, &out, &errOut)
		if err == nil || !strings.Contains(err.Error()+errOut.String(), c.want) {
			t.Errorf("loadbench %q: error %v, output %q; want one saying %q", c.args, err, errOut.String(), c.want)
		}
	}
}

// TestServeReplaysTheSandboxsBytes checks what the ratios rest on: the bare
// server answers each read with the very body the sandbox answers.
func TestServeReplaysTheSandboxsBytes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	reader, writer := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- serve(ctx, serverOptions{}, writer)
		writer.Close()
	}()
	line, err := bufio.NewReader(reader).ReadString('\n')
	if err != nil {
		t.Fatal(err, <-served)
	}
	var where struct {
		Sandbox, Bare, Key string
		Requests           []string
	}
	if err := json.Unmarshal([]byte(line), &where); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	client := harness.NewClient(1)
	reads := 0
	for _, requestLine := range where.Requests {
		method, target, _ := strings.Cut(requestLine, " ")
		if method != http.MethodGet {
			continue
		}
		reads++
		r := harness.Request{Method: method, Target: target}
		_, fromSandbox, err := harness.Send(client, where.Sandbox, where.Key, r)
		if err != nil {
			t.Fatal(err)
		}
		_, fromBare, err := harness.Send(client, where.Bare, where.Key, r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fromSandbox, fromBare) {
			t.Errorf("%s: the bare server answers\n%s\nthe sandbox\n%s", requestLine, fromBare, fromSandbox)
		}
	}
	if reads < 5 {
		t.Errorf("only %d reads recorded: %q", reads, where.Requests)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

// needValgrind skips a test that runs cachegrind on a machine without it;
// .ci/run installs it for its last step, which runs the whole measurement.
func needValgrind(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("valgrind"); err != nil {
		t.Skip("valgrind is not installed (apt-get install valgrind)")
	}
}

func TestInstructionsCountsBothServersAndNamesTheSandboxsFunctions(t *testing.T) {
	needValgrind(t)
	var out, errOut bytes.Buffer
	err := run([]string{"instructions", "-workloads", "get", "-n", "10", "-warmup", "5", "-top", "3"}, nil, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	// The name, two counts of instructions, their ratio, two of allocations.
	row := rowOf(out.String(), "get")
	if len(row) != 6 {
		t.Fatalf("row %q, want six columns in:\n%s", row, out.String())
	}
	bare, errBare := strconv.ParseFloat(row[1], 64)
	sandbox, errSandbox := strconv.ParseFloat(row[2], 64)
	if errBare != nil || errSandbox != nil || bare < 1000 || sandbox < bare {
		t.Errorf("bare %s and sandbox %s instructions a request: want thousands, the sandbox's more:\n%s", row[1], row[2], out.String())
	}
	if got := strings.Count(out.String(), "sandbox/httpapi.") + strings.Count(out.String(), "runtime."); got == 0 {
		t.Errorf("the table of the sandbox's functions names none of its own or the runtime's:\n%s", out.String())
	}
}

func TestInstructionsRefusesABarItCannotRead(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run([]string{"instructions", "-bars", "get=fast"}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "get=fast") {
		t.Errorf("got %v, want -bars refused naming get=fast", err)
	}
}
