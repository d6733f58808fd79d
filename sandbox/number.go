package sandbox

// NumberLiteral is a JSON number split as its grammar reads it,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, with nothing around it.
type NumberLiteral struct {
	Negative bool
	// Whole is the integer part's digits.
	Whole string
	// Fraction is empty, or the dot and the digits after it.
	Fraction string
	// Exponent is empty, or the exponent's sign, if any, and digits.
	Exponent string
}

// ParseNumberLiteral splits s, and reports false if s is not exactly one
// JSON number. Requests and responses check every amount with it, so it
// walks the bytes once rather than running a regular expression.
func ParseNumberLiteral(s string) (NumberLiteral, bool) {
	var lit NumberLiteral
	i := 0
	if i < len(s) && s[i] == '-' {
		lit.Negative = true
		i++
	}
	start := i
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return NumberLiteral{}, false
	}
	lit.Whole = s[start:i]
	if i < len(s) && s[i] == '.' {
		start = i
		if i++; i == len(s) || !isDigit(s[i]) {
			return NumberLiteral{}, false
		}
		i = skipDigits(s, i)
		lit.Fraction = s[start:i]
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		start = i
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || !isDigit(s[i]) {
			return NumberLiteral{}, false
		}
		i = skipDigits(s, i)
		lit.Exponent = s[start:i]
	}
	if i != len(s) {
		return NumberLiteral{}, false
	}
	return lit, true
}

// isIntegerLiteral reports whether s is an optional minus sign and digits.
func isIntegerLiteral(s string) bool {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	return digits != "" && skipDigits(digits, 0) == len(digits)
}

// skipDigits returns the index of the first byte at or after i that is not
// a digit.
func skipDigits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
