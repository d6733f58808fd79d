package conformance_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
)

// sideRequest sends a request of a broken deployment's own making to the
// sandbox behind it, as key.
func sideRequest(next http.Handler, key, method, path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	return rec
}

const ghostCampaign = `{"name":"ghost","platform":"web","testersRequired":3,"rewardPerBug":5}`
