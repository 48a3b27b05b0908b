package mcpx

// SetMaxListPage sets the size of a tools/list page, for the test; the
// returned function restores it.
func SetMaxListPage(n int) func() {
	old := maxListPage
	maxListPage = n
	return func() { maxListPage = old }
}
