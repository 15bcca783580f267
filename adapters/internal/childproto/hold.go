package childproto

// A child started with a detach grace (Args.DetachGrace) outlives the Hub
// that started it, so that the next Hub can adopt it: a Hub's restart,
// or the loss of its connection to a host, then costs no work in the
// session.
//
// The Hub that started the child holds it by its stdin, as in the first
// protocol, but ends it politely by writing StopLine there; the end of
// stdin alone means that Hub is gone. A Hub that adopts the child holds
// it by a GET of HoldPath instead, which the child answers 200 at once
// and never ends while it runs: the end of that response, read to its
// proper end, is the child's end; an error reading it is the connection
// lost. The adopting Hub stops the child with SIGTERM.
//
// The child stops once it has had neither stdin nor a hold for the whole
// grace, so a session no Hub comes back for ends by itself.

// HoldPath is the endpoint an adopting Hub holds a child by.
const HoldPath = InternalPrefix + "hold"

// StopLine, written on the stdin of a child with a detach grace, asks it
// to stop in order.
const StopLine = "stop\n"
