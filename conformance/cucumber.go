package conformance

import (
	"io"
	"sync"

	"github.com/cucumber/godog"
)

// cucumberFormat is a godog formatter that writes godog's own cucumber JSON
// to the writer registered for the suite. godog opens report files itself
// and would bypass redaction; routing through the registry keeps the key
// out of the file.
const cucumberFormat = "conform-cucumber"

var (
	cucumberOnce    sync.Once
	cucumberWriters sync.Map // suite name → io.Writer
)

func registerCucumber(suite string, w io.Writer) string {
	cucumberOnce.Do(func() {
		godog.Format(cucumberFormat, "cucumber JSON through the kit's redaction", func(suite string, out io.Writer) godog.Formatter {
			if w, ok := cucumberWriters.Load(suite); ok {
				out = w.(io.Writer)
			}
			return godog.FindFmt(FormatCucumber)(suite, out)
		})
	})
	cucumberWriters.Store(suite, w)
	return cucumberFormat
}

func unregisterCucumber(suite string) { cucumberWriters.Delete(suite) }
