package docs_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exampleBody returns the body of the Example function name in the Go file
// at path, as a page shows it: without its braces, one indent less.
func exampleBody(path, name string) (string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name != name || fn.Body == nil {
			continue
		}
		inside := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
		lines := strings.Split(strings.Trim(inside, "\n"), "\n")
		for i, line := range lines {
			lines[i] = strings.TrimPrefix(line, "\t")
		}
		return strings.Join(lines, "\n"), nil
	}
	return "", fmt.Errorf("%s has no function %s", path, name)
}

// TestExampleSnippetsAreTheExamples holds every ```go block marked as an
// example to the body of its Example function, which go test compiles and
// runs, its output checked: the code a page shows is code that works.
func TestExampleSnippetsAreTheExamples(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, file := range append([]string{"../README.md"}, pages...) {
		blocks, err := readBlocks(file, "go")
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if b.example == "" {
				continue
			}
			found++
			path, name, _ := strings.Cut(b.example, " ")
			body, err := exampleBody(path, name)
			if err != nil {
				t.Errorf("%s: %v", b, err)
				continue
			}
			if diff := cmp.Diff(strings.Split(body, "\n"), strings.Split(b.text, "\n")); diff != "" {
				t.Errorf("the snippet at %s is not the body of %s in %s (-example +page):\n%s", b, name, path, diff)
			}
		}
	}
	if found == 0 {
		t.Error("no example snippet found: sdks.md shows sandboxtest's controls")
	}
}

func TestExampleBodyIsTheFunctionsAlone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "example_test.go")
	src := "package p_test\n\nimport \"fmt\"\n\nfunc ExampleOne() {\n\tif true {\n\t\tfmt.Println(1)\n\t}\n\t// Output: 1\n}\n\nfunc ExampleTwo() {\n\tfmt.Println(2)\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := exampleBody(path, "ExampleOne")
	if err != nil {
		t.Fatal(err)
	}
	if want := "if true {\n\tfmt.Println(1)\n}\n// Output: 1"; got != want {
		t.Errorf("exampleBody = %q, want %q", got, want)
	}
	if _, err := exampleBody(path, "ExampleThree"); err == nil {
		t.Error("a missing example was found")
	}
}
