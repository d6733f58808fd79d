package conformance_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/internal/specdeploy"
	"github.com/testcampaign/kit/conformance/kit"
)

// foreignMode is one way a CI job runs conform against a deployment.
type foreignMode struct {
	name                           string
	strict, failOnSkip, exhaustive bool
}

var defaultMode = foreignMode{name: "default"}

// strictFailOnSkip is --strict --fail-on-skip. Both only grade what the
// run found (a @should failure fails, a skip fails), so a run that
// conforms with both conforms in the default mode, with --strict alone and
// with --fail-on-skip alone: one run proves all three.
var strictFailOnSkip = foreignMode{name: "strict+fail-on-skip", strict: true, failOnSkip: true}

// foreignVerdict is what one run said about one deployment.
type foreignVerdict struct {
	exit     int
	failures []string // scenario: message, first line
	skips    []string
	leaks    []string // webhook secrets a report shows whole
	took     time.Duration
}

// webhookSecretRe is a webhook secret of the deployment, whole.
var webhookSecretRe = regexp.MustCompile(`whsec_[0-9a-f]{32}`)

func (v foreignVerdict) String() string {
	return fmt.Sprintf("exit %d in %.1fs", v.exit, v.took.Seconds())
}

// runForeign runs the kit as `conform --profile spec` would, with a fresh
// test key, against a deployment of the spec started on loopback; runs
// more than one run on the same key and gives the last verdict, so that
// what one run leaves behind meets the next.
func runForeign(t *testing.T, opts specdeploy.Options, mode foreignMode, runs int) foreignVerdict {
	t.Helper()
	srv := httptest.NewServer(specdeploy.New(opts))
	t.Cleanup(srv.Close)
	var secret [8]byte
	_, _ = rand.Read(secret[:])
	key := "svc_test_foreign_" + hex.EncodeToString(secret[:])
	var v foreignVerdict
	for i := 0; i < runs; i++ {
		v = runForeignOnce(srv.URL, key, mode)
		if v.exit != kit.ExitConformant {
			break
		}
	}
	return v
}

func runForeignOnce(baseURL, key string, mode foreignMode) foreignVerdict {
	started := time.Now()
	rep, err := conformance.Run(context.Background(), kit.Config{
		BaseURL:    baseURL,
		APIKey:     key,
		Strict:     mode.strict,
		FailOnSkip: mode.failOnSkip,
		Exhaustive: mode.exhaustive,
		Timeout:    time.Minute,
	})
	v := foreignVerdict{took: time.Since(started)}
	if err != nil {
		v.exit = kit.ExitError
		v.failures = append(v.failures, "run: "+err.Error())
		return v
	}
	v.exit = rep.ExitCode()
	for _, s := range rep.Scenarios {
		shown := strings.Join(append([]string{s.Message, s.Request, s.Response}, s.Exchanges...), "\n")
		if m := webhookSecretRe.FindString(shown); m != "" {
			v.leaks = append(v.leaks, fmt.Sprintf("%s (%s) shows the webhook secret %s", s.Name, s.Location(), m))
		}
		switch s.Status {
		case kit.Failed, kit.Errored, kit.Warned:
			msg, _, _ := strings.Cut(s.Message, "\n")
			v.failures = append(v.failures, fmt.Sprintf("%s %s (%s): %s", s.Status, s.Name, s.Location(), msg))
		case kit.Skipped:
			v.skips = append(v.skips, fmt.Sprintf("%s (%s): %s", s.Name, s.Location(), s.SkipReason))
		}
	}
	sort.Strings(v.failures)
	return v
}

// TestForeignDeployments runs the kit against a deployment written from
// the spec alone: every reading of what the spec leaves open must conform
// in every mode a CI job uses (default, --strict, --fail-on-skip), and
// every break of what it states must be caught by the default run, or by
// the mode breaksCaughtOutsideDefault names.
func TestForeignDeployments(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		table []string
	)
	record := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		table = append(table, line)
	}
	t.Cleanup(func() {
		sort.Strings(table)
		t.Logf("results:\n%s", strings.Join(table, "\n"))
	})
	for _, r := range specdeploy.Readings() {
		runs := 1
		if r.Options.UniqueNamesPerAccount || r.Options.QuotaOf20 {
			runs = 2 // what the first run wrote is there for the second
		}
		t.Run("reading/"+r.Name, func(t *testing.T) {
			t.Parallel()
			v := runForeign(t, r.Options, strictFailOnSkip, runs)
			record(fmt.Sprintf("reading %-45s %s %s", r.Name, strictFailOnSkip.name, v))
			for _, l := range v.leaks {
				t.Error(l)
			}
			if v.exit != kit.ExitConformant {
				t.Errorf("--%s: %s, want CONFORMANT:\n%s\nskipped:\n%s", strictFailOnSkip.name, v, strings.Join(v.failures, "\n"), strings.Join(v.skips, "\n"))
			}
		})
	}
	for _, b := range specdeploy.Breaks() {
		t.Run("break/"+string(b), func(t *testing.T) {
			t.Parallel()
			v := runForeign(t, specdeploy.Options{Break: b}, defaultMode, 1)
			first := ""
			if len(v.failures) > 0 {
				first = v.failures[0]
			}
			record(fmt.Sprintf("break   %-55s %s %s", b, v, first))
			for _, l := range v.leaks {
				t.Error(l)
			}
			other, known := breaksCaughtOutsideDefault[b]
			switch caught := v.exit == kit.ExitDeviations; {
			case !caught && !known:
				t.Errorf("%s, want exit %d (deviations)", v, kit.ExitDeviations)
			case caught && known:
				t.Errorf("caught now; take it out of breaksCaughtOutsideDefault (%s)", other.why)
			case known:
				w := runForeign(t, specdeploy.Options{Break: b}, other.mode, 1)
				record(fmt.Sprintf("break   %-55s %s with --%s", b, w, other.mode.name))
				if w.exit != kit.ExitDeviations {
					t.Errorf("--%s: %s, want exit %d (deviations)", other.mode.name, w, kit.ExitDeviations)
				}
			}
		})
	}
}

// breaksCaughtOutsideDefault are the breaks the default run does not
// catch, with the mode that does and why.
var breaksCaughtOutsideDefault = map[specdeploy.Break]struct {
	mode foreignMode
	why  string
}{
	specdeploy.BreakNever429: {foreignMode{name: "exhaustive", exhaustive: true},
		"only a run that spends a whole window sees the request past it; that is opt-in"},
	specdeploy.BreakCreatedNotListed: {foreignMode{name: "strict", strict: true},
		"the list's shape and paging are not shown, so finding the campaign there is @should"},
}

// TestSpecProfileNeedsNoSandboxControls holds --profile spec to its promise:
// a deployment without /_sandbox/ routes is all it needs, so no request of
// the run goes there.
func TestSpecProfileNeedsNoSandboxControls(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		sent []string
	)
	deployment := specdeploy.New(specdeploy.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/_sandbox/") {
			mu.Lock()
			sent = append(sent, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}
		deployment.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rep, err := conformance.Run(context.Background(), kit.Config{
		BaseURL: srv.URL, APIKey: "svc_test_foreign_controls", Profile: kit.ProfileSpec, FailOnSkip: true,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(sent) > 0 {
		t.Errorf("--profile spec sent %d requests to the sandbox controls, first %s", len(sent), sent[0])
	}
	for _, s := range rep.With(kit.Skipped) {
		t.Errorf("skipped %s (%s): %s", s.Name, s.Location(), s.SkipReason)
	}
}
