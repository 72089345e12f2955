package filters

// A request's handler runs on a goroutine that net/http starts for it
// with a small stack. Decoding, defaulting and validating an object call
// deep, so the stack is grown and copied several times per request, each
// copy walking every frame. Growing it once, early, while the stack is
// shallow, costs
// one cheap copy instead. Two goroutines serve each request: net/http's,
// where observe, the outermost filter, grows it; and the one the deadline
// filter (upstream's WithTimeout) runs the rest of
// the chain on, which the timeout package grows as it starts. Left alone,
// even a GET grows each of them in the middle of the chain (under
// ServeMux's matching and the timeout error's formatting).

// requestStackBytes is how much stack a request is given up front.
const requestStackBytes = 16 << 10

// GrowStack makes the calling goroutine's stack at least
// requestStackBytes deep.
//
//go:noinline
func GrowStack() {
	var frame [requestStackBytes]byte
	touch(frame[:])
}

//go:noinline
func touch(b []byte) { b[len(b)-1] = 0 }
