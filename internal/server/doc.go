// Package server is the HTTP face of toolgate: the API of docs/api.md that
// `toolgate serve` runs.
//
// A [Server] puts every POST /v1/check through a [gate.Gate] whose
// approver is the server's [Broker]. When the engine asks, the Broker holds
// the question as a pending [Approval] until a person answers it (POST
// /v1/approvals/{id}, POST /v1/sessions/{id}/respond or the web page), the
// gate's timeout passes, or the agent goes away; the gate records the
// outcome in the event log either way. The log is served as JSON and as
// Server-Sent Events that resume from Last-Event-ID without missing or
// repeating an event.
//
// Two bearer tokens ([Tokens], kept in the state directory) separate the
// roles: the agent token may check calls and read its own sessions, the
// approver token may do everything. A person's browser signs in once with
// a one-time login code ([Server.LoginCode]): the page redeems it for a
// session token that it keeps in its own origin's sessionStorage and sends
// in the X-Toolgate-Session header ([SessionHeader]), never in a cookie,
// which every other server on the same host would receive. The token
// lapses an hour after it was last renewed, and the session twelve hours
// after its login ([WebSessionIdle], [WebSessionMaxAge]); its requests must
// come from the server's own origin.
//
// A typical embedding:
//
//	broker := server.NewBroker(server.BrokerOptions{})
//	g, _ := gate.New(eng, store, broker, gate.Options{NewID: broker.NewID})
//	srv, _ := server.New(server.Options{Gate: g, Broker: broker, Engine: eng, Store: store, Tokens: tokens})
//	_ = srv.Serve(listener)
package server
