package runner

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/plan"
)

// godog's pretty formatter ends each step's line with where the step is
// defined: the file and line of the sc.Step call and the Go function bound
// to it. Every step of the kit is bound in one loop to a method of the
// scenario's state, so that comment reads "steps.go:176 -> *ScenarioState"
// on every line, which tells an author nothing. godog offers no way to
// change it: its formatters are internal, and one of our own cannot take
// the storage pretty reads its results from. So the pretty output passes
// through stepLocator, which puts the step's own place in its feature file
// in that comment, as the scenario's header already shows its own.

var (
	ansiRe = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// definitionRe is the comment godog writes after a step, as
	// DefinitionID formats it.
	definitionRe = regexp.MustCompile(`# [^\s\x1b]+\.go:[0-9]+ -> [^\s\x1b]+`)
	// stepLineRe reads a step line of pretty (its colours taken out): the
	// keyword and the text, and the definition comment. A keyword may hold
	// spaces ("Etant donné que"), so the step is told by its text's end.
	stepLineRe = regexp.MustCompile(`^\s+(.*?)\s+# [^\s]+\.go:[0-9]+ -> \S+\s*$`)
	// placedRe finds the file and line pretty gives a scenario.
	placedRe = regexp.MustCompile(`# (\S+\.feature):([0-9]+)\s*$`)
)

// writtenStep is a step of a feature file: its line and its text.
type writtenStep struct {
	line int
	text string
}

// stepLocator rewrites godog's pretty output line by line, as described
// above. It follows the output: a Feature line names the candidate files,
// a scenario's header its file and line, and each step is the next step
// of that file, after the last one placed, with the same text.
type stepLocator struct {
	w        io.Writer
	partial  []byte
	steps    map[string][]writtenStep // by URI, in line order
	byHeader map[string][]string      // URIs by feature header, "Feature: Name"
	uris     []string                 // where the next step may be
	after    int                      // the line the next step follows
}

func newStepLocator(w io.Writer, files []plan.FeatureFile) *stepLocator {
	l := &stepLocator{w: w, steps: map[string][]writtenStep{}, byHeader: map[string][]string{}}
	for _, f := range files {
		header, written := plan.WrittenSteps(f)
		if written == nil {
			continue
		}
		l.byHeader[header] = append(l.byHeader[header], f.URI)
		all := make([]writtenStep, len(written))
		for i, s := range written {
			all[i] = writtenStep{s.Line, s.Text}
		}
		l.steps[f.URI] = all
	}
	return l
}

// Write passes complete lines on, rewritten; a partial line waits for its
// end, or for Flush.
func (l *stepLocator) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := l.rewrite(string(l.partial[:i]))
		rest := l.partial[i+1:]
		if _, err := io.WriteString(l.w, line+"\n"); err != nil {
			return 0, err
		}
		l.partial = append(l.partial[:0], rest...)
	}
}

// Flush writes what is left of a last line without its newline.
func (l *stepLocator) Flush() error {
	if len(l.partial) == 0 {
		return nil
	}
	_, err := l.w.Write(l.partial)
	l.partial = l.partial[:0]
	return err
}

func (l *stepLocator) rewrite(line string) string {
	plain := ansiRe.ReplaceAllString(line, "")
	if uris, ok := l.byHeader[strings.TrimSpace(plain)]; ok {
		l.uris, l.after = uris, 0
		return line
	}
	m := stepLineRe.FindStringSubmatch(plain)
	if m == nil {
		if p := placedRe.FindStringSubmatch(plain); p != nil {
			n, _ := strconv.Atoi(p[2])
			l.uris, l.after = []string{p[1]}, n
		}
		return line
	}
	for _, uri := range l.uris {
		for _, s := range l.steps[uri] {
			if s.line > l.after && strings.HasSuffix(m[1], " "+s.text) {
				l.uris, l.after = []string{uri}, s.line
				place := "# " + uri + ":" + strconv.Itoa(s.line)
				return definitionRe.ReplaceAllLiteralString(line, place)
			}
		}
	}
	// A step it cannot place loses the comment rather than keep one
	// that points nowhere useful.
	return strings.TrimRight(definitionRe.ReplaceAllLiteralString(line, ""), " ")
}
