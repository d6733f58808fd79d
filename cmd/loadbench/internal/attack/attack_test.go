package attack

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testcampaign/kit/cmd/loadbench/internal/harness"
)

// TestMain lets the test binary serve as the tenant, as loadbench does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == TenantCommand {
		if err := RunTenant(os.Args[2:], os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

func TestAdversarialBodiesAreValidRequestsOfTheirSize(t *testing.T) {
	const size = 100_000
	for _, b := range adversarialBodies(size) {
		if len(b.body) > size || len(b.body) < size-16 {
			t.Errorf("%s: %d bytes, want just under %d", b.kind, len(b.body), size)
		}
		// Only the nesting is malformed for the sandbox (too deep); the
		// others are JSON it must read to the end.
		if b.kind != "deep nesting" && !json.Valid([]byte(b.body)) {
			t.Errorf("%s: not JSON: %.80s…", b.kind, b.body)
		}
	}
}

func TestKeysInCountsWholeKeysAndTheirHints(t *testing.T) {
	keys := []string{"svc_test_first_abcd", "svc_test_other_wxyz"}
	full, hints := keysIn(`key=svc_test_…abcd path=/v1/campaigns/svc_test_first_abcd svc_test_…wxyz`, keys)
	if full != 1 || hints != 2 {
		t.Errorf("keysIn = %d whole, %d hints; want 1 and 2", full, hints)
	}
}

// smallAttacks are the attacks at sizes that take a second or two each.
var smallAttacks = Sizes{
	conns: 60, probes: 20, maxConns: 40,
	bodies: 8, bodiesAtOnce: 4, bodySize: 100_000, tenantEvery: 10 * time.Millisecond, tenantAlone: 100 * time.Millisecond,
	bigNumbers: 2, digits: 10_000, zeros: 100_000,
	floodKeys: 300, floodWorkers: 8, tenantAccounts: 3, checkEvery: 20 * time.Millisecond,
	delayedBodies: 40, trickle: time.Second, faultKeys: 10,
}

func TestAttacksReportTheirFiguresAgainstTheirBars(t *testing.T) {
	bin, cleanup, err := harness.BuildSandbox()
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	for _, c := range []struct {
		name string
		// timed bars are latencies, which a test on a shared machine
		// does not hold the sandbox to; the others must hold.
		timed bool
		want  []string
	}{
		// At the cap, the sandbox closes idle connections first, and
		// new ones that have not sent a request yet: some of 60 opened
		// at once may fail, but every probe after them is answered.
		{"conns", true, []string{"its connection cap (-max-conns) 40", "idle connections  20 "}},
		{"bodies", true, []string{"unknown fields  2 × 200", "control characters in an echoed field  2 × 400 VALIDATION_ERROR", "deep nesting  2 × 400 INVALID_JSON", "a huge number literal  2 × 400 VALIDATION_ERROR"}},
		{"bignumber", false, []string{"10000 digits", "2 × 400 VALIDATION_ERROR"}},
		{"keyflood", false, []string{"300 fresh keys from 127.0.0.1", "after the flood"}},
		{"keypath", false, []string{"a key as a route", "0 with a whole key"}},
		// The stalled bodies' shutdown and the sweep of 65,536 addresses
		// take ten seconds or more, too long for go test; cmd/sandbox's
		// and httpapi's tests hold them to their bars.
		{"delays", true, []string{"-max-conns 40 -rate-limit-minute 5", "bystander keys' GET /v1/testers  20"}},
		{"settle", true, []string{"-max-conns 40", "GET /healthz  20"}},
		{"faultmemory", false, []string{"10 keys", "10 × 409 LIMIT_REACHED"}},
		{"delaybodies", false, []string{"sends 40 POSTs"}},
		{"trickle", false, []string{"a trickle of 1s"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			held, err := attackRuns[c.name](bin, smallAttacks, &out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if !held && !c.timed {
				t.Errorf("the bar did not hold:\n%s", out.String())
			}
			squeezed := strings.Join(strings.Fields(out.String()), " ")
			for _, want := range c.want {
				if !strings.Contains(squeezed, strings.Join(strings.Fields(want), " ")) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

func TestWebhookAttackCountsALostDeliveryAsNever(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := &victimReceiver{arrived: map[string]time.Time{}}
	sent := map[string]time.Time{}
	for i := range 100 {
		name := strconv.Itoa(i)
		sent[name] = start
		if i != 0 {
			v.arrived[name] = start.Add(time.Duration(i) * time.Millisecond)
		}
	}
	got := v.latency(sent)
	if got.N != 100 || got.delivered != 99 || got.Max != never {
		t.Errorf("latency = %+v, want 99 of 100 delivered and the lost one last", got)
	}
	if shown(got.Max) != "never" {
		t.Errorf("a lost delivery shows as %q", shown(got.Max))
	}
}
