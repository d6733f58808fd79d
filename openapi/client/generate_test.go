package client_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/oapi-codegen/oapi-codegen/v2/pkg/codegen"
	"github.com/oapi-codegen/oapi-codegen/v2/pkg/util"
	"go.yaml.in/yaml/v3"
)

// TestGeneratedClientIsFresh regenerates the client in memory, with the same
// generator version and configuration as go generate, and fails when the
// committed code differs.
func TestGeneratedClientIsFresh(t *testing.T) {
	raw, err := os.ReadFile("oapi-codegen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		codegen.Configuration `yaml:",inline"`
		Output                string `yaml:"output"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("parse oapi-codegen.yaml: %v", err)
	}
	cfg.Configuration = cfg.UpdateDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("oapi-codegen.yaml: %v", err)
	}
	spec, err := util.LoadSwagger("../document/openapi.yaml")
	if err != nil {
		t.Fatalf("load ../document/openapi.yaml: %v", err)
	}
	want, err := codegen.Generate(spec, cfg.Configuration)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	got, err := os.ReadFile(cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	// The header names the module that ran the generator, which in a test is
	// this one, not oapi-codegen; the code starts at the package clause.
	if !bytes.Equal(fromPackageClause(got), fromPackageClause([]byte(want))) {
		t.Errorf("%s is stale; run go generate ./openapi/client", cfg.Output)
	}
}

func fromPackageClause(src []byte) []byte {
	if i := bytes.Index(src, []byte("\npackage ")); i >= 0 {
		return src[i:]
	}
	return src
}
