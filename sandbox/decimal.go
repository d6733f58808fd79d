package sandbox

import "encoding/json"

// Decimal is a JSON number kept as the literal the client sent, so that money
// amounts come back exactly as they went in.
type Decimal string

// MarshalJSON writes the number literal unchanged.
func (d Decimal) MarshalJSON() ([]byte, error) {
	if d == "" {
		return []byte("0"), nil
	}
	return []byte(d), nil
}

// UnmarshalJSON accepts a JSON number literal and keeps its text.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*d = Decimal(n)
	return nil
}
