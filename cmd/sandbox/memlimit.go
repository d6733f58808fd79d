package main

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag value in GOMEMLIMIT's syntax: a number of bytes with an
// optional B, KiB, MiB, GiB or TiB suffix; zero means no limit.
type byteSize int64

var byteUnits = []struct {
	suffix string
	factor int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

func (b *byteSize) String() string {
	for _, u := range byteUnits {
		if *b != 0 && int64(*b)%u.factor == 0 {
			return strconv.FormatInt(int64(*b)/u.factor, 10) + u.suffix
		}
	}
	return "0"
}

func (b *byteSize) Set(v string) error {
	number, factor := v, int64(1)
	for _, u := range byteUnits {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			number, factor = n, u.factor
			break
		}
	}
	n, err := strconv.ParseInt(number, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/factor {
		return fmt.Errorf("%q is not a size such as 1900MiB or 2GiB", v)
	}
	*b = byteSize(n * factor)
	return nil
}
