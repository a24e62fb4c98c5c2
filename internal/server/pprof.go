package server

import (
	"net/http"
	"net/http/pprof"
)

// profilingRoutes serves Go's runtime profiles under /debug/pprof/ to the
// approver: the index, cmdline, profile (CPU, ?seconds=N), symbol, trace,
// and the named profiles (heap, goroutine, allocs, block, mutex,
// threadcreate). A profile shows the server's memory and command line,
// so the agent token gets 403 like on every approver endpoint.
func (s *Server) profilingRoutes(m *http.ServeMux) {
	serve := func(h http.HandlerFunc) http.Handler {
		return s.authed(RoleApprover, func(w http.ResponseWriter, r *http.Request, _ principal) error {
			h(w, r)
			return nil
		}, nil)
	}
	m.Handle("GET /debug/pprof/cmdline", serve(pprof.Cmdline))
	m.Handle("GET /debug/pprof/profile", serve(pprof.Profile))
	m.Handle("GET /debug/pprof/symbol", serve(pprof.Symbol))
	m.Handle("POST /debug/pprof/symbol", serve(pprof.Symbol))
	m.Handle("GET /debug/pprof/trace", serve(pprof.Trace))
	m.Handle("GET /debug/pprof/", serve(pprof.Index)) // the index, and the named profiles under it
}
