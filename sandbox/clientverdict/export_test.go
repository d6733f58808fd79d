package clientverdict

// ReceivedCode and ReceivedWord give the external tests the trace's reading
// of the journal's words for what a client received.
func ReceivedCode(word string) (uint8, bool) {
	code, ok := receivedCodes[word]
	return code, ok
}

func ReceivedWord(code uint8) string { return receivedWords[code] }
