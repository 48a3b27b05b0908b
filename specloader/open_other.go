//go:build !unix

package specloader

// openNonBlock is 0 where open(2)'s O_NONBLOCK does not exist.
const openNonBlock = 0
