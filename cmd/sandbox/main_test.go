package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox/httpapi"
)

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil || cfg.addr != "127.0.0.1:8080" || cfg.app.Limits.Minute != 1000 || cfg.fixturesDir != "" {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
	cfg, err = parseFlags([]string{"-rate-limit-minute", "5", "-frozen-clock", "2026-01-01T00:00:00Z", "-log-format", "json"}, io.Discard)
	if err != nil || cfg.app.Limits.Minute != 5 || cfg.frozenClock == "" || cfg.logFormat != "json" {
		t.Errorf("set: %+v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"-rate-limit-day", "0"}, {"-log-format", "xml"}, {"-webhook-attempts", "0"}, {"-max-conns", "0"}, {"-write-timeout", "0s"}, {"-client-limit-minute", "-1"}, {"extra"}, {"-nope"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestSecretComesFromTheFlagOrTheEnvironment(t *testing.T) {
	const fromEnv, fromFlag = "environment-secret-0123", "flag-secret-0123456789"
	t.Setenv(secretEnv, "")
	if cfg, err := parseFlags(nil, io.Discard); err != nil || cfg.app.Webhooks.Secret != "" {
		t.Errorf("without either: secret %q, %v; want none, for a random one", cfg.app.Webhooks.Secret, err)
	}
	t.Setenv(secretEnv, fromEnv)
	if cfg, err := parseFlags(nil, io.Discard); err != nil || cfg.app.Webhooks.Secret != fromEnv {
		t.Errorf("from %s: secret %q, %v", secretEnv, cfg.app.Webhooks.Secret, err)
	}
	if cfg, err := parseFlags([]string{"-secret", fromFlag}, io.Discard); err != nil || cfg.app.Webhooks.Secret != fromFlag {
		t.Errorf("-secret beside %s: secret %q, %v; want the flag's", secretEnv, cfg.app.Webhooks.Secret, err)
	}
	if _, err := parseFlags([]string{"-secret", "short"}, io.Discard); err == nil || !strings.Contains(err.Error(), "16") {
		t.Errorf("a 5-byte secret: %v, want a refusal that names the minimum", err)
	}
}

// startRun runs the sandbox as main would, on a free loopback port unless
// cfg says where, and returns its base URL and a stop function that reports
// how run ended.
func startRun(t *testing.T, cfg config) (string, func() error) {
	t.Helper()
	base, _, stop := startRunLogged(t, cfg)
	return base, stop
}

// announced matches the log line that says where the sandbox listens, and
// its base URL.
var announced = regexp.MustCompile(`url=(https?://\S+)`)

// startRunLogged is startRun that also returns the log line that says where
// the sandbox listens.
func startRunLogged(t *testing.T, cfg config) (base, listening string, stop func() error) {
	t.Helper()
	cfg.addr, cfg.logFormat = cmp.Or(cfg.addr, "127.0.0.1:0"), "text"
	cfg.app.Webhooks.Attempts, cfg.app.Webhooks.FirstRetry = 1, time.Second
	logs, logWriter := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, cfg, logWriter)
		logWriter.Close()
	}()

	lines := bufio.NewScanner(logs)
	for listening == "" && lines.Scan() {
		if m := announced.FindStringSubmatch(lines.Text()); m != nil {
			base, listening = m[1], lines.Text()
		}
	}
	if listening == "" {
		cancel()
		t.Fatalf("the sandbox never said where it listens: %v", <-done)
	}
	// Keep draining the log so the server never blocks on it.
	go func() { _, _ = io.Copy(io.Discard, logs) }()
	stop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second):
			return errors.New("run did not return after cancel")
		}
	}
	return base, listening, stop
}

func TestRunServesUntilCancelled(t *testing.T) {
	base, stop := startRun(t, config{frozenClock: "2026-01-01T00:00:00Z"})
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
	if err != nil || !body.Success || body.Data.Status != "draft" || body.Data.CreatedAt != "2026-01-01T00:00:00.000Z" {
		t.Errorf("create: %+v, %v", body, err)
	}

	if err := stop(); err != nil {
		t.Errorf("run returned %v after shutdown", err)
	}
}

func TestRunSeedsFromFixturesDir(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"testers.json":   `[{"ref":"zoe","name":"Zoe Custom","platforms":["web"],"country":"NZ","rating":5,"available":true,"age":"1h"}]`,
		"campaigns.json": `[{"ref":"c","name":"Own campaign","platform":"web","testersRequired":1,"rewardPerBug":1,"status":"active","age":"1h"}]`,
		"bugs.json":      `[]`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base, stop := startRun(t, config{fixturesDir: dir})
	defer stop()
	req, _ := http.NewRequest("GET", base+"/v1/testers", nil)
	req.Header.Set("Authorization", "Bearer svc_test_fixture_user_key")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Data struct {
			Items []struct{ ID, Name string }
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if len(body.Data.Items) != 1 || body.Data.Items[0].Name != "Zoe Custom" || body.Data.Items[0].ID != "tst_000001" {
		t.Errorf("testers = %+v, want only the one from -fixtures", body.Data.Items)
	}
}

func TestRunRejectsBadFixturesDir(t *testing.T) {
	err := run(context.Background(), config{addr: "127.0.0.1:0", fixturesDir: t.TempDir()}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "fixture") {
		t.Errorf("err = %v", err)
	}
}

func TestOversizedHeadersAreRefusedBeforeAnyHandler(t *testing.T) {
	base, stop := startRun(t, config{})
	defer stop()
	req, _ := http.NewRequest("GET", base+"/v1/campaigns", nil)
	req.Header.Set("Authorization", "Bearer svc_test_header_flood_user")
	req.Header.Set("X-Filler", strings.Repeat("x", 2*httpapi.MaxHeaderBytes))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a %d-byte header got %d, want 431", 2*httpapi.MaxHeaderBytes, res.StatusCode)
	}
}

func TestMemoryLimitTakesGOMEMLIMITsSizes(t *testing.T) {
	for in, want := range map[string]int64{"1900MiB": 1900 << 20, "2GiB": 2 << 30, "512": 512, "64KiB": 64 << 10, "0": 0} {
		var got byteSize
		if err := got.Set(in); err != nil || int64(got) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1.5GiB", "-1MiB", "2GB", "MiB", "99999999999TiB"} {
		var got byteSize
		if err := got.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted as %d", bad, got)
		}
	}
	cfg, err := parseFlags([]string{"-memory-limit", "1900MiB"}, io.Discard)
	if err != nil || cfg.memoryLimit != 1900<<20 || cfg.memoryLimit.String() != "1900MiB" {
		t.Errorf("-memory-limit 1900MiB: %v, %v", cfg.memoryLimit, err)
	}
}

func TestListeningLineNamesTheURLAndShutdownEndsInjectedDelays(t *testing.T) {
	announced, announce := io.Pipe()
	lineRead := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(announced).ReadString('\n')
		lineRead <- line
		_, _ = io.Copy(io.Discard, announced)
	}()
	base, stop := startRun(t, config{announce: announce})
	if line := <-lineRead; line != base+"\n" {
		t.Errorf("listening line = %q, want %q", line, base+"\n")
	}

	send := func(method, path, body string) (*http.Response, error) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer svc_test_first_user_key")
		req.Header.Set("Content-Type", "application/json")
		return http.DefaultClient.Do(req)
	}
	res, err := send("POST", "/_sandbox/faults", `{"delayMs":30000,"count":2}`)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("plan a delay: %v %v", res, err)
	}
	res.Body.Close()
	answered := make(chan int, 1)
	go func() {
		res, err := send("GET", "/v1/campaigns", "")
		if err != nil {
			answered <- 0
			return
		}
		res.Body.Close()
		answered <- res.StatusCode
	}()
	// The request is in its delay once the fault has fired.
	for fired := 0; fired == 0; {
		res, err := send("GET", "/_sandbox/faults", "")
		if err != nil {
			t.Fatal(err)
		}
		var faults struct {
			Data struct{ Items []struct{ Fired int } }
		}
		err = json.NewDecoder(res.Body).Decode(&faults)
		res.Body.Close()
		if err != nil || len(faults.Data.Items) != 1 {
			t.Fatalf("list faults: %+v, %v", faults, err)
		}
		fired = faults.Data.Items[0].Fired
	}
	// A 30 s delay would outlast the grace period and fail the exit.
	if err := stop(); err != nil {
		t.Errorf("run returned %v after shutdown during an injected delay", err)
	}
	announce.Close()
	if status := <-answered; status != http.StatusOK {
		t.Errorf("the delayed request was answered %d, want 200 once shutdown ended its delay", status)
	}
}
