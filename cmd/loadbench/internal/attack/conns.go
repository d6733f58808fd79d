package attack

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// healthzBar is what new clients' /healthz p99 must stay under while idle
// connections crowd the sandbox.
const healthzBar = 100 * time.Millisecond

// fdHeadroom is what this process keeps of its open-file limit for the
// probes, the sandbox's pipes and the runtime.
const fdHeadroom = 200

// attackConns opens idle keep-alive connections, as many as the
// attack or as this process may, each after one request, then measures new
// clients' /healthz against the same probes before them.
func attackConns(bin string, a Sizes, out io.Writer) (bool, error) {
	want, limitNote, err := raiseFileLimit(a.conns)
	if err != nil {
		return false, err
	}
	var flags []string
	if a.maxConns > 0 {
		flags = append(flags, "-max-conns", strconv.Itoa(a.maxConns))
	}
	logs := newLogCapture()
	sb, err := harness.StartSandboxLogging(bin, nil, logs, flags...)
	if err != nil {
		return false, err
	}
	defer sb.Stop()
	pid := sb.Cmd.Process.Pid
	maxConns, err := logs.value("max_conns")
	if err != nil {
		return false, err
	}
	sandboxLimit, err := fileLimit(pid)
	if err != nil {
		return false, err
	}
	alone := probeHealthz(sb.Base, a.probes)
	rssBefore, _ := harness.RSS(pid)
	filesBefore, _ := openFiles(pid)
	idle, failed := openIdle(sb.Base, want)
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	rssAfter, _ := harness.RSS(pid)
	filesAfter, _ := openFiles(pid)
	during := probeHealthz(sb.Base, a.probes)
	closed := closedByPeer(idle)

	fmt.Fprintf(out, "%s; the sandbox's open-file limit is %d, its connection cap (-max-conns) %s\n", limitNote, sandboxLimit, maxConns)
	fmt.Fprintf(out, "idle keep-alive connections: %d opened, one request each (%d failed); the sandbox closed %d of them by the end\n", len(idle), failed, closed)
	fmt.Fprintf(out, "sandbox: RSS %s -> %s (%+.1f MiB), open files %d -> %d\n", harness.MiB(rssBefore), harness.MiB(rssAfter), float64(rssAfter-rssBefore)/(1<<20), filesBefore, filesAfter)
	fmt.Fprintf(out, "new clients' GET /healthz, one connection each, 4 at a time; bar: all answered, p99 under %v\n", healthzBar)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tanswered\tp50\tp99\tmax\t")
	fmt.Fprintf(tw, "alone (baseline)\t%s\t\n", alone)
	fmt.Fprintf(tw, "beside %d idle connections\t%s\t\n", len(idle), during)
	if err := tw.Flush(); err != nil {
		return false, err
	}
	return during.N == a.probes && during.P99 < healthzBar, nil
}

// raiseFileLimit lifts this process's open-file soft limit to its hard
// limit and says how many idle connections it allows, want at most.
func raiseFileLimit(want int) (int, string, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, "", err
	}
	rl.Cur = rl.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, "", err
	}
	allowed := int(min(rl.Max, 1<<30)) - fdHeadroom
	if want <= allowed {
		return want, fmt.Sprintf("loadbench's open-file limit is %d", rl.Max), nil
	}
	return allowed, fmt.Sprintf("loadbench's open-file hard limit is %d, too low for %d connections: %d instead", rl.Max, want, allowed), nil
}

// probeHealthz asks /healthz n times as new clients, each on a new
// connection, and returns the latencies of the 200s.
func probeHealthz(base string, n int) harness.Spread {
	return probe(base, "/healthz", n, func(int) string { return "" })
}

// probe asks GET target n times, 4 at a time, as new clients with the key
// keyOf(i), each on a new connection so that every probe pays for a place
// under the connection cap; it returns the latencies of the 200s.
func probe(base, target string, n int, keyOf func(i int) string) harness.Spread {
	const workers = 4
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var (
		mu        sync.Mutex
		latencies []time.Duration
	)
	inParallel(n, workers, func(i int) {
		began := time.Now()
		got, err := ask(client, base, keyOf(i), harness.Request{Method: "GET", Target: target})
		if err == nil && got.status == http.StatusOK {
			mu.Lock()
			latencies = append(latencies, time.Since(began))
			mu.Unlock()
		}
	})
	return harness.SpreadOf(latencies)
}

// openIdle opens n connections, 64 at a time, makes one request on each and
// leaves it idle; it returns the connections and how many failed.
func openIdle(base string, n int) ([]net.Conn, int) {
	const workers = 64
	addr := strings.TrimPrefix(base, "http://")
	hello := "GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"
	var (
		mu     sync.Mutex
		conns  []net.Conn
		failed int
	)
	inParallel(n, workers, func(int) {
		c, err := oneRequest(addr, hello)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failed++
		} else {
			conns = append(conns, c)
		}
	})
	return conns, failed
}

// oneRequest dials addr, sends raw and reads its answer, and returns the
// connection, kept alive and idle.
func oneRequest(addr, raw string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	res, err := func() (*http.Response, error) {
		if _, err := io.WriteString(c, raw); err != nil {
			return nil, err
		}
		return http.ReadResponse(bufio.NewReader(c), nil)
	}()
	if err == nil {
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", res.StatusCode)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// closedByPeer counts the connections the other end has closed, by peeking
// at each without waiting.
func closedByPeer(conns []net.Conn) int {
	closed := 0
	peek := make([]byte, 1)
	for _, c := range conns {
		raw, err := c.(*net.TCPConn).SyscallConn()
		if err != nil {
			continue
		}
		var n int
		var readErr error
		_ = raw.Read(func(fd uintptr) bool {
			n, _, readErr = syscall.Recvfrom(int(fd), peek, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			return true
		})
		if n == 0 && readErr != syscall.EAGAIN {
			closed++
		}
	}
	return closed
}
