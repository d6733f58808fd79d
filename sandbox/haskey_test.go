package sandbox

import "testing"

// TestHasKeyFindsOnlyTheKeyGiven: the key in any spelling RedactKeys
// undoes, and never another key, a longer one or a text shaped like one.
func TestHasKeyFindsOnlyTheKeyGiven(t *testing.T) {
	const key = "svc_test_mine"
	for text, want := range map[string]bool{
		"/v1/campaigns?api_key=svc_test_mine":          true,
		"token=svc%5Ftest%5Fmine&x=1":                  true,
		`{"name":"svc\u005ftest\u005fmine"}`:           true,
		"svc%255Ftest_mine":                            true,
		`{"name":"svc_test_example"}`:                  false,
		"svc_test_mine2":                               false,
		"svc_test_minefield and svc_test_mine, at end": true,
		"no key here":                                  false,
	} {
		if got := HasKey(text, key); got != want {
			t.Errorf("HasKey(%q) = %t, want %t", text, got, want)
		}
	}
}
