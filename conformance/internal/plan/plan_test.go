package plan

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/features"
)

func TestMatchTags(t *testing.T) {
	tags := []string{"@auth", "@must", "@stable"}
	tests := []struct {
		expr string
		want bool
	}{
		{"", true},
		{"@auth", true},
		{"@envelope,@auth", true},
		{"@auth && ~@must", false},
		{"~@writes", true},
		{"@auth && @beta", false},
		{"auth", true},
	}
	for _, tt := range tests {
		if got := matchTags(tt.expr, tags); got != tt.want {
			t.Errorf("matchTags(%q) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

func TestSkipReason(t *testing.T) {
	live := PlanOptions{APIKey: kit.LivePrefix + "abcdefghijkl", Profile: kit.ProfileSpec}
	tests := []struct {
		name string
		cfg  PlanOptions
		env  RunEnv
		tags []string
		want string
		as   kit.Status
	}{
		{"live key, writes", live, RunEnv{}, []string{"@writes"}, "live key", kit.Disabled},
		{"live key, writes allowed", PlanOptions{APIKey: live.APIKey, Profile: kit.ProfileSpec, AllowWrites: true}, RunEnv{}, []string{"@writes"}, "", kit.Passed},
		{"live key, exhaustive opted in", PlanOptions{APIKey: live.APIKey, Exhaustive: true}, RunEnv{}, []string{"@exhaustive"}, "live key", kit.Disabled},
		{"test key, exhaustive not opted in", PlanOptions{APIKey: kit.TestPrefix + "k"}, RunEnv{}, []string{"@exhaustive"}, "pass --exhaustive", kit.Disabled},
		{"sandbox scenario, spec profile", PlanOptions{APIKey: kit.TestPrefix + "k", Profile: kit.ProfileSpec}, RunEnv{}, []string{"@sandbox"}, "--profile sandbox", kit.Disabled},
		{"sandbox scenario, sandbox profile", PlanOptions{APIKey: kit.TestPrefix + "k", Profile: kit.ProfileSandbox}, RunEnv{}, []string{"@sandbox", "@writes"}, "", kit.Passed},
		{"seed scenario, other fixtures", PlanOptions{APIKey: kit.TestPrefix + "k", Profile: kit.ProfileSandbox}, RunEnv{}, []string{"@sandbox", "@seed"}, "built-in seed", kit.Skipped},
		{"seed scenario, built-in seed", PlanOptions{APIKey: kit.TestPrefix + "k", Profile: kit.ProfileSandbox}, RunEnv{Seeded: true}, []string{"@sandbox", "@seed"}, "", kit.Passed},
		{"delivery scenario, receiver off", PlanOptions{APIKey: kit.TestPrefix + "k", Profile: kit.ProfileSandbox, WebhookListen: "off"}, RunEnv{Seeded: true, NoReceiver: "it is off"}, []string{"@sandbox", "@delivery"}, "receiver", kit.Disabled},
		{"delivery scenario, receiver unreachable", PlanOptions{APIKey: kit.TestPrefix + "k", Profile: kit.ProfileSandbox}, RunEnv{Seeded: true, NoReceiver: "it listens on loopback"}, []string{"@sandbox", "@delivery"}, "loopback", kit.Skipped},
	}
	for _, tt := range tests {
		got, as := skipReason(tt.cfg, tt.env, tt.tags)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: skipReason = %q, want it to say %q", tt.name, got, tt.want)
		}
		if got != "" && as != tt.as {
			t.Errorf("%s: counted as %s, want %s", tt.name, as, tt.as)
		}
		// godog's filter must drop exactly what skipReason skips.
		if kept := matchTags(strings.Join(ExclusionTags(tt.cfg, tt.env), " && "), tt.tags); kept != (got == "") {
			t.Errorf("%s: exclusion tags keep=%v, but skip reason %q", tt.name, kept, got)
		}
	}
}

func TestValidateTags(t *testing.T) {
	tests := []struct {
		expr string
		ok   bool
	}{
		{"", true},
		{"@auth", true},
		{"@auth,@envelope && ~@should", true},
		{"@auth&&", false},
		{"&&@auth", false},
		{"@auth,,@bugs", false},
		{"auth", false},
		{"@au th", false},
	}
	for _, tt := range tests {
		if err := ValidateTags(tt.expr); (err == nil) != tt.ok {
			t.Errorf("validateTags(%q) = %v, want ok=%v", tt.expr, err, tt.ok)
		}
	}
}

// TestLoadErrorsKeepTheirCause: a feature directory that cannot be read
// is a usage error that still says, to errors.Is, what went wrong.
func TestLoadErrorsKeepTheirCause(t *testing.T) {
	_, err := LoadFeatures(PlanOptions{NoBuiltin: true, FeatureDirs: []string{filepath.Join(t.TempDir(), "missing")}})
	if !errors.Is(err, kit.ErrUsage) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadFeatures of a missing directory: %v; want a usage error wrapping fs.ErrNotExist", err)
	}
}

// countingFS counts, per file, how often it is opened and how many bytes
// are read of it.
type countingFS struct {
	fs.FS
	opens, read map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if err != nil || !strings.HasSuffix(name, ".feature") {
		return f, err
	}
	c.opens[name]++
	return &countingFile{File: f, n: func(k int) { c.read[name] += k }}, nil
}

type countingFile struct {
	fs.File
	n func(int)
}

func (f *countingFile) Read(b []byte) (int, error) {
	k, err := f.File.Read(b)
	f.n(k)
	return k, err
}

// TestEachFeatureFileIsParsedOnce: the plan, the lint, the tag and line
// checks and godog's content all use the one parse made when a file was
// read, which reads the file through once.
func TestEachFeatureFileIsParsedOnce(t *testing.T) {
	fsys := &countingFS{FS: features.FS, opens: map[string]int{}, read: map[string]int{}}
	files, err := readFeatures(fsys, "features", true, (&messages.Incrementing{}).NewId)
	if err != nil {
		t.Fatal(err)
	}
	files[0].lines = map[int]bool{1: true}
	if _, err := Plan(PlanOptions{Profile: kit.ProfileSandbox}, files, RunEnv{}); err != nil {
		t.Fatal(err)
	}
	Lint(files)
	UnknownTags("@bugs", files)
	UnmatchedLines(files)
	for _, f := range files {
		GodogContent(f)
	}
	if len(files) < 10 {
		t.Fatalf("%d built-in feature files, want the whole suite", len(files))
	}
	for _, f := range files {
		name := strings.TrimPrefix(f.URI, "features/")
		size, _ := fs.Stat(features.FS, name)
		if fsys.opens[name] != 1 || int64(fsys.read[name]) != size.Size() {
			t.Errorf("%s: opened %d times, %d bytes read; want once, its %d bytes", name, fsys.opens[name], fsys.read[name], size.Size())
		}
	}
}

// TestGodogsPicklesJoinThePlan: godog parses the content the runner gives
// it on its own, with its own ids, a line selection blanked out; each of
// its pickles has the fingerprint of exactly one selected planned
// scenario, so results join the plan without godog's ids.
func TestGodogsPicklesJoinThePlan(t *testing.T) {
	dir := t.TempDir()
	const text = `Feature: joined
  Scenario: plain
    When I send a GET request to "/v1/campaigns"

  Scenario Outline: rows
    When I send a GET request to "/v1/<what>"

    Examples:
      | what      | note |
      | campaigns | a    |
      | bugs      | b    |
      | bugs      | c    |
`
	file := filepath.Join(dir, "joined.feature")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := LoadFeatures(PlanOptions{NoBuiltin: true, FeatureDirs: []string{file + ":11", file + ":12"}})
	if err != nil {
		t.Fatal(err)
	}
	planned, err := Plan(PlanOptions{}, files, RunEnv{})
	if err != nil {
		t.Fatal(err)
	}
	byPrint := map[string][]int{}
	for _, p := range planned {
		if p.Selected {
			byPrint[p.Fingerprint] = append(byPrint[p.Fingerprint], p.Line)
		}
	}
	newID := (&messages.Incrementing{}).NewId
	for range 7 {
		newID() // godog's ids are not the plan's
	}
	doc, err := gherkin.ParseGherkinDocument(bytes.NewReader(GodogContent(files[0])), newID)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, p := range gherkin.Pickles(*doc, files[0].URI, newID) {
		lines := byPrint[Fingerprint(p)]
		if len(lines) == 0 {
			t.Fatalf("godog's pickle %q joins no selected scenario", p.Name)
		}
		got = append(got, lines[0])
		byPrint[Fingerprint(p)] = lines[1:]
	}
	if want := []int{11, 12}; !slices.Equal(got, want) {
		t.Errorf("godog's pickles joined the scenarios at lines %v, want %v", got, want)
	}
}
