// Package harness is what loadbench's measurements share: the real sandbox
// binary, built for the run and started on a loopback port, a client for
// it, and readings of a process from /proc.
package harness

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// BenchKey is the key of the measurements that need one account.
const BenchKey = "svc_test_loadbench_0123456789"

// CreateBody is a valid campaign.
const CreateBody = `{"name":"Load","platform":"android","testersRequired":3,"rewardPerBug":0.5}`

// Request is one request to send: its body, if any, is JSON.
type Request struct {
	Method, Target, Body string
}

// Line is the request line, without the protocol.
func (r Request) Line() string { return r.Method + " " + r.Target }

// GetCampaign is a read whose cost does not grow with the account.
var GetCampaign = Request{"GET", "/v1/campaigns/cmp_000001", ""}

// Server is a child process serving on a loopback port.
type Server struct {
	Cmd  *exec.Cmd
	Base string
}

// BuildSandbox builds cmd/sandbox into a temporary directory, so that what is
// measured is the real binary with its real server settings; cleanup removes
// the directory.
func BuildSandbox() (bin string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "loadbench")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	bin = filepath.Join(dir, "sandbox")
	build := exec.Command("go", "build", "-o", bin, "github.com/testcampaign/kit/cmd/sandbox")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("build the sandbox: %w", err)
	}
	return bin, cleanup, nil
}

// Unlimited are rate limits no load here reaches: the measurements measure
// serving, not refusing. Every load comes from one address, and the memory
// run opens thousands of accounts, so the client budgets are off too.
var Unlimited = []string{
	"-rate-limit-minute", "2000000000", "-rate-limit-hour", "2000000000", "-rate-limit-day", "2000000000",
	"-control-limit-minute", "2000000000", "-client-limit-minute", "0", "-client-new-accounts-minute", "0",
}

// StartSandbox runs the sandbox binary on a free loopback port without rate
// limits, and drops its log.
func StartSandbox(bin string, env []string, flags ...string) (*Server, error) {
	return StartSandboxLogging(bin, env, io.Discard, append(slices.Clone(Unlimited), flags...)...)
}

// StartSandboxLogging runs the sandbox binary on a free loopback port with
// flags and no others, and hands its log to logs (nil drops it). The port
// comes from the one line the sandbox writes on standard output.
func StartSandboxLogging(bin string, env []string, logs io.Writer, flags ...string) (*Server, error) {
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, flags...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = logs
	return StartServer(cmd)
}

// StartServer starts cmd, a server that writes where it listens as the one
// line of its standard output (the sandbox, or one under valgrind), and
// holds it to loopback.
func StartServer(cmd *exec.Cmd) (*Server, error) {
	url, err := startAnnouncing(cmd)
	if err != nil {
		return nil, fmt.Errorf("%s did not say where it listens: %w", filepath.Base(cmd.Path), err)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s listens at %q, not on loopback", filepath.Base(cmd.Path), url)
	}
	return &Server{Cmd: cmd, Base: url}, nil
}

// startAnnouncing starts a server and returns the first line it writes on
// standard output, where it says where it listens.
func startAnnouncing(cmd *exec.Cmd) (string, error) {
	announced, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(announced).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// Stop asks the server to shut down, as an operator would, so that it
// writes what it writes at exit (a CPU profile); it kills it if it has not
// stopped within stopGrace.
func (s *Server) Stop() {
	if err := s.Cmd.Process.Signal(os.Interrupt); err != nil {
		_ = s.Cmd.Process.Kill()
	}
	timer := time.AfterFunc(stopGrace, func() { _ = s.Cmd.Process.Kill() })
	defer timer.Stop()
	_ = s.Cmd.Wait()
}

// stopGrace is longer than the sandbox's own shutdown grace period.
const stopGrace = 15 * time.Second

// NewClient is a client that keeps up to connections connections alive.
func NewClient(connections int) *http.Client {
	return &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: connections, MaxConnsPerHost: connections},
	}
}

// NewRequest is request r on key, which may be empty for none.
func NewRequest(base, key string, r Request) (*http.Request, error) {
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(r.Body)
	}
	req, err := http.NewRequest(r.Method, base+r.Target, body)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if r.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// Send sends r on key and reads the whole answer; any status but 200 is an
// error.
func Send(client *http.Client, base, key string, r Request) (*http.Response, []byte, error) {
	req, err := NewRequest(base, key, r)
	if err != nil {
		return nil, nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("%.200s: status %d: %.200s", r.Line(), res.StatusCode, raw)
	}
	return res, raw, err
}

// Spread is a set of latencies as the tables show them.
type Spread struct {
	N             int
	P50, P99, Max time.Duration
}

// SpreadOf takes the p99 of 100 as the 100th.
func SpreadOf(latencies []time.Duration) Spread {
	s := Spread{N: len(latencies)}
	if s.N == 0 {
		return s
	}
	sorted := slices.Sorted(slices.Values(latencies))
	s.P50, s.P99, s.Max = sorted[s.N/2], sorted[s.N*99/100], sorted[s.N-1]
	return s
}

func (s Spread) String() string {
	return fmt.Sprintf("%d\t%s\t%s\t%s", s.N, MS(s.P50), MS(s.P99), MS(s.Max))
}

// MS prints a latency at a resolution a loaded machine can tell apart.
func MS(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// MiB prints a size in MiB.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// LoadAverage is the machine's load over the last 1, 5 and 15 minutes.
func LoadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}

// CPUTime is the CPU time all threads of a process have used so far, from
// their scheduler statistics, which count nanoseconds rather than ticks.
func CPUTime(pid int) (time.Duration, error) {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(stats) == 0 {
		return 0, fmt.Errorf("no scheduler statistics for pid %d", pid)
	}
	var total time.Duration
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			// A thread that ended between the listing and the read.
			continue
		}
		ns, err := strconv.ParseInt(strings.Fields(string(raw))[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// RSS is the resident memory of a process, from /proc.
func RSS(pid int) (int64, error) {
	rest, err := ProcLine(pid, "status", "VmRSS:")
	if err != nil {
		return 0, err
	}
	var kb int64
	_, err = fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb)
	return kb << 10, err
}

// PeakRSS samples the resident memory of a process from now until stop is
// called, which returns the largest sample; stop may be called again, as by
// a defer, and returns the same. It samples every 5 ms because a burst of
// large bodies may be read, answered and freed within a few.
func PeakRSS(pid int) (stop func() int64) {
	var peak int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if now, err := RSS(pid); err == nil {
				peak = max(peak, now)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return sync.OnceValue(func() int64 {
		close(done)
		<-sampled
		return peak
	})
}

// ProcLine is the rest of the line of /proc/PID/file that starts with name.
func ProcLine(pid int, file, name string) (string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			return rest, nil
		}
	}
	return "", fmt.Errorf("no %q in /proc/%d/%s", name, pid, file)
}
