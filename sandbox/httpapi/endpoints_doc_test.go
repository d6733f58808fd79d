package httpapi

import (
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/mux"
)

// endpointRowRe reads a row of the endpoint table of docs/sandbox.md: its
// method and path.
var endpointRowRe = regexp.MustCompile("^\\| `([A-Z]+)` \\| `([^`]+)` \\|")

// TestEndpointTableIsTheRouters holds the endpoint table of docs/sandbox.md
// to the routes the router serves, both ways: an author writes features
// from that table, so a route it lacks, or one it names that is not
// served, is a wrong page.
func TestEndpointTableIsTheRouters(t *testing.T) {
	page, err := os.ReadFile("../../docs/sandbox.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(page), "<!-- endpoints: begin -->\n")
	table, _, ok2 := strings.Cut(rest, "<!-- endpoints: end -->")
	if !ok || !ok2 {
		t.Fatal("docs/sandbox.md has no <!-- endpoints: begin --> … <!-- endpoints: end --> table")
	}
	var documented []string
	for _, line := range strings.Split(table, "\n") {
		if m := endpointRowRe.FindStringSubmatch(line); m != nil {
			documented = append(documented, m[1]+" "+m[2])
		}
	}
	var served []string
	err = NewServer(Options{}).router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		methods, err := route.GetMethods()
		if err != nil {
			return err
		}
		_, path, _ := strings.Cut(route.GetName(), " ")
		for _, m := range methods {
			if m != http.MethodHead {
				served = append(served, m+" "+path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(documented)
	slices.Sort(served)
	if diff := cmp.Diff(served, documented); diff != "" {
		t.Errorf("the endpoint table of docs/sandbox.md is not the router's routes (-served +documented):\n%s", diff)
	}
}
