package sales

// SetMaxExamined lowers the bound of a search by the records for one test;
// the returned function restores it.
func SetMaxExamined(n int) func() {
	old := maxExamined
	maxExamined = n
	return func() { maxExamined = old }
}
