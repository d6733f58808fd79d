package conformance_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/testcampaign/kit/"

// allowedImports is the kit's layering: each package (by its directory
// under conformance/, "." for the facade) and the packages of this module
// it may import. Everything else of the module, the sandbox above all, is
// out of bounds: the kit knows the API only from the spec.
var allowedImports = map[string][]string{
	"wire":            {},
	"coverage":        {"docs"},
	"report":          {"coverage"},
	"rules":           {"wire", "report", "coverage"},
	"model":           {"wire", "rules", "coverage"},
	"transport":       {"wire", "report", "rules", "model", "coverage"},
	"receiver":        {"wire", "rules"},
	"steps":           {"wire", "rules", "transport", "receiver", "coverage"},
	"plan":            {"wire", "report", "steps", "features", "coverage"},
	"explore":         {"wire", "report", "rules", "model", "transport", "coverage"},
	"runner":          {"wire", "report", "rules", "model", "transport", "receiver", "steps", "plan", "explore", "coverage", "docs"},
	"conformancetest": {"wire", "plan", "runner"},
	".":               {"wire", "report", "rules", "model", "steps", "runner", "coverage", "docs"},
	"openapicheck":    {"rules", "openapi"},
}

// TestImportsPointOneWay reads the imports of every non-test file of the
// kit and fails on an edge the layering does not allow, and on a package
// the layering does not know of, so that a new package is placed on
// purpose.
func TestImportsPointOneWay(t *testing.T) {
	dirs := map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		dirs[dir] = true
		allowed, known := allowedImports[dir]
		if !known {
			t.Errorf("%s: package conformance/%s is not in the layering of imports_test.go", p, dir)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			rel, ours := strings.CutPrefix(path, module)
			if !ours {
				continue
			}
			rel = strings.TrimPrefix(strings.TrimPrefix(rel, "conformance"), "/")
			if rel == "" {
				rel = "."
			}
			if !slices.Contains(allowed, rel) {
				t.Errorf("%s imports %s: conformance/%s may import only %v", p, path, dir, allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range allowedImports {
		if !dirs[dir] {
			t.Errorf("the layering names conformance/%s, which holds no Go file", dir)
		}
	}
}
