// Package stage is the set-up stage of the Linux sandbox, kept apart from
// package sandbox so that it depends on little: the stage runs in the
// package's init function of the binary re-executed through
// /proc/self/exe, and Go initializes a package with few dependencies
// before the heavy ones, which the stage does not need.
//
// The stage sets up the mounts and the network namespace that the
// parent's clone created, confines its own thread with Landlock and
// seccomp, and replaces itself with the program. Go cannot do this in the
// parent: a multithreaded process cannot unshare or restrict itself
// before exec without affecting every goroutine. The stage runs only when
// argv[0] is [Arg0] and [Env] is set; any other run of the binary is left
// alone.
package stage
