package wire

import (
	"strings"
	"testing"
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
}
