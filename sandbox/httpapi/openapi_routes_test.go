package httpapi

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/mux"

	"github.com/testcampaign/kit/openapi"
)

// TestRoutesMatchTheOpenAPIDocument checks both directions: every route the
// router serves is in the document, and every operation of the document is
// served.
func TestRoutesMatchTheOpenAPIDocument(t *testing.T) {
	doc, err := openapi.Default()
	if err != nil {
		t.Fatal(err)
	}
	want := doc.Operations()
	slices.Sort(want)

	var got []string
	err = NewServer(Options{}).router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		methods, err := route.GetMethods()
		if err != nil {
			return err
		}
		_, path, _ := strings.Cut(route.GetName(), " ")
		checkRouteMatches(t, route, methods[0], path)
		for _, m := range methods {
			// HEAD goes with every GET, as net/http clients expect; the
			// document says so once instead of listing each.
			if m == http.MethodHead && slices.Contains(methods, http.MethodGet) {
				continue
			}
			got = append(got, strings.ToUpper(m)+" "+path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("routes (-in the document +served by the router):\n%s", diff)
	}
}

// checkRouteMatches checks that route matches a request for its template
// with a value in place of its variable, and that routeID reads the value;
// and that it matches no longer path, no shorter one, and no empty value.
func checkRouteMatches(t *testing.T, route *mux.Route, method, template string) {
	t.Helper()
	const value = "cmp_000001"
	path, variable := template, false
	if open := strings.IndexByte(template, '{'); open >= 0 {
		path, variable = template[:open]+value, true
	}
	req := httptest.NewRequest(method, path, nil)
	var match mux.RouteMatch
	if !route.Match(req, &match) {
		t.Errorf("%s: %s %s did not match: %v", route.GetName(), method, path, match.MatchErr)
	}
	if id := routeID(req); variable && id != value {
		t.Errorf("%s: %s %s has the id %q, want %q", route.GetName(), method, path, id, value)
	}
	for _, other := range []string{path + "/", path + "/x", strings.TrimSuffix(path, value), path[:len(path)-1] + "/"} {
		if other == path {
			continue
		}
		if route.Match(httptest.NewRequest(method, other, nil), &mux.RouteMatch{}) {
			t.Errorf("%s matches %s %s", route.GetName(), method, other)
		}
	}
}
