package docs_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A recipe is a ```sh block of README.md or of a page of docs/. Every one
// runs, as written, against a sandbox of its own, unless the line before its
// fence says why not:
//
//	<!-- not run: why -->
//
// Where a recipe does what a user's machine does, the test stands in:
//   - a line that starts the sandbox in the background (`go run ./cmd/sandbox
//     FLAGS &` or `bin/sandbox FLAGS &`) is the sandbox the test starts, with
//     those flags, on a free loopback port; a recipe without one gets a
//     sandbox with the default flags;
//   - http://127.0.0.1:8080 is that sandbox's address;
//   - a `go build` line is the build the test made beforehand: ./conform,
//     bin/sandbox and bin/conform are in the recipe's working directory;
//   - a conform run against a deployment explores with --seed 1 unless the
//     recipe gives a seed, so that it sends the same requests every time.
//
// Every sandbox also runs with -webhook-loopback-only, so that no recipe
// sends anything beyond this machine.
//
// A recipe fails when it exits non-zero, or when it prints an error envelope
// whose code none of its comments names: a recipe that means to get a 409
// says so, as in `# 409 INVALID_STATUS_TRANSITION`.
type recipe struct {
	file   string
	line   int // of the opening fence
	text   string
	notRun string // why the recipe is not run; empty when it is
	// example names the Example function a ```go block is the body of, as
	// its file and name, from a marker on the line before the fence:
	//
	//	<!-- example: ../sandbox/sandboxtest/example_test.go ExampleControls -->
	example string
}

func (r recipe) String() string {
	return fmt.Sprintf("%s:%d", strings.TrimPrefix(r.file, "../"), r.line)
}

const documentedAddr = "http://127.0.0.1:8080"

var (
	notRunMarker = regexp.MustCompile(`^<!-- not run: (.*\S)\s*-->$`)
	startLine    = regexp.MustCompile(`^(?:go run \./cmd/sandbox|bin/sandbox)((?:[ \t]+[^\s&#]+)*)[ \t]*&[ \t]*(?:#.*)?$`)
	buildLine    = regexp.MustCompile(`^go build\b`)
	conformRun   = regexp.MustCompile(`^(.*\bconform\b.*--base-url\b[^#]*?)(\s*(?:#.*)?)$`)
	errorCode    = regexp.MustCompile(`"success"\s*:\s*false\s*,\s*"error"\s*:\s*\{\s*"code"\s*:\s*"([A-Z_]+)"`)
	comment      = regexp.MustCompile(`(?:^|\s)#.*$`)
	// exampleMarker names, by its file (from docs/) and name, the Example
	// function the ```go block after it shows the body of.
	exampleMarker = regexp.MustCompile(`^<!-- example: (\S+ Example\w*) -->$`)
)

// readRecipes returns the ```sh blocks of one Markdown file, in order.
func readRecipes(file string) ([]recipe, error) { return readBlocks(file, "sh") }

// readBlocks returns the blocks of one Markdown file whose info string is
// lang, in order; only ```sh blocks may be marked as not run.
func readBlocks(file, lang string) ([]recipe, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var out []recipe
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.HasPrefix(line, "<!-- not run") && !notRunMarker.MatchString(line) {
			return nil, fmt.Errorf("%s:%d: a not-run marker says why, as <!-- not run: why -->", file, i+1)
		}
		if !strings.HasPrefix(line, "```") {
			continue
		}
		end := i + 1
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: the code block is never closed", file, i+1)
		}
		marked := i > 0 && notRunMarker.MatchString(lines[i-1])
		info := strings.TrimPrefix(line, "```")
		if marked && info != "sh" {
			return nil, fmt.Errorf("%s:%d: a not-run marker stands before a %q block, which never runs", file, i+1, info)
		}
		example := i > 0 && exampleMarker.MatchString(lines[i-1])
		if example && info != "go" {
			return nil, fmt.Errorf("%s:%d: an example marker stands before a %q block, not a go one", file, i+1, info)
		}
		if info == lang {
			r := recipe{file: file, line: i + 1, text: strings.Join(lines[i+1:end], "\n")}
			if marked {
				r.notRun = notRunMarker.FindStringSubmatch(lines[i-1])[1]
			}
			if example {
				r.example = strings.TrimSpace(exampleMarker.FindStringSubmatch(lines[i-1])[1])
			}
			out = append(out, r)
		}
		i = end
	}
	return out, nil
}

// allRecipes reads README.md and every page of docs/.
func allRecipes(t *testing.T) []recipe {
	t.Helper()
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	var all []recipe
	for _, file := range append([]string{"../README.md"}, pages...) {
		rs, err := readRecipes(file)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rs...)
	}
	return all
}

// binaries builds the commands the recipes use, once for the whole test
// binary, as the README builds them.
var binaries = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "recipes-bin-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/sandbox", "./cmd/conform")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return dir, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := binaries(); err == nil && dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// needTools skips when curl or bash is missing, except in CI, where a
// missing tool would silently drop every recipe.
func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is needed to run the recipes: %v", tool, err)
			}
			t.Skipf("%s is needed to run the recipes: %v", tool, err)
		}
	}
}

// TestRecipes runs every recipe that is not marked as not run.
func TestRecipes(t *testing.T) {
	all := allRecipes(t)
	needTools(t)
	bin, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, r := range all {
		if r.notRun != "" {
			continue
		}
		ran++
		t.Run(r.String(), func(t *testing.T) {
			if err := runRecipe(t, bin, r.text); err != nil {
				t.Errorf("the recipe at %s fails: %v\n%s", r, err, r.text)
			}
		})
	}
	t.Logf("%d recipes run, %d marked not run", ran, len(all)-ran)
	if ran == 0 {
		t.Error("no recipe ran")
	}
}

// TestGoSnippetsCompile vets every ```go block of the pages, each a whole
// file of its own that uses the standard library only; examples that use this
// module's packages are Example functions of those packages instead.
func TestGoSnippetsCompile(t *testing.T) {
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
			if b.example != "" {
				// go test compiles and runs it where it lives; see
				// TestExampleSnippetsAreTheExamples.
				continue
			}
			found++
			t.Run(b.String(), func(t *testing.T) {
				if err := vetSnippet(t, b.text); err != nil {
					t.Errorf("the Go snippet at %s does not compile: %v", b, err)
				}
			})
		}
	}
	if found == 0 {
		t.Error("no Go snippet found: the webhook verifier is one")
	}
	t.Run("a broken snippet fails", func(t *testing.T) {
		if err := vetSnippet(t, "package broken\n\nfunc f() int { return \"one\" }\n"); err == nil {
			t.Error("a snippet that cannot compile passed")
		}
	})
}

func vetSnippet(t *testing.T, text string) error {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "snippet.go"), []byte(text), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("go", "vet", "./snippet.go")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

// TestBrokenRecipesFail breaks recipes of the pages on purpose, each in a
// way a reader would meet, and requires the runner to fail them; the same
// recipes as written pass in TestRecipes.
func TestBrokenRecipesFail(t *testing.T) {
	all := allRecipes(t)
	needTools(t)
	bin, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	find := func(file, contains string) string {
		t.Helper()
		for _, r := range all {
			if r.file == file && r.notRun == "" && strings.Contains(r.text, contains) {
				return r.text
			}
		}
		t.Fatalf("%s has no recipe with %q", file, contains)
		return ""
	}
	faults := find("controls.md", `"network":"trickle"`)
	clock := find("controls.md", "/_sandbox/clock")
	for _, c := range []struct {
		name, text, want string
	}{
		{"fault plans without a Content-Type", strings.ReplaceAll(faults, ` -H "$J"`, ""), "UNSUPPORTED_MEDIA_TYPE"},
		{"a fault field misspelt", strings.Replace(faults, `"retryAfter"`, `"retryafter"`, 1), "VALIDATION_ERROR"},
		{"the clock moved without -frozen-clock", strings.Replace(clock, "-frozen-clock 2026-01-01T00:00:00Z ", "", 1), "CONFLICT"},
		{"a command that fails", faults + "\ncurl -sf http://127.0.0.1:8080/v1/nowhere", "exit status 22"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := runRecipe(t, bin, c.text)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("the broken recipe gave %v, want a failure naming %s\n%s", err, c.want, c.text)
			}
		})
	}
	t.Run("an error the recipe names", func(t *testing.T) {
		text := "curl -s -H 'Authorization: Bearer svc_test_mysecret' http://127.0.0.1:8080/v1/nowhere   # 404 NOT_FOUND"
		if err := runRecipe(t, bin, text); err != nil {
			t.Errorf("a recipe that names the error it gets fails: %v", err)
		}
	})
}

// runRecipe runs one recipe's text against a sandbox it starts, in a
// directory of its own, and says why it failed.
func runRecipe(t *testing.T, bin, text string) error {
	t.Helper()
	work := t.TempDir()
	for _, link := range []struct{ name, to string }{
		{"conform", "conform"}, {"bin/conform", "conform"}, {"bin/sandbox", "sandbox"},
	} {
		if err := os.MkdirAll(filepath.Join(work, filepath.Dir(link.name)), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(filepath.Join(bin, link.to), filepath.Join(work, link.name)); err != nil {
			return err
		}
	}

	flags, script := standIns(text)
	base, err := startSandbox(t, filepath.Join(bin, "sandbox"), flags, work)
	if err != nil {
		return err
	}
	// A sandbox started with -tls-self-signed is at https://127.0.0.1:8080.
	script = strings.ReplaceAll(script, strings.Replace(documentedAddr, "http:", "https:", 1), base)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c",
		strings.ReplaceAll(script, documentedAddr, base))
	cmd.Dir = work
	// No proxy may carry a recipe's request away from loopback.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "NO_PROXY=*", "no_proxy=*"}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	meant := strings.Join(comments(text), "\n")
	for _, m := range errorCode.FindAllStringSubmatch(stdout.String(), -1) {
		if !strings.Contains(meant, m[1]) {
			return fmt.Errorf("an error envelope %s that no comment of the recipe names\nstdout: %s", m[1], stdout.String())
		}
	}
	return nil
}

// standIns returns the flags a recipe starts its sandbox with, and the
// script that is left once the test stands in for the recipe's start and
// build lines and seeds its conform runs.
func standIns(text string) (flags []string, script string) {
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if m := startLine.FindStringSubmatch(line); m != nil {
			flags = append(flags, strings.Fields(m[1])...)
			continue
		}
		if buildLine.MatchString(line) {
			continue
		}
		if m := conformRun.FindStringSubmatch(line); m != nil && !strings.Contains(line, "--seed") && !strings.HasSuffix(m[1], `\`) {
			line = m[1] + " --seed 1" + m[2]
		}
		lines = append(lines, line)
	}
	return flags, strings.Join(lines, "\n")
}

// comments returns the comments of a shell text: what follows a # at the
// start of a line or after a blank.
func comments(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if c := comment.FindString(line); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// startSandbox starts the sandbox binary with a recipe's flags on a free
// loopback port, in the recipe's directory dir, reads its base URL from its
// first line of output, and stops it with SIGTERM when the test ends.
func startSandbox(t *testing.T, path string, flags []string, dir string) (string, error) {
	t.Helper()
	args := append(append([]string{}, flags...), "-addr", "127.0.0.1:0", "-webhook-loopback-only")
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	first := make(chan string, 1)
	go func() {
		defer close(exited)
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		first <- strings.TrimSpace(line)
		io.Copy(io.Discard, stdout)
		cmd.Wait()
	}()
	select {
	case base := <-first:
		if !strings.HasPrefix(base, "http://127.0.0.1:") && !strings.HasPrefix(base, "https://127.0.0.1:") {
			<-exited
			return "", fmt.Errorf("sandbox %s did not start: first line %q\n%s", strings.Join(args, " "), base, stderr.String())
		}
		return base, nil
	case <-time.After(20 * time.Second):
		return "", errors.New("the sandbox printed no address within 20 s")
	}
}

// TestReadRecipes holds the convention to its word: a not-run marker says
// why, and stands only before a block that would otherwise run.
func TestReadRecipes(t *testing.T) {
	for _, c := range []struct {
		name, page string
		runs       int
		notRun     string
		wantErr    string
	}{
		{"a recipe", "# Page\n\n```sh\ncurl -s http://127.0.0.1:8080/healthz\n```\n", 1, "", ""},
		{"a marked recipe", "<!-- not run: needs Docker -->\n```sh\ndocker run x\n```\n", 0, "needs Docker", ""},
		{"another language", "```console\n$ sandbox --version\n```\n", 0, "", ""},
		{"a marker without a reason", "<!-- not run -->\n```sh\ndocker run x\n```\n", 0, "", "says why"},
		{"a marker before another language", "<!-- not run: output -->\n```json\n{}\n```\n", 0, "", "never runs"},
		{"a block never closed", "```sh\ncurl -s x\n", 0, "", "never closed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "page.md")
			if err := os.WriteFile(file, []byte(c.page), 0o644); err != nil {
				t.Fatal(err)
			}
			rs, err := readRecipes(file)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("readRecipes = %v, want an error saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			runs, notRun := 0, ""
			for _, r := range rs {
				if r.notRun == "" {
					runs++
				} else {
					notRun = r.notRun
				}
			}
			if runs != c.runs || notRun != c.notRun {
				t.Errorf("got %d to run and not-run reason %q, want %d and %q", runs, notRun, c.runs, c.notRun)
			}
		})
	}
}

func TestStandIns(t *testing.T) {
	text := `go run ./cmd/sandbox -frozen-clock 2026-01-01T00:00:00Z &   # a frozen sandbox
go build -o conform ./cmd/conform
SVC_API_KEY=svc_test_mykey ./conform --base-url http://127.0.0.1:8080 --profile sandbox   # a run
./conform --base-url http://127.0.0.1:8080 --seed 42
./conform steps
curl -s http://127.0.0.1:8080/healthz`
	flags, script := standIns(text)
	if diff := cmp.Diff([]string{"-frozen-clock", "2026-01-01T00:00:00Z"}, flags); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
	want := `SVC_API_KEY=svc_test_mykey ./conform --base-url http://127.0.0.1:8080 --profile sandbox --seed 1   # a run
./conform --base-url http://127.0.0.1:8080 --seed 42
./conform steps
curl -s http://127.0.0.1:8080/healthz`
	if diff := cmp.Diff(want, script); diff != "" {
		t.Errorf("script (-want +got):\n%s", diff)
	}
}

// TestTypeScriptVerifierIsTheTestedOne holds the TypeScript verifier of
// webhooks.md to sdk-ts/src/webhook.ts, which sdk-ts's tests run against a
// real delivery and a tampered one.
func TestTypeScriptVerifierIsTheTestedOne(t *testing.T) {
	blocks, err := readBlocks("webhooks.md", "ts")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 1 {
		t.Fatalf("webhooks.md has %d TypeScript blocks, want the verifier alone", len(blocks))
	}
	_, fn, ok := strings.Cut(blocks[0].text, "\nfunction verifyWebhookSignature")
	fn, _, ok2 := strings.Cut(fn, "\n}\n")
	if !ok || !ok2 {
		t.Fatalf("the TypeScript block of webhooks.md has no function verifyWebhookSignature:\n%s", blocks[0].text)
	}
	tested, err := os.ReadFile("../sdk-ts/src/webhook.ts")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tested), "\nexport function verifyWebhookSignature"+fn+"\n}\n") {
		t.Errorf("webhooks.md's verifyWebhookSignature is not the one sdk-ts/src/webhook.ts exports and tests:\n%s", fn)
	}
}

// TestTypeScriptSandboxSnippetIsTheTestedOne holds the TypeScript block of
// sdks.md that shows sdk-ts/src/sandbox.ts in use to the tests of
// sdk-ts/test/sandbox.test.ts, which npm test runs: the receiver, the
// controls and the lost answer a page shows are the ones tested.
func TestTypeScriptSandboxSnippetIsTheTestedOne(t *testing.T) {
	blocks, err := readBlocks("sdks.md", "ts")
	if err != nil {
		t.Fatal(err)
	}
	tested, err := os.ReadFile("../sdk-ts/test/sandbox.test.ts")
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, b := range blocks {
		if !strings.Contains(b.text, "sandboxControls(") {
			continue
		}
		shown++
		if !isTestedIn(string(tested), b.text) {
			t.Errorf("the TypeScript block at %s is not a run of tests in sdk-ts/test/sandbox.test.ts:\n%s", b, b.text)
		}
	}
	if shown == 0 {
		t.Error("sdks.md shows no TypeScript use of sandboxControls")
	}
	t.Run("a changed snippet fails", func(t *testing.T) {
		tests := strings.TrimRight(string(tested[strings.Index(string(tested), "\ntest(")+1:]), "\n")
		if !isTestedIn(string(tested), tests) {
			t.Fatal("the file's own tests are not a run of its tests")
		}
		changed := strings.Replace(tests, `received, "nothing"`, `received, "all"`, 1)
		if changed == tests || isTestedIn(string(tested), changed) {
			t.Error("a snippet that differs from the tests passed")
		}
	})
}

// isTestedIn says whether snippet is, line for line, a run of whole
// test(...) calls of the file tested.
func isTestedIn(tested, snippet string) bool {
	return strings.HasPrefix(snippet, "test(") && strings.HasSuffix(snippet, "\n});") &&
		strings.Contains(tested, "\n"+snippet+"\n")
}

// TestFeatureSnippetsPass runs every ```gherkin block of the pages, each a
// scenario, with conform against a sandbox: it must pass, and fail once its
// expected status is changed.
func TestFeatureSnippetsPass(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	var scenarios []recipe
	for _, file := range pages {
		blocks, err := readBlocks(file, "gherkin")
		if err != nil {
			t.Fatal(err)
		}
		scenarios = append(scenarios, blocks...)
	}
	if len(scenarios) == 0 {
		t.Fatal("no Gherkin block found: writing-features.md has one")
	}
	bin, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scenarios {
		t.Run(s.String(), func(t *testing.T) {
			if err := runFeature(t, bin, s.text); err != nil {
				t.Errorf("the scenario at %s fails: %v", s, err)
			}
			broken := breakOnPurpose(s.text)
			if broken == s.text {
				t.Fatalf("the scenario at %s expects no draft and no status, so it cannot be broken on purpose here", s)
			}
			if err := runFeature(t, bin, broken); err == nil || !strings.Contains(err.Error(), "exit status 1") {
				t.Errorf("the scenario broken on purpose gave %v, want conform's exit status 1", err)
			}
		})
	}
}

// expectedStatus finds the first status a scenario expects.
var expectedStatus = regexp.MustCompile(`the response status should be [0-9]+`)

// breakOnPurpose changes what a scenario expects so that it must fail: a
// draft it expects becomes active, else its first expected status 599.
func breakOnPurpose(scenario string) string {
	if broken := strings.Replace(scenario, `"draft"`, `"active"`, 1); broken != scenario {
		return broken
	}
	if loc := expectedStatus.FindStringIndex(scenario); loc != nil {
		return scenario[:loc[0]] + "the response status should be 599" + scenario[loc[1]:]
	}
	return scenario
}

// runFeature runs one scenario as a feature of its own with conform
// against a sandbox it starts.
func runFeature(t *testing.T, bin, scenario string) error {
	t.Helper()
	dir := t.TempDir()
	feature := "Feature: a scenario of the docs\n\n" + scenario + "\n"
	if err := os.WriteFile(filepath.Join(dir, "docs.feature"), []byte(feature), 0o644); err != nil {
		return err
	}
	base, err := startSandbox(t, filepath.Join(bin, "sandbox"), nil, dir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "conform"), "--base-url", base, "--profile", "sandbox",
		"--features", dir, "--no-builtin", "--format", "none", "--explore", "-1s")
	cmd.Env = []string{"SVC_API_KEY=svc_test_docsfeature", "HOME=" + dir, "NO_PROXY=*", "no_proxy=*"}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}
