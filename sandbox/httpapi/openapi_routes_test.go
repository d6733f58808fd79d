package httpapi

import (
	"net/http"
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
		path, err := route.GetPathTemplate()
		if err != nil {
			return err
		}
		methods, err := route.GetMethods()
		if err != nil {
			return err
		}
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
