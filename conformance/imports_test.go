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
// out of bounds: the kit knows the API only from the spec. The engine's
// parts live under internal/, so that the compiler keeps every other
// package of the module to the facade and to kit, the types it takes and
// returns, which every part of the kit shares and which imports nothing of
// the kit; conformancetest and openapicheck stand beside the facade and
// speak only its language.
var allowedImports = map[string][]string{
	"kit":                {"docs"},
	"internal/wire":      {"kit"},
	"internal/coverage":  {"kit", "docs"},
	"internal/rules":     {"kit", "internal/wire", "internal/coverage", "docs"},
	"internal/model":     {"kit", "internal/wire", "internal/rules", "internal/coverage"},
	"internal/transport": {"kit", "internal/wire", "internal/rules", "internal/model", "internal/coverage", "docs"},
	"internal/receiver":  {"kit", "internal/wire", "internal/rules"},
	"internal/steps":     {"kit", "internal/wire", "internal/rules", "internal/model", "internal/transport", "internal/receiver", "internal/coverage", "docs"},
	"internal/plan":      {"kit", "internal/wire", "internal/steps", "features", "internal/coverage", "docs"},
	"internal/explore":   {"kit", "internal/wire", "internal/rules", "internal/model", "internal/transport", "internal/coverage", "docs"},
	"internal/runner":    {"kit", "internal/wire", "internal/rules", "internal/model", "internal/transport", "internal/receiver", "internal/steps", "internal/plan", "internal/explore", "internal/coverage", "docs"},
	".":                  {"kit", "internal/wire", "internal/steps", "internal/runner"},
	"conformancetest":    {".", "kit"},
	"openapicheck":       {"kit", "openapi"},
	// The independent deployment of the kit's tests knows nothing of the
	// kit, nor of the sandbox.
	"internal/specdeploy": {},
}

// publicPackages are the kit's packages that code outside conformance/
// may import: the facade, the types it takes and returns, the go test
// helper, and the OpenAPI validator, which cmd/conform links only in
// builds tagged openapi.
var publicPackages = []string{".", "kit", "conformancetest", "openapicheck"}

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
		if known && !strings.HasPrefix(dir, "internal/") && !slices.Contains(publicPackages, dir) {
			t.Errorf("%s: conformance/%s is importable from outside the kit; move it under conformance/internal/", p, dir)
		}
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

// TestLayeringHasNoCycle holds the layering itself to one direction: no
// package reaches itself through the edges it allows, so that a new edge
// cannot quietly turn two layers into one.
func TestLayeringHasNoCycle(t *testing.T) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var visit func(pkg string, path []string)
	visit = func(pkg string, path []string) {
		switch state[pkg] {
		case visiting:
			t.Errorf("the layering has a cycle: %s", strings.Join(append(path, pkg), " -> "))
			return
		case done:
			return
		}
		state[pkg] = visiting
		for _, dep := range allowedImports[pkg] {
			visit(dep, append(path, pkg))
		}
		state[pkg] = done
	}
	for pkg := range allowedImports {
		visit(pkg, nil)
	}
}

// TestOnlyTheFrontDoorIsImported reads the imports of every Go file of the
// module outside conformance/, tests included, and fails on one that
// reaches past the kit's public packages. The compiler refuses
// conformance/internal/ already; this also keeps a new package from being
// added beside the facade and used before anyone decided it should be.
func TestOnlyTheFrontDoorIsImported(t *testing.T) {
	public := map[string]bool{}
	for _, dir := range publicPackages {
		public[strings.TrimSuffix(module+"conformance/"+dir, "/.")] = true
	}
	err := filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "conformance", "testdata", "node_modules", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, module+"conformance") && !public[path] {
				t.Errorf("%s imports %s: outside conformance/ only %v may be imported", p, path, publicPackages)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
