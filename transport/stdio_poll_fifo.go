//go:build unix && !darwin && !ios && !dragonfly && !freebsd && !netbsd && !openbsd

package transport

// fifoPollable: epoll reports every end of a pipe or FIFO.
const fifoPollable = true
