package conformance_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// theClient is the one file that builds and sends the kit's requests:
// transport.Target.Send, and FetchDocument for an --openapi document, which
// never carries the key.
const theClient = "internal/transport/client.go"

// TestOneClientSendsEveryRequest reads the kit's non-test Go files and
// fails on any that builds an HTTP request, sends one through a client of
// its own, or sets an Authorization header, outside the one client: a
// request built elsewhere would skip the budget, the wait for a 429, or the
// rules and the model that judge every answer.
func TestOneClientSendsEveryRequest(t *testing.T) {
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
		file := filepath.ToSlash(p)
		if file == theClient {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if what := buildsRequest(n); what != "" {
				t.Errorf("%s: %s outside %s; send it with transport.Target.Send", fset.Position(n.Pos()), what, theClient)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// buildsRequest says what n does that only the client may do, or "".
func buildsRequest(n ast.Node) string {
	switch n := n.(type) {
	case *ast.CallExpr:
		sel, ok := n.Fun.(*ast.SelectorExpr)
		if !ok {
			return ""
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "http" {
			switch {
			case strings.HasPrefix(sel.Sel.Name, "NewRequest"):
				return "http." + sel.Sel.Name
			case slices.Contains([]string{"Get", "Head", "Post", "PostForm"}, sel.Sel.Name):
				return "a request sent with http." + sel.Sel.Name
			}
		}
		if (sel.Sel.Name == "Set" || sel.Sel.Name == "Add") && len(n.Args) > 0 && isAuthorization(n.Args[0]) {
			return "an Authorization header set"
		}
		if sel.Sel.Name == "Do" && len(n.Args) == 1 {
			return "a request sent with Do"
		}
	case *ast.IndexExpr:
		if isAuthorization(n.Index) {
			return "an Authorization header indexed"
		}
	}
	return ""
}

func isAuthorization(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && strings.EqualFold(s, "Authorization")
}
