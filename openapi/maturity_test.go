package openapi_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/testcampaign/kit/openapi/document"
)

// TestMaturityLabelsAreTheSpecs holds ROUTE-8, a label no exchange shows:
// in the document SDK teams generate clients from, GET /v1/testers and GET
// /v1/analytics are beta and every other operation of /v1 is stable.
func TestMaturityLabelsAreTheSpecs(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Maturity string `yaml:"x-maturity"`
		} `yaml:"paths"`
	}
	if err := yaml.Unmarshal(document.YAML(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for path, ops := range doc.Paths {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for method, op := range ops {
			got[strings.ToUpper(method)+" "+path] = op.Maturity
		}
	}
	want := map[string]string{
		"POST /v1/campaigns":     "stable",
		"GET /v1/campaigns":      "stable",
		"GET /v1/campaigns/{id}": "stable",
		"GET /v1/bugs":           "stable",
		"PATCH /v1/bugs/{id}":    "stable",
		"POST /v1/webhooks":      "stable",
		"GET /v1/testers":        "beta",
		"GET /v1/analytics":      "beta",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("x-maturity of the /v1 operations (-ROUTE-8 +document):\n%s", diff)
	}
}
