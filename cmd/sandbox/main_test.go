package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox/ratelimit"
)

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil || cfg.addr != "127.0.0.1:8080" || cfg.limits.Minute != 1000 || cfg.fixturesDir != "" {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
	cfg, err = parseFlags([]string{"-rate-limit-minute", "5", "-frozen-clock", "2026-01-01T00:00:00Z", "-log-format", "json"}, io.Discard)
	if err != nil || cfg.limits.Minute != 5 || cfg.frozenClock == "" || cfg.logFormat != "json" {
		t.Errorf("set: %+v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"-rate-limit-day", "0"}, {"-log-format", "xml"}, {"-webhook-attempts", "0"}, {"extra"}, {"-nope"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	logs, logWriter := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{addr: "127.0.0.1:0", limits: ratelimit.DefaultLimits, logFormat: "text", frozenClock: "2026-01-01T00:00:00Z", webhookAttempts: 1, webhookFirstRetry: time.Second}, logWriter)
		logWriter.Close()
	}()

	lines := bufio.NewScanner(logs)
	var base string
	for base == "" && lines.Scan() {
		if m := regexp.MustCompile(`url=(http://\S+)`).FindStringSubmatch(lines.Text()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("the sandbox never said where it listens: %v", <-done)
	}
	// Keep draining the log so the server never blocks on it.
	go func() { _, _ = io.Copy(io.Discard, logs) }()

	req, _ := http.NewRequest("POST", base+"/v1/campaigns", strings.NewReader(`{"name":"First","platform":"ios","testersRequired":3,"rewardPerBug":2.5}`))
	req.Header.Set("Authorization", "Bearer svc_test_first_user_key")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Success bool `json:"success"`
		Data    struct {
			Status    string `json:"status"`
			CreatedAt string `json:"createdAt"`
		} `json:"data"`
	}
	err = json.NewDecoder(res.Body).Decode(&body)
	res.Body.Close()
	if err != nil || !body.Success || body.Data.Status != "draft" || body.Data.CreatedAt != "2026-01-01T00:00:00Z" {
		t.Errorf("create: %+v, %v", body, err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after shutdown", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

func TestRunRejectsBadFixturesDir(t *testing.T) {
	err := run(context.Background(), config{addr: "127.0.0.1:0", fixturesDir: t.TempDir(), limits: ratelimit.DefaultLimits}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "fixture") {
		t.Errorf("err = %v", err)
	}
}
