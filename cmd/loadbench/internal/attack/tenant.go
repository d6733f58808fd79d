package attack

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// TenantCommand is the command of loadbench that runs the tenant whose
// reads the bodies attack times: loadbench re-executes itself with it, so
// that the attack's senders, their buffers and their garbage share no
// process with the tenant. Its arguments are the base URL, the key and the
// interval.
const TenantCommand = "tenant"

// RunTenant reads one campaign on key every interval until its standard
// input closes, and writes each read's latency in nanoseconds, or "failed",
// a line each.
func RunTenant(args []string, stdin io.Reader, out io.Writer) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: %s BASE KEY INTERVAL", TenantCommand)
	}
	base, key := args[0], args[1]
	every, err := time.ParseDuration(args[2])
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(stop)
	}()
	client := harness.NewClient(1)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		began := time.Now()
		if _, _, err := harness.Send(client, base, key, harness.GetCampaign); err != nil {
			fmt.Fprintln(out, "failed")
		} else {
			fmt.Fprintln(out, time.Since(began).Nanoseconds())
		}
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
	}
}

// tenantPhase is what the tenant's reads came to in one phase.
type tenantPhase struct {
	latencies []time.Duration
	failed    int
}

// tenantProcess is the tenant running as a child process. Each read counts
// in the phase that is current when its line arrives.
type tenantProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	read  chan struct{}

	mu     sync.Mutex
	phases []tenantPhase
}

// startTenant starts the tenant's reads on key, in a first phase.
func startTenant(base, key string, every time.Duration) (*tenantProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, TenantCommand, base, key, every.String())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	lines, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t := &tenantProcess{cmd: cmd, stdin: stdin, read: make(chan struct{}), phases: []tenantPhase{{}}}
	go func() {
		defer close(t.read)
		scanner := bufio.NewScanner(lines)
		for scanner.Scan() {
			ns, err := strconv.ParseInt(scanner.Text(), 10, 64)
			t.mu.Lock()
			p := &t.phases[len(t.phases)-1]
			if err != nil {
				p.failed++
			} else {
				p.latencies = append(p.latencies, time.Duration(ns))
			}
			t.mu.Unlock()
		}
	}()
	return t, nil
}

// nextPhase counts the reads from now on apart.
func (t *tenantProcess) nextPhase() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.phases = append(t.phases, tenantPhase{})
}

// stop ends the reads and returns every phase's.
func (t *tenantProcess) stop() ([]tenantPhase, error) {
	t.stdin.Close()
	<-t.read
	if err := t.cmd.Wait(); err != nil {
		return nil, fmt.Errorf("the tenant: %w", err)
	}
	return t.phases, nil
}
