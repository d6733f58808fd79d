package conformance_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/conformance"
	"github.com/testcampaign/kit/conformance/internal/coverage"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// A proof is a sandbox that breaks one rule of docs/contract.md and keeps
// every other: the kit's claim that it checks the rule holds only if the
// whole default run against this sandbox fails and names the rule.
type proof struct {
	name string
	// rule is the ID of the rule the sandbox breaks; empty for a
	// pass-through control, which breaks nothing and must pass.
	rule string
	opts sandboxtest.Options
	// caught are scenarios that must be among the failed, besides the
	// run naming the rule.
	caught []string
	// says is text that a failed scenario's message must hold: the words
	// a user reads the break in, where they are the step's own.
	says string
	wrap func(next http.Handler) http.Handler
}

var proofSeeds = flag.Int("proof-seeds", 0, "run every proof of proofs() through the whole default run with the seeds 1..N; 0 leaves the proofs out, as the README's test command does (they take minutes: see docs/conform.md)")

// proofs is every broken sandbox the kit must catch, and the pass-through
// controls that show its breakers change nothing else.
func proofs() []proof {
	return slices.Concat(passThroughProofs(), controlProofs(), faultProofs(), webhookFaultProofs(), boundProofs(),
		apiProofs(), recordProofs(), limitProofs(), webhookProofs(), plannedFaultProofs())
}

// passThroughProofs wrap the sandbox in every breaker the proofs use, each
// breaking nothing: a breaker that changed what it passes on (a network
// fault turned into a 502, say) would make every proof behind it look
// caught.
func passThroughProofs() []proof {
	var controls []proof
	for _, opts := range []struct {
		name string
		opts sandboxtest.Options
	}{{"running clock", sandboxtest.Options{}}, {"frozen clock", frozen}} {
		controls = append(controls,
			proof{name: "breaking, " + opts.name, opts: opts.opts, wrap: func(next http.Handler) http.Handler {
				return breaking(next, func(*http.Request) {}, func(*http.Request, *response) {})
			}},
			proof{name: "breakingWithBody, " + opts.name, opts: opts.opts, wrap: func(next http.Handler) http.Handler {
				return breakingWithBody(next, func(*http.Request, []byte, *response) {})
			}},
			proof{name: "onControls, " + opts.name, opts: opts.opts, wrap: func(next http.Handler) http.Handler {
				return onControls(next, func(*http.Request) {}, func(*http.Request, *response) {})
			}},
			proof{name: "editHeaders, " + opts.name, opts: opts.opts, wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(*http.Request, int, http.Header) {})
			}},
			// Each plan is read and handed on, encoded again if edited.
			proof{name: "plans, " + opts.name, opts: opts.opts, wrap: plans(func(map[string]any) {})},
		)
	}
	return controls
}

// TestEveryProofIsCaught runs each proof through the whole default
// --profile sandbox run, as a CI job runs conform, once per seed: a proof
// caught under one seed and not another is caught by luck. It runs only
// with -proof-seeds, as its own command (docs/conform.md).
func TestEveryProofIsCaught(t *testing.T) {
	if *proofSeeds <= 0 {
		t.Skip("the proofs run with -proof-seeds N (docs/conform.md)")
	}
	t.Parallel()
	for _, p := range proofs() {
		t.Run(strings.TrimSpace(p.rule+" "+p.name), func(t *testing.T) {
			t.Parallel()
			for seed := uint64(1); seed <= uint64(*proofSeeds); seed++ {
				rep, summary := runSeeded(t, p.wrap(sandboxtest.NewHandler(t, p.opts)), seed)
				if p.rule == "" {
					if got := rep.ExitCode(); got != kit.ExitConformant {
						t.Errorf("seed %d: a breaker that breaks nothing: exit %d, want %d (conformant)\n%s", seed, got, kit.ExitConformant, summary)
					}
					continue
				}
				wantCaught(t, rep, summary, p.caught)
				if p.says != "" && !saysIt(rep, p.says) {
					t.Errorf("seed %d: no failed scenario says %q\n%s", seed, p.says, summary)
				}
				if !namesRule(rep, p.rule) {
					t.Errorf("seed %d: the run failed without naming %s\n%s", seed, p.rule, summary)
				}
			}
		})
	}
}

// namesRule says whether the run blamed the rule: a failed scenario cites
// it by its tag or its message, or the coverage counts an exchange that
// broke it.
func namesRule(rep *kit.Report, id string) bool {
	// Whole IDs only: a message naming RATE-14 does not name RATE-1.
	named := regexp.MustCompile(`\b` + regexp.QuoteMeta(id) + `\b`)
	for _, s := range rep.With(kit.Failed) {
		if slices.Contains(kit.Citations(s.Tags), id) || named.MatchString(s.Message) || s.Rule == id {
			return true
		}
	}
	for _, o := range rep.Coverage {
		if o.Rule.ID == id && o.Broken > 0 {
			return true
		}
	}
	return false
}

// saysIt says whether a failed scenario's message holds text.
func saysIt(rep *kit.Report, text string) bool {
	for _, s := range rep.With(kit.Failed) {
		if strings.Contains(s.Message, text) {
			return true
		}
	}
	return false
}

// TestEveryCheckedRuleHasAProof holds the coverage report to its word: a
// rule the kit says it checks has a broken sandbox that the check catches.
func TestEveryCheckedRuleHasAProof(t *testing.T) {
	rules, err := conformance.Rules()
	if err != nil {
		t.Fatal(err)
	}
	proven := map[string]bool{}
	names := map[string]bool{}
	for _, p := range proofs() {
		if names[p.rule+" "+p.name] {
			t.Errorf("two proofs named %q", p.rule+" "+p.name)
		}
		names[p.rule+" "+p.name] = true
		proven[p.rule] = true
		if p.rule == "" && (len(p.caught) > 0 || p.says != "") {
			t.Errorf("the control %q names what catches it, which a run that must pass never checks", p.name)
		}
	}
	known := map[string]bool{}
	for _, r := range rules {
		known[r.Rule.ID] = true
		checked := len(r.Checks) > 0
		switch {
		case checked && !proven[r.Rule.ID] && !unprovenYet[r.Rule.ID]:
			t.Errorf("%s is reported as checked (%s) but no proof breaks it: add a broken sandbox to proofs()", r.Rule.ID, r.Checks[0].How)
		case proven[r.Rule.ID] && unprovenYet[r.Rule.ID]:
			t.Errorf("%s has a proof: take it off unprovenYet", r.Rule.ID)
		case !checked && proven[r.Rule.ID]:
			t.Errorf("%s has a proof but no check: declare the check that catches it", r.Rule.ID)
		}
	}
	for id := range proven {
		if id != "" && !known[id] {
			t.Errorf("a proof breaks %s, which docs/contract.md does not have", id)
		}
	}
}

// runSeeded runs the whole default suite against h, as a CI job runs
// conform, with the given seed.
func runSeeded(t *testing.T, h http.Handler, seed uint64) (*kit.Report, string) {
	t.Helper()
	srv := serve(t, h)
	var summary bytes.Buffer
	rep, err := conformance.Run(context.Background(), kit.Config{
		BaseURL: srv.URL, APIKey: suiteKey, Profile: kit.ProfileSandbox,
		Seed: seed, Summary: &summary, Timeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("seed %d: Run: %v", seed, err)
	}
	return rep, summary.String()
}

// wantCaught wants the run to end with deviations, the named scenarios
// among the failed.
func wantCaught(t *testing.T, rep *kit.Report, summary string, caught []string) {
	t.Helper()
	if got := rep.ExitCode(); got != kit.ExitDeviations {
		t.Errorf("exit code %d, want %d (deviations)\n%s", got, kit.ExitDeviations, summary)
		return
	}
	failed := map[string]bool{}
	for _, s := range rep.With(kit.Failed) {
		failed[s.Name] = true
	}
	for _, name := range caught {
		if !failed[name] {
			t.Errorf("scenario %q did not fail\n%s", name, summary)
		}
	}
}

// passingRecorder records the sandbox's answer for a breaker to rewrite,
// but hands the connection through to a network fault that takes it, so
// that a reset, close or truncate reaches the client as the sandbox makes
// it rather than as the breaker's 200.
type passingRecorder struct {
	*httptest.ResponseRecorder
	client   http.ResponseWriter
	hijacked bool
}

func (p *passingRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(p.client).Hijack()
	p.hijacked = err == nil
	if err != nil {
		return nil, nil, fmt.Errorf("passing the connection on: %w", err)
	}
	return conn, rw, nil
}

var updateProofs = flag.Bool("update-proofs", false, "write conformance/internal/coverage/proofs.txt from proofs()")

// TestProofIndexIsTheTable keeps what `conform rules` and the HTML report
// say proves each rule equal to the proofs this package runs.
func TestProofIndexIsTheTable(t *testing.T) {
	rules, err := conformance.Rules()
	if err != nil {
		t.Fatal(err)
	}
	byRule := map[string][]string{}
	for _, p := range proofs() {
		if p.rule != "" {
			byRule[p.rule] = append(byRule[p.rule], p.name)
		}
	}
	var want strings.Builder
	for _, r := range rules {
		for _, name := range byRule[r.Rule.ID] {
			fmt.Fprintf(&want, "%s\t%s\n", r.Rule.ID, name)
		}
	}
	if *updateProofs {
		if err := os.WriteFile("internal/coverage/proofs.txt", []byte(want.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want.String(), coverage.ProofIndex()); diff != "" {
		t.Errorf("conformance/internal/coverage/proofs.txt is not the table of proofs(); run go test ./conformance -run TestProofIndexIsTheTable -update-proofs (-want +got):\n%s", diff)
	}
}
