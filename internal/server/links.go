package server

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/notify"
	"github.com/toolgate/toolgate/internal/termtext"
)

// The answer links of notifications: GET /a/{token} shows the approval
// and a button, and only POST /a/{token} answers. Opening a link (or a
// chat app fetching a preview of it) changes nothing.

// linkFuncs are the template's functions: visible shows agent text with
// the characters a browser would act on rather than show (controls,
// bidirectional-text overrides that make a line read backwards) escaped.
var linkFuncs = template.FuncMap{"visible": termtext.Escape}

// linkPage is the page of an answer link, parsed at first use rather than
// when the program starts.
var linkPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("link").Funcs(linkFuncs).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolgate — {{.Title}}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:1.5rem;background:#f6f5f2;color:#1d1d1b}
main{max-width:34rem;margin:auto;background:#fff;border-radius:12px;padding:1.25rem;box-shadow:0 1px 3px #0002}
code{display:block;background:#efeee9;padding:.6rem;border-radius:6px;white-space:pre-wrap;word-break:break-all}
.risk{font-weight:600;text-transform:uppercase;font-size:.8rem}
.destructive{color:#b42318}
button{font-size:1.1rem;padding:.8rem 1.4rem;border-radius:8px;border:0;color:#fff;background:#1f7a4d;width:100%;margin-top:1rem}
button.deny{background:#b42318}
input{font-size:1rem;padding:.6rem;width:100%;box-sizing:border-box;margin-top:.3rem}
@media (prefers-color-scheme: dark){body{background:#161615;color:#eee}main{background:#222220}code{background:#2d2d2a}}
</style></head><body><main>
<h1>{{.Title}}</h1>
{{if .Note}}<p>{{.Note}}</p>{{end}}
{{with .Approval}}
<p><span class="risk {{.Request.Risk}}">{{visible .Request.Risk}}</span> · session {{visible .Session}} · {{visible .Request.Tool}}</p>
{{if .Request.Units}}{{range .Request.Units}}<code>{{visible .Label}}</code>
{{range .Deletes}}<p class="destructive">deletes {{visible .}}</p>{{end}}{{range .Writes}}<p>writes {{visible .}}</p>{{end}}{{range .Hosts}}<p>contacts {{visible .}}</p>{{end}}
{{end}}{{else}}<code>{{visible .Request.Summary}}</code>{{end}}
<p>{{visible .Request.Message}}</p>
{{end}}
{{if .Form}}
<form method="post">
{{if .Confirm}}<label>This cannot be undone. Type <b>{{visible .Confirm}}</b> to allow it once:
<input name="confirm" autocomplete="off" autocapitalize="off" spellcheck="false" required></label>{{end}}
{{if eq .Action "deny"}}<label>Message for the model (optional)<input name="message" maxlength="500"></label>
<button class="deny" type="submit">Deny</button>{{else}}<button type="submit">Allow once</button>{{end}}
</form>
<p><small>The link works once, until {{.Deadline}}.</small></p>
{{end}}
</main></body></html>
`))
})

type linkView struct {
	Title, Note, Action, Confirm, Deadline string
	Approval                               *Approval
	Form                                   bool
}

func (s *Server) writeLinkPage(w http.ResponseWriter, code int, v linkView) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.WriteHeader(code)
	_ = linkPage().Execute(w, v)
}

// linkClaim checks the token of r and finds its approval; on failure it
// writes the page that says why and returns false.
func (s *Server) linkClaim(w http.ResponseWriter, r *http.Request) (notify.Claim, Approval, bool) {
	if s.opts.Notifier == nil {
		s.writeLinkPage(w, http.StatusNotFound, linkView{Title: "No answer links", Note: "This server sends no notifications."})
		return notify.Claim{}, Approval{}, false
	}
	c, err := s.opts.Notifier.Links().Check(r.PathValue("token"))
	if err != nil {
		code := http.StatusForbidden
		if errors.Is(err, notify.ErrExpired) || errors.Is(err, notify.ErrUsed) {
			code = http.StatusGone
		}
		s.writeLinkPage(w, code, linkView{Title: "Nothing was changed", Note: notify.Describe(err)})
		return c, Approval{}, false
	}
	a, err := s.broker.Get(r.Context(), c.Approval)
	if err != nil {
		s.writeLinkPage(w, http.StatusNotFound, linkView{Title: "Nothing was changed", Note: "This approval is no longer known to the server."})
		return c, Approval{}, false
	}
	if a.State != StatePending {
		note := "It was already decided"
		if a.Decision != nil {
			note += ": " + a.Decision.Decision + " (" + a.Decision.Reason + ")"
		}
		s.writeLinkPage(w, http.StatusConflict, linkView{Title: "Nothing was changed", Note: note + ".", Approval: &a})
		return c, Approval{}, false
	}
	return c, a, true
}

func (s *Server) linkView(c notify.Claim, a Approval) linkView {
	v := linkView{Action: string(c.Action), Approval: &a, Form: true, Deadline: a.Deadline.Local().Format(time.Kitchen)}
	if c.Action == notify.ActionDeny {
		v.Title = "Deny this call?"
	} else {
		v.Title = "Allow this call once?"
		if a.Request.Destructive {
			v.Confirm = a.Request.ConfirmWord()
		}
	}
	return v
}

// handleLinkPage shows what an answer link would do; it changes nothing.
func (s *Server) handleLinkPage(w http.ResponseWriter, r *http.Request) {
	c, a, ok := s.linkClaim(w, r)
	if !ok {
		return
	}
	s.writeLinkPage(w, http.StatusOK, s.linkView(c, a))
}

// handleLinkAnswer answers the approval as the link says. The link is
// spent only when the answer is taken, so a mistyped confirmation can be
// tried again; the first answer wins, by any means.
func (s *Server) handleLinkAnswer(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" {
		if u, err := url.Parse(o); err != nil || u.Host != r.Host {
			s.writeLinkPage(w, http.StatusForbidden, linkView{Title: "Nothing was changed", Note: "The answer did not come from this server's page."})
			return
		}
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		s.writeLinkPage(w, http.StatusBadRequest, linkView{Title: "Nothing was changed", Note: "The form could not be read."})
		return
	}
	c, a, ok := s.linkClaim(w, r)
	if !ok {
		return
	}
	reply := Reply{Answer: approval.AllowOnce, Confirm: r.PostForm.Get("confirm"), Via: "link"}
	if c.Action == notify.ActionDeny {
		reply = Reply{Answer: approval.Deny, Message: clip(r.PostForm.Get("message"), 500), Via: "link"}
	}
	if _, err := s.broker.Answer(a.ID, reply); err != nil {
		v := s.linkView(c, a)
		code := http.StatusBadRequest
		if errors.Is(err, ErrResolved) || errors.Is(err, ErrNotFound) {
			v.Form, code = false, http.StatusConflict
		}
		v.Note = err.Error()
		s.writeLinkPage(w, code, v)
		return
	}
	_, _ = s.opts.Notifier.Links().Use(r.PathValue("token"))
	// Show the gate's final decision, which may differ from the answer
	// (the call changed, the log could not be written).
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	final, err := s.broker.Wait(ctx, a.ID)
	title, note := "Answered", "The agent will be told."
	if err == nil && final.Decision != nil {
		switch {
		case final.Decision.Decision == "allow":
			title, note = "Allowed once", "The agent has been told."
		case c.Action == notify.ActionDeny:
			title, note = "Denied", "The agent has been told."
		default:
			title, note = "Denied", "The call was denied after all: "+final.Decision.Message
		}
		a = final
	}
	s.writeLinkPage(w, http.StatusOK, linkView{Title: title, Note: note, Approval: &a})
}
