// Package browsertest runs Debian's headless Chromium for the tests that
// must see a page as a browser builds it: conform's HTML report, and a web
// app calling the sandbox from another origin.
package browsertest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Chromium finds the browser. Without one the test is skipped on a
// developer's machine, but fails in CI (CI set), where .ci/run installs it:
// a page nobody rendered is not known to work.
func Chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		tb.Fatal("chromium is not installed; .ci/run installs it from Debian's packages")
	}
	tb.Skip("chromium is not installed (apt-get install chromium); CI runs this test")
	return ""
}

// DumpDOM loads url in the headless browser, with a profile of its own and
// the extra flags, and returns the DOM as the browser built it.
func DumpDOM(tb testing.TB, browser, url string, flags ...string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + tb.TempDir()}, flags...)
	cmd := exec.CommandContext(ctx, browser, append(args, "--dump-dom", url)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return out
}
