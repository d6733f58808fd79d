package conformance_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
)

// sideRequest sends a request of a broken deployment's own making to the
// sandbox behind it, as key. The target is a decoded path, with a query
// or not: escaped again, a path the kit sent with a space in it makes a
// request as valid as the kit's.
func sideRequest(next http.Handler, key, method, target, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	u, err := url.Parse(target)
	if err != nil {
		rec.WriteHeader(http.StatusBadRequest)
		return rec
	}
	r := httptest.NewRequest(method, u.RequestURI(), strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	next.ServeHTTP(rec, r)
	return rec
}

const ghostCampaign = `{"name":"ghost","platform":"web","testersRequired":3,"rewardPerBug":5}`
