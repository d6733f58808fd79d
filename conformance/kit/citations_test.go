package kit

import (
	"slices"
	"testing"
)

func TestCitationsAreTheTagsThatNameRules(t *testing.T) {
	got := Citations([]string{"@sandbox", "@AUTH-3", "@writes", "AUTH-3", "@LIST-9", "@NOPE-1"})
	if want := []string{"AUTH-3", "LIST-9"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
