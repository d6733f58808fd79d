package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// logSink is a log's destination that tells the test when it was written.
type logSink struct {
	mu    sync.Mutex
	text  strings.Builder
	wrote chan struct{}
}

func newLogSink() *logSink { return &logSink{wrote: make(chan struct{}, 1)} }

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text.Write(p)
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

func TestBufferedLogWritesOnTickOnCloseAndAfterIt(t *testing.T) {
	sink := newLogSink()
	ticks := make(chan time.Time)
	logs := newBufferedLog(sink, ticks)
	_, _ = logs.Write([]byte("level=INFO msg=request path=/v1/campaigns\n"))
	_, _ = logs.Write([]byte("level=INFO msg=request path=/v1/bugs\n"))
	if got := sink.String(); got != "" {
		t.Fatalf("written before any tick: %q", got)
	}

	ticks <- time.Time{}
	select {
	case <-sink.wrote:
	case <-time.After(10 * time.Second):
		t.Fatal("a tick did not write the buffered lines out")
	}
	want := "level=INFO msg=request path=/v1/campaigns\nlevel=INFO msg=request path=/v1/bugs\n"
	if got := sink.String(); got != want {
		t.Fatalf("after a tick the log holds %q, want %q", got, want)
	}

	_, _ = logs.Write([]byte("level=INFO msg=\"shutting down\"\n"))
	if err := logs.Close(); err != nil {
		t.Fatal(err)
	}
	want += "level=INFO msg=\"shutting down\"\n"
	if got := sink.String(); got != want {
		t.Fatalf("after Close the log holds %q, want %q", got, want)
	}
	_, _ = logs.Write([]byte("level=INFO msg=late\n"))
	if got := sink.String(); !strings.HasSuffix(got, "msg=late\n") {
		t.Fatalf("a line logged after Close was kept back: %q", got)
	}
}

// Every request's line reaches the log by the time run returns, with the
// key's hint and never the key.
func TestRunLogsEveryRequestByExit(t *testing.T) {
	const key = "svc_test_logged_until_exit_7q2w"
	sink := newLogSink()
	announced, announce := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{addr: "127.0.0.1:0", announce: announce}, sink)
		announce.Close()
	}()
	base, err := bufio.NewReader(announced).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("no address announced: %v, %v", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, announced) }()
	const requests = 5
	for range requests {
		req, _ := http.NewRequest("GET", strings.TrimSpace(base)+"/v1/campaigns?limit=1", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	log := sink.String()
	if n := strings.Count(log, "path=/v1/campaigns status=200"); n != requests {
		t.Errorf("%d request lines logged for %d requests:\n%s", n, requests, log)
	}
	if strings.Contains(log, key) || !strings.Contains(log, "key=svc_test_") {
		t.Errorf("the log must name the key by its hint only:\n%s", log)
	}
}
