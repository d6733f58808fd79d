package kit

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden reports in testdata/golden from the recorded results")

// formats are the reports a run writes, each with how two of them are
// compared: after decoding (junit, cucumber JSON), after normalising the
// layout (HTML), or line by line (the summary).
var formats = []struct {
	ext     string
	write   func(*Report, io.Writer) error
	compare func(want, got []byte) (string, error)
}{
	{"junit.xml", (*Report).WriteJUnit, diffXML},
	{"cucumber.json", (*Report).WriteCucumber, diffJSON},
	{"html", (*Report).WriteHTML, diffHTML},
	{"summary.txt", func(r *Report, w io.Writer) error { r.WriteSummary(w); return nil }, diffLines},
}

// TestReportsMatchTheGoldenFiles writes every report of recorded results
// (testdata/*.json: a run with every status, and a run that stopped) and
// compares each with its golden file; -update rewrites them.
func TestReportsMatchTheGoldenFiles(t *testing.T) {
	recorded, err := filepath.Glob("testdata/*.json")
	if err != nil || len(recorded) == 0 {
		t.Fatalf("no recorded results in testdata: %v", err)
	}
	for _, path := range recorded {
		for _, f := range formats {
			name := strings.TrimSuffix(filepath.Base(path), ".json") + "." + f.ext
			t.Run(name, func(t *testing.T) {
				var got bytes.Buffer
				if err := f.write(recordedReport(t, path), &got); err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", "golden", name)
				if *update {
					if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (go test -update writes it)", err)
				}
				diff, err := f.compare(want, got.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				if diff != "" {
					t.Errorf("%s differs from %s (-want +got; go test -update rewrites it):\n%s", name, golden, diff)
				}
			})
		}
	}
}

// recordedReport reads the results of a run recorded in testdata.
func recordedReport(t *testing.T, path string) *Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &rep
}

// xmlNode is an XML element as its content means it: name, attributes,
// trimmed text and children, whatever the indentation.
type xmlNode struct {
	Name     string
	Attrs    map[string]string
	Text     string
	Children []xmlNode
}

func (n *xmlNode) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	n.Name = start.Name.Local
	n.Attrs = map[string]string{}
	for _, a := range start.Attr {
		n.Attrs[a.Name.Local] = a.Value
	}
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			var c xmlNode
			if err := c.UnmarshalXML(d, tok); err != nil {
				return err
			}
			n.Children = append(n.Children, c)
		case xml.CharData:
			text.Write(tok)
		case xml.EndElement:
			n.Text = strings.TrimSpace(text.String())
			return nil
		}
	}
}

func diffXML(want, got []byte) (string, error) {
	var w, g xmlNode
	if err := xml.Unmarshal(want, &w); err != nil {
		return "", err
	}
	if err := xml.Unmarshal(got, &g); err != nil {
		return "", err
	}
	return cmp.Diff(w, g), nil
}

func diffJSON(want, got []byte) (string, error) {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return "", err
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return "", err
	}
	return cmp.Diff(w, g), nil
}

var spaces = regexp.MustCompile(`\s+`)

// diffHTML compares the pages after normalising their layout: runs of
// white space are one space, and each tag starts a line of its own.
func diffHTML(want, got []byte) (string, error) {
	norm := func(b []byte) []string {
		s := spaces.ReplaceAllString(string(b), " ")
		return strings.Split(strings.ReplaceAll(s, "<", "\n<"), "\n")
	}
	return cmp.Diff(norm(want), norm(got)), nil
}

func diffLines(want, got []byte) (string, error) {
	return cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")), nil
}
