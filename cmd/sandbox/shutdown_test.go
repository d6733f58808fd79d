package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestShutdownCutsStalledBodiesAndExitsCleanly(t *testing.T) {
	base, stop := startRun(t, config{grace: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A body that promises 100 bytes and stalls after 10.
	fmt.Fprint(conn, "POST /v1/campaigns HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer svc_test_stalling_key\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":\"S")
	if err := stop(); err != nil {
		t.Errorf("run returned %v after shutdown with a stalled body, want a clean stop", err)
	}
}

func TestATrickleLongerThanTheWriteTimeoutArrivesWhole(t *testing.T) {
	cfg := config{}
	cfg.app.WriteTimeout = 100 * time.Millisecond
	base, stop := startRun(t, cfg)
	defer stop()
	send := func(method, path, body string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer svc_test_trickled_key")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatalf("%s %s: read %d bytes: %v", method, path, len(raw), err)
		}
		return res, raw
	}
	if res, raw := send("POST", "/_sandbox/faults", `{"network":"trickle","trickleMs":600,"count":1}`); res.StatusCode != http.StatusOK {
		t.Fatalf("plan a trickle: %d %s", res.StatusCode, raw)
	}
	res, raw := send("GET", "/v1/testers", "")
	if res.StatusCode != http.StatusOK || int64(len(raw)) != res.ContentLength || !strings.HasSuffix(strings.TrimSpace(string(raw)), "}") {
		t.Errorf("trickled answer: %d, %d of %d bytes", res.StatusCode, len(raw), res.ContentLength)
	}
}

func TestMemProfileCountsTheAllocationsOfTheRunAtItsEnd(t *testing.T) {
	profile := filepath.Join(t.TempDir(), "heap.txt")
	base, stop := startRun(t, config{memProfile: profile})
	res, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(profile)
	if err != nil {
		t.Fatal(err)
	}
	// The text form pprof reads, ending with runtime.MemStats.
	if !strings.HasPrefix(string(raw), "heap profile:") || !regexp.MustCompile(`\n# Mallocs = [1-9][0-9]*\n`).Match(raw) {
		t.Errorf("the profile is not the heap's in text with its count of allocations:\n%.300s", raw)
	}
}
