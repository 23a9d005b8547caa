package interrupt

// CheckSequence is the check Instrument inserts, for tests that take an
// instrumented module apart.
func CheckSequence(flag, fuel, yield uint32) []byte { return checkSequence(flag, fuel, yield) }
