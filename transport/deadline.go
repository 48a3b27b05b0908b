package transport

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// bodyDeadline bounds the time a request body may take to arrive: timeout
// after the handler starts (so after the headers), however slowly the bytes
// trickle in. http.Server.ReadTimeout would do the same but stays armed for
// the whole response, and net/http's background read (which watches for the
// client leaving) would then cancel every SSE stream and slow call when it
// fires. Here the deadline is lifted as soon as the body has been read to
// its end, and requests without a body get none.
//
// A handler that answers without reading the body leaves the deadline in
// place, so net/http's drain of the unread body before the response (up to
// 256 KiB) is bounded too; the refusals this package writes before reading
// a body skip that drain altogether (closeUnreadBody).
func bodyDeadline(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(timeout)); err != nil {
			next.ServeHTTP(w, r) // a writer without deadlines (not net/http's)
			return
		}
		// A shallow copy: net/http keeps its own *Request and inspects its
		// Body after the handler.
		r = r.WithContext(r.Context())
		r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline once the body has been read to EOF.
type deadlineBody struct {
	io.ReadCloser
	once sync.Once
	lift func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.lift)
	}
	return n, err
}

// isReadTimeout reports whether err is the body deadline firing.
func isReadTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// closeUnreadBody is for a response written before the request body was
// read: it closes the connection after the response, without reading the
// body. Otherwise net/http reads and discards an unread body (up to 256 KiB)
// before sending the response and again once the handler returns, so a
// client that announces a body and never sends it would hold the connection
// until ReadTimeout, and, without a deadline, never see the answer.
func closeUnreadBody(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now()) // not every writer has deadlines
}
