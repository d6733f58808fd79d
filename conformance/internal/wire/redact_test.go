package wire

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance/kit"
)

func TestRedactorHidesEverySpelling(t *testing.T) {
	const key = "svc_test_ci_secret-part_9f3k"
	redact := Redactor(key)
	for _, text := range []string{
		key,
		"ci_secret-part_9f3k",
		"ci_secret-part_",
		`svc\u005ftest\u005fci\u005fsecret\u002dpart\u005f9f3k`,
		"svc%5Ftest%5Fci%5Fsecret%2Dpart%5F9f3k",
		"svc%255Ftest%255Fci%255Fsecret-part%255F9f3k",
		`{"echo":"svc\\u005ftest\\u005fci\\u005fsecret-part\\u005f9f3k"}`,
	} {
		got := redact("before " + text + " after")
		for _, sp := range Spellings(key) {
			if strings.Contains(got, sp) {
				t.Errorf("Redactor(%q) left %q in %q", text, sp, got)
			}
		}
		if !strings.Contains(got, "svc_test_…9f3k") {
			t.Errorf("Redactor(%q) = %q, want the key shown as svc_test_…9f3k", text, got)
		}
	}
	if got := redact("ci_secret is a word, 9f3k too"); got != "ci_secret is a word, 9f3k too" {
		t.Errorf("text with only pieces of the key changed: %q", got)
	}

	// A test key of zeros cut short is only zeros, as a padded path is.
	const zeros = "svc_test_0000000000000000000042"
	path := "/v1/campaigns/cmp_" + strings.Repeat("0", 40)
	if got := Redactor(zeros)(path + " " + zeros); got != path+" svc_test_…0042" {
		t.Errorf("Redactor(%s) = %q, want the path as sent and the key redacted", zeros, got)
	}
}

// TestFragmentsShowMoreThanTheHint: AUTH-6 allows a key's prefix and last
// four characters, and nothing more of it.
func TestFragmentsShowMoreThanTheHint(t *testing.T) {
	const key = "svc_test_ci_secret-part_9f3k"
	shows := func(text string) bool {
		for _, f := range Fragments(key) {
			if strings.Contains(text, f) {
				return true
			}
		}
		return false
	}
	for _, text := range []string{"svc_test_ci_s…9f3k", "svc%5Ftest%5Fci%5Fs", "key ci_secret-part was refused", "ecret-part_9f3k"} {
		if !shows(text) {
			t.Errorf("%q shows more of %s than its hint, and no fragment was found", text, key)
		}
	}
	for _, text := range []string{"svc_test_…9f3k", "svc_test_****", "ci_secret is a word, part_9f3k too"} {
		if shows(text) {
			t.Errorf("%q shows no more than the hint of %s, yet a fragment was found", text, key)
		}
	}
	if got := Fragments("svc_test_" + strings.Repeat("A", 40)); len(repeatedRuns(got)) > 0 {
		t.Errorf("a run of one repeated character counts as a fragment: %q", repeatedRuns(got))
	}
	if got := Fragments("sk_test_abcdefghijklmnop"); got != nil {
		t.Errorf("a key of no known prefix has fragments %q; only the whole key and its spellings show it", got)
	}
}

func repeatedRuns(fragments []string) []string {
	var runs []string
	for _, f := range fragments {
		if len(f) == fragmentRun && strings.Count(f, f[:1]) == fragmentRun {
			runs = append(runs, f)
		}
	}
	return runs
}

// TestFreshKeysLeaveTheHeapBounded: `conform explore` makes fresh keys
// without end, and each passes through the redactor; what is kept for a
// key must not outlive the run's need of it.
func TestFreshKeysLeaveTheHeapBounded(t *testing.T) {
	t.Parallel()
	// A key's redaction takes some 17 KiB: kept for every one of these
	// keys, it would pass the bound three times over.
	const keys, bound = 4_000, 20 << 20
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for i := range keys {
		key := fmt.Sprintf("%sexplore_%08d_%s", kit.TestPrefix, i, strings.Repeat("k", 24))
		if got := RedactAll("answer echoing "+key, key); strings.Contains(got, key) {
			t.Fatalf("the key %d was not redacted: %q", i, got)
		}
		if len(Spellings(key)) == 0 {
			t.Fatalf("no spelling of the key %d", i)
		}
	}
	after := heap()
	t.Logf("heap before %d KiB, after %d fresh keys %d KiB", before>>10, keys, after>>10)
	if after > before && after-before > bound {
		t.Errorf("%d fresh keys left the heap %d MiB larger, want at most %d MiB", keys, (after-before)>>20, bound>>20)
	}
}

// TestFragmentsAreEachLookedForOnce: every answer is searched for each
// fragment of every key sent, so none is listed twice.
func TestFragmentsAreEachLookedForOnce(t *testing.T) {
	for _, key := range []string{"svc_test_abcdabcdabcdabcdabcdabcd", "svc_live_ab-d0123456789xyz", "svc_test_0123456789abcdef"} {
		seen := map[string]bool{}
		for _, f := range Fragments(key) {
			if seen[f] {
				t.Errorf("Fragments(%s) lists %q twice", key, f)
			}
			seen[f] = true
		}
	}
}
