package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading      = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	codeBlock    = regexp.MustCompile("(?ms)^```.*?^```")
	notInAnchor  = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// anchors returns the fragment every heading of a Markdown page gets, as
// GitHub makes them: lower case, punctuation dropped, spaces as hyphens.
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(codeBlock.ReplaceAllString(page, ""), -1) {
		a := strings.ToLower(notInAnchor.ReplaceAllString(strings.TrimSpace(m[1]), ""))
		out[strings.ReplaceAll(a, " ", "-")] = true
	}
	return out
}

// TestLinksResolve fails on a link of the README or a page of docs/ to a
// file that is not in the repository or a heading its page does not have.
func TestLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range append([]string{"../README.md"}, pages...) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markdownLink.FindAllStringSubmatch(codeBlock.ReplaceAllString(string(data), ""), -1) {
			link := m[1]
			if strings.Contains(link, "://") {
				continue
			}
			path, fragment, _ := strings.Cut(link, "#")
			target := file
			if path != "" {
				target = filepath.Join(filepath.Dir(file), path)
			}
			content, err := os.ReadFile(target)
			if err != nil {
				if _, statErr := os.Stat(target); statErr != nil {
					t.Errorf("%s links to %s, which does not exist", file, link)
				}
				continue
			}
			if fragment != "" && strings.HasSuffix(target, ".md") && !anchors(string(content))[fragment] {
				t.Errorf("%s links to %s, but %s has no such heading", file, link, target)
			}
		}
	}
}
