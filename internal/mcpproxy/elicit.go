package mcpproxy

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/termtext"
)

// ElicitationChannel is the channel the answers given through MCP
// elicitation are recorded with (permission.requested and
// permission.resolved "channel").
const ElicitationChannel = "mcp-elicitation"

// maxShownArgs bounds the arguments shown in an elicitation message.
const maxShownArgs = 2000

// canElicit reports whether a call of the client on ss that needs a
// person's answer may be put to that person through MCP elicitation: no
// toolgate serve decides the calls, the policy does not turn
// mcp_elicitation off, and the client declared form elicitation when it
// initialized.
func (p *Proxy) canElicit(ss *mcp.ServerSession) bool {
	if p.opts.Remote != nil || ss == nil {
		return false
	}
	init := ss.InitializeParams()
	if init == nil || init.Capabilities == nil || init.Capabilities.Elicitation == nil {
		return false
	}
	if c := init.Capabilities.Elicitation; c.Form == nil && c.URL != nil {
		return false // only URL elicitation: no form to answer in
	}
	on, err := p.opts.Engine.MCPElicitation(p.opts.Cwd)
	return err == nil && on
}

// elicitor asks the person at the MCP client about one call, through
// elicitation/create on the client's session.
//
// The answer comes from the MCP client, which runs beside the agent: it
// is as trustworthy as that client's own permission prompt, and no more.
// A policy that must not take answers from the client sets
// mcp_elicitation = false.
type elicitor struct {
	ss     *mcp.ServerSession
	server string // the MCP server's name
	tool   string // the tool's name on its server
	// legacyEnum offers the choice as enum and enumNames, for a client on
	// a protocol version before titled enums (oneOf of const and title,
	// from 2025-11-25).
	legacyEnum bool
}

// titledEnumVersion is the first protocol version whose forms have
// titled enums.
const titledEnumVersion = "2025-11-25"

// Approve puts ar to the person through the client (elicitation/create,
// for a client on a protocol version that lets a server send it while it
// serves a call) and returns their answer as [answerOf] reads it.
func (e elicitor) Approve(ctx context.Context, ar *approval.Request) (approval.Answer, error) {
	res, err := e.ss.Elicit(ctx, e.params(ar))
	if err != nil {
		if ctx.Err() != nil {
			return approval.Answer{}, ctx.Err()
		}
		return approval.Answer{}, fmt.Errorf("asking through the MCP client (elicitation) failed: %w", err)
	}
	return answerOf(res)
}

// answerOf reads the person's answer: an accepted form whose decision is
// "allow" allows the call once (a destructive call also needs its
// confirmation typed); a form answered "deny", a declined or dismissed
// question is a deny by the user; no answer, or one the protocol does
// not define, fails the approval, which the gate turns into a deny.
func answerOf(res *mcp.ElicitResult) (approval.Answer, error) {
	if res == nil {
		return approval.Answer{}, errors.New("the MCP client sent no answer to the question")
	}
	switch res.Action {
	case "accept":
		decision, _ := res.Content["decision"].(string)
		confirm, _ := res.Content["confirm"].(string)
		switch decision {
		case "allow":
			return approval.Answer{Kind: approval.AllowOnce, Confirm: confirm}, nil
		case "deny":
			return approval.Answer{Kind: approval.Deny, Message: "the user denied the call in the MCP client"}, nil
		}
		return approval.Answer{}, fmt.Errorf("the MCP client accepted the question with decision %q, neither allow nor deny", termtext.OneLine(decision, 40))
	case "decline":
		return approval.Answer{Kind: approval.Deny, Message: "the user declined the call in the MCP client"}, nil
	case "cancel":
		return approval.Answer{Kind: approval.Deny, Message: "the user dismissed the question in the MCP client"}, nil
	}
	return approval.Answer{}, fmt.Errorf("the MCP client answered the question with action %q, neither accept, decline nor cancel", termtext.OneLine(res.Action, 40))
}

// params is the elicitation that asks ar.
func (e elicitor) params(ar *approval.Request) *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "form", Message: e.message(ar), RequestedSchema: e.schema(ar)}
}

// message is the question's text: the tool, its arguments, why toolgate
// asks and the risk. What the agent supplied is escaped, so that it
// cannot pose as a line of the question.
func (e elicitor) message(ar *approval.Request) string {
	args, err := json.Marshal(ar.Input)
	if err != nil {
		args = []byte("(arguments that cannot be shown)")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "toolgate: the agent wants to call the tool %s of the MCP server %s (%s).\n",
		termtext.Escape(e.tool), termtext.Escape(e.server), termtext.Escape(ar.Tool))
	fmt.Fprintf(&b, "Arguments: %s\n", termtext.Clip(termtext.Escape(string(args)), maxShownArgs))
	fmt.Fprintf(&b, "Why it asks: %s", termtext.Escape(ar.Reason))
	if ar.Message != "" {
		fmt.Fprintf(&b, ": %s", termtext.Clip(termtext.Escape(ar.Message), maxShownArgs))
	}
	fmt.Fprintf(&b, "\nRisk: %s", termtext.Escape(ar.Risk))
	if ar.Destructive {
		fmt.Fprintf(&b, ", destructive: what it changes may not come back. To allow it, type %s in the confirmation field.", ar.ConfirmWord())
	}
	b.WriteString("\nAllow it once, or deny it?")
	return b.String()
}

// schema is the form the person answers: allow or deny, and for a
// destructive call the confirmation to type.
func (e elicitor) schema(ar *approval.Request) map[string]any {
	decision := map[string]any{
		"type":        "string",
		"title":       "Your answer",
		"description": "Allow runs this one call; deny refuses it.",
		"oneOf": []any{
			map[string]any{"const": "allow", "title": "Allow once"},
			map[string]any{"const": "deny", "title": "Deny"},
		},
	}
	if e.legacyEnum {
		delete(decision, "oneOf")
		decision["enum"] = []any{"allow", "deny"}
		decision["enumNames"] = []any{"Allow once", "Deny"}
	}
	props := map[string]any{"decision": decision}
	if ar.Destructive {
		props["confirm"] = map[string]any{
			"type":        "string",
			"title":       "Confirmation",
			"description": "To allow this destructive call, type " + ar.ConfirmWord(),
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": []any{"decision"}}
}

// multiRoundTripVersion is the first MCP protocol version in which a
// server may not send the client a request (elicitation among them) while
// it serves a call: it answers the call with the requests it needs
// (inputRequests) and the client calls again with the answers
// (inputResponses), echoing the server's requestState.
const multiRoundTripVersion = "2026-07-28"

// multiRoundTrip reports whether the client on ss takes its questions as
// inputRequests of a call's result rather than as requests of their own.
func multiRoundTrip(ss *mcp.ServerSession) bool {
	init := ss.InitializeParams()
	return init != nil && init.ProtocolVersion >= multiRoundTripVersion
}

// pendingAsk is a question put to the person in a call's result, waiting
// for the client to call again with the answer.
type pendingAsk struct {
	answer chan *mcp.ElicitResult   // the answer the client brought back
	done   chan *mcp.CallToolResult // the call's result, once decided (and run)
}

// askAcrossCalls decides req for a client that takes questions in the
// result of the call ([multiRoundTrip]). The gate decides, records and
// runs the call in the background; when it asks, the question goes back
// to the client as this call's inputRequests, with a requestState that
// binds it to this tool and these arguments. The client's next call with
// the answer ([Proxy.resume]) hands it to the waiting gate and gets the
// call's result. A call decided without asking returns its result here.
// A question the client never answers is denied when the gate's approval
// timeout passes, as any unanswered question is.
func (p *Proxy) askAcrossCalls(ctx context.Context, req *engine.Request, tool string, call func(context.Context) (*mcp.CallToolResult, error)) *mcp.CallToolResult {
	id, err := newAskID()
	if err != nil {
		return refused(fmt.Sprintf("toolgate denied %s: %v", req.Tool, err))
	}
	pa := &pendingAsk{answer: make(chan *mcp.ElicitResult, 1), done: make(chan *mcp.CallToolResult, 1)}
	asked := make(chan *approval.Request, 1)
	ask := approval.ApproverFunc(func(actx context.Context, ar *approval.Request) (approval.Answer, error) {
		asked <- ar
		select {
		case res := <-pa.answer:
			return answerOf(res)
		case <-actx.Done():
			return approval.Answer{}, actx.Err()
		}
	})
	p.pmu.Lock()
	p.pending[id] = pa
	p.pmu.Unlock()
	// The decision outlives this call, which returns with the question.
	gctx := gate.AskThrough(context.WithoutCancel(ctx), ask, ElicitationChannel)
	go func() {
		res := p.run(gctx, req, call)
		p.claim(id) // an answer that comes later finds nothing to answer
		pa.done <- res
	}()
	select {
	case ar := <-asked:
		e := elicitor{server: p.opts.Name, tool: tool}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{id: e.params(ar)},
			RequestState:  p.state(id, req.Tool, req.Input),
		}
	case res := <-pa.done:
		return res
	case <-ctx.Done():
		return refused(fmt.Sprintf("toolgate denied %s: the call was cancelled", req.Tool))
	}
}

// resume takes the client's call again with the person's answer: it must
// carry a requestState toolgate issued for this very tool and these very
// arguments, for a question still open; anything else is refused, and the
// question stays open until it is answered or times out. Each question
// is answered once.
func (p *Proxy) resume(ctx context.Context, params *mcp.CallToolParamsRaw, full string, args map[string]any) *mcp.CallToolResult {
	id, ok := p.verifyState(params.RequestState, full, args)
	if !ok {
		return refused(fmt.Sprintf("toolgate denied %s: the answer it carries is not for a question toolgate asked about this call (its tool or arguments differ, or the state is not toolgate's)", full))
	}
	pa := p.claim(id)
	if pa == nil {
		return refused(fmt.Sprintf("toolgate denied %s: the question this answer is for is closed (answered already, or timed out)", full))
	}
	res, _ := params.InputResponses[id].(*mcp.ElicitResult)
	pa.answer <- res
	select {
	case out := <-pa.done:
		return out
	case <-ctx.Done():
		return refused(fmt.Sprintf("toolgate: the call %s was cancelled while it was decided; the log records how it ended", full))
	}
}

// claim removes the open question id and returns it, or nil.
func (p *Proxy) claim(id string) *pendingAsk {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	pa := p.pending[id]
	delete(p.pending, id)
	return pa
}

func newAskID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("no randomness for the question's id: %w", err)
	}
	return "toolgate-" + hex.EncodeToString(b[:]), nil
}

// state is the requestState of question id: the id and a MAC, under a key
// only this proxy holds, of the id, the tool and its arguments.
func (p *Proxy) state(id, full string, args map[string]any) string {
	return id + "." + p.mac(id, full, args)
}

func (p *Proxy) verifyState(state, full string, args map[string]any) (string, bool) {
	id, sum, ok := strings.Cut(state, ".")
	if !ok || id == "" {
		return "", false
	}
	want := p.mac(id, full, args)
	return id, want != "" && hmac.Equal([]byte(sum), []byte(want))
}

func (p *Proxy) mac(id, full string, args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil {
		return ""
	}
	m := hmac.New(sha256.New, p.key)
	for _, part := range [][]byte{[]byte(id), []byte(full), b} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		m.Write(n[:])
		m.Write(part)
	}
	return hex.EncodeToString(m.Sum(nil))
}
