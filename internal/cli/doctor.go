package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/hookinstall"
	"github.com/toolgate/toolgate/internal/sandbox"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/internal/shellrun"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/policy"
)

// Statuses of a doctor check.
const (
	statusOK   = "ok"
	statusWarn = "warn"
	statusFail = "fail"
)

// doctorCheck is the outcome of one check.
type doctorCheck struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
	// Fix says what to do about a warn or fail.
	Fix string `json:"fix,omitempty"`
}

// doctorGroups are the groups of checks, in the order they run.
var doctorGroups = []string{"sandbox", "hooks", "server", "policy", "state", "log"}

// logSizeWarn is the event log size above which doctor warns.
var logSizeWarn int64 = 1 << 30

type doctorEnv struct {
	ctx      context.Context
	c        *cobra.Command
	stateDir string
	db       string
	server   string
	root     string // the project root around the working directory
	self     string // this binary
	checks   []doctorCheck
}

func (d *doctorEnv) add(name, status, msg, fix string) {
	d.checks = append(d.checks, doctorCheck{Name: name, Status: status, Message: tildeText(msg), Fix: tildeText(fix)})
}

func doctorCmd() *cobra.Command {
	var asJSON bool
	var stateDir, db, srv string
	c := &cobra.Command{
		Use:   "doctor [sandbox|hooks|server|policy|state|log ...]",
		Short: "Check this machine's toolgate set-up and say how to fix what is wrong",
		Long: `doctor checks, and explains with a fix for each problem:

  sandbox  the kernel's sandbox support: Landlock and its ABI, user and mount
           namespaces (credential masking), the network's confinement, seccomp
  hooks    which agent clients have toolgate's hooks installed, and whether the
           binary those hooks run still exists
  server   whether a toolgate serve runs and accepts the agent token
           (--server, $TOOLGATE_SERVER, or the state directory's agent.token)
  policy   that the policy files of the project here parse and lint clean
  state    the state directory's owner and mode (0700) and its token files'
  log      the event log's integrity (its chains of hashes, with the approver
           token; gaps in each session's seq without it) and its size

Each check prints one line, ok, warn or fail, and a fix line for a warn or
fail; --json prints them as JSON. Naming groups runs only those. doctor
changes nothing. It exits 1 when a check fails, 0 otherwise.`,
		Example: `  toolgate doctor
  toolgate doctor hooks server    # only these checks
  toolgate doctor --json`,
		ValidArgs: doctorGroups,
		Args:      cobra.OnlyValidArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if stateDir == "" {
				stateDir = server.DefaultStateDir()
			}
			if db == "" && stateDir != "" {
				db = filepath.Join(stateDir, "events.db")
			}
			d := &doctorEnv{ctx: c.Context(), c: c, stateDir: stateDir, db: db, server: srv}
			d.self, _ = os.Executable()
			if cwd, err := os.Getwd(); err == nil {
				d.root, _ = engine.FindRoot(cwd)
				if d.root == "" {
					d.root = cwd
				}
			}
			run := map[string]func(){
				"sandbox": d.checkSandbox, "hooks": d.checkHooks, "server": d.checkServer,
				"policy": d.checkPolicy, "state": d.checkState, "log": d.checkLog,
			}
			for _, g := range doctorGroups {
				if len(args) == 0 || slices.Contains(args, g) {
					run[g]()
				}
			}
			return d.report(c.OutOrStdout(), asJSON)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the checks as JSON")
	c.Flags().StringVar(&stateDir, "state-dir", "", "the state directory (default $XDG_STATE_HOME/toolgate or ~/.local/state/toolgate)")
	c.Flags().StringVar(&db, "db", "", "the event log: a SQLite file or a postgres:// URL (default: events.db in the state directory)")
	c.Flags().StringVar(&srv, "server", "", "the toolgate server to check (default $TOOLGATE_SERVER, else "+DefaultServer+")")
	return c
}

func (d *doctorEnv) report(w io.Writer, asJSON bool) error {
	count := map[string]int{}
	for _, ch := range d.checks {
		count[ch.Status]++
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Checks []doctorCheck  `json:"checks"`
			Counts map[string]int `json:"counts"`
		}{d.checks, map[string]int{statusOK: count[statusOK], statusWarn: count[statusWarn], statusFail: count[statusFail]}}); err != nil {
			return err
		}
	} else {
		width := 0
		for _, ch := range d.checks {
			width = max(width, len(ch.Name))
		}
		for _, ch := range d.checks {
			fmt.Fprintf(w, "%-4s  %-*s  %s\n", ch.Status, width, ch.Name, termtext.Escape(ch.Message))
			if ch.Fix != "" {
				fmt.Fprintf(w, "      %-*s  fix: %s\n", width, "", termtext.Escape(ch.Fix))
			}
		}
		fmt.Fprintf(w, "%d ok, %d warn, %d fail\n", count[statusOK], count[statusWarn], count[statusFail])
	}
	if n := count[statusFail]; n > 0 {
		if asJSON {
			return silentExit(1)
		}
		return &exitError{1, fmt.Errorf("%d check(s) failed", n)}
	}
	return nil
}

func (d *doctorEnv) checkSandbox() {
	ws := d.root
	if ws == "" {
		ws = os.TempDir()
	}
	var creds []string
	if d.stateDir != "" {
		creds = append(creds, d.stateDir)
	}
	rep, err := shellrun.Probe(d.ctx, sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws, CredentialPaths: creds})
	if err != nil {
		d.add("sandbox", statusFail, "the sandbox cannot be set up here: "+err.Error(),
			"toolgate sandbox and toolgate run cannot confine programs on this system; hooks hand commands back unconfined (run toolgate sandbox -- true to see the error)")
		return
	}
	switch {
	case rep.LandlockABI >= 4:
		d.add("sandbox.landlock", statusOK, fmt.Sprintf("Landlock ABI %d: writes outside the workspace and TCP connections are blocked", rep.LandlockABI), "")
	case rep.FS == "landlock":
		d.add("sandbox.landlock", statusOK, fmt.Sprintf("Landlock ABI %d: writes outside the workspace are blocked (no TCP rules before ABI 4)", rep.LandlockABI), "")
	default:
		d.add("sandbox.landlock", statusWarn, "no Landlock: writes outside the workspace are not blocked by the kernel, so hooks hand shell commands back unconfined and toolgate decides more strictly",
			"use a kernel of 5.13 or later with Landlock enabled: landlock must be in /sys/kernel/security/lsm (add it to the lsm= kernel parameter)")
	}
	if rep.Mask == "mountns" {
		msg := "mount namespaces: credential files are masked from confined programs"
		if os.Geteuid() != 0 {
			msg = "user and mount namespaces: credential files are masked from confined programs"
		}
		d.add("sandbox.namespaces", statusOK, msg, "")
	} else {
		d.add("sandbox.namespaces", statusWarn, "no user or mount namespaces: credential files stay readable to confined programs, and hooks hand shell commands back unconfined", usernsFix())
	}
	switch rep.Net {
	case "none":
		d.add("sandbox.network", statusWarn, "neither Landlock TCP rules (ABI 4) nor a network namespace: confined programs reach the network even when it is off",
			"a kernel with Landlock ABI 4 (6.7 or later), or user namespaces (see sandbox.namespaces)")
	default:
		d.add("sandbox.network", statusOK, "network off is enforced by "+rep.Net, "")
	}
	if rep.Seccomp == "on" {
		d.add("sandbox.seccomp", statusOK, "seccomp filters ptrace, mount, bpf and the sockets Landlock does not govern", "")
	} else {
		d.add("sandbox.seccomp", statusWarn, "seccomp is unavailable: ptrace, mount, bpf and UDP and AF_UNIX sockets are not filtered", "a kernel built with CONFIG_SECCOMP_FILTER; in a container, a seccomp profile that allows seccomp(2)")
	}
}

// usernsFix says how to allow unprivileged user namespaces, from the
// sysctls that forbid them.
func usernsFix() string {
	sysctl := func(name string) string {
		b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(name, ".", "/"))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	switch {
	case sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
		return "AppArmor forbids them: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile for toolgate that allows userns)"
	case sysctl("kernel.unprivileged_userns_clone") == "0":
		return "sudo sysctl -w kernel.unprivileged_userns_clone=1"
	case sysctl("user.max_user_namespaces") == "0":
		return "sudo sysctl -w user.max_user_namespaces=15000"
	}
	return "allow unprivileged user namespaces (in a container: a seccomp profile that allows unshare and clone with namespace flags)"
}

func (d *doctorEnv) checkHooks() {
	for _, ac := range findClients() {
		name := "hooks." + string(ac.client)
		o := ac.options(d.self)
		st, err := hookinstall.Installed(o)
		if err == nil && !st.Installed() && d.root != "" {
			// The project's settings may hold them instead.
			po := o
			po.Scope, po.ProjectDir = hookinstall.Project, d.root
			if pst, perr := hookinstall.Installed(po); perr == nil && pst.Installed() {
				st = pst
			}
		}
		switch {
		case err != nil:
			d.add(name, statusFail, fmt.Sprintf("%s's settings cannot be read, so neither it nor toolgate can rely on them: %v", ac.client, err),
				"correct the file at the line shown, then run: toolgate hook install "+string(ac.client))
		case st.Installed():
			if missing := missingPrograms(st); len(missing) > 0 {
				d.add(name, statusFail, fmt.Sprintf("the hooks in %s run %s, which is not there: %s", st.Path, strings.Join(missing, ", "), failureEffect(ac.client)),
					fmt.Sprintf("toolgate hook uninstall %s && toolgate hook install %s", ac.client, ac.client))
				break
			}
			msg := "installed in " + st.Path
			if ac.client == hookinstall.Codex {
				msg += " (Codex runs them once you trust them in Codex)"
			}
			d.add(name, statusOK, msg, "")
		case len(st.Commands) > 0 || ac.found():
			what := "toolgate's hooks are not installed"
			if len(st.Commands) > 0 {
				what = st.String()
			}
			d.add(name, statusWarn, fmt.Sprintf("%s found (%s), but %s: its tool calls are not gated", ac.client, ac.where(), what),
				"toolgate hook install "+string(ac.client))
		default:
			d.add(name, statusOK, fmt.Sprintf("%s not found (no %s on PATH, no %s); nothing to hook", ac.client, ac.program, tildePath(filepath.Dir(st.Path))), "")
		}
		d.checkProjectHooks(o)
	}
}

// checkProjectHooks warns of hooks the project's own settings for o's
// client define next to toolgate's ([hookinstall.OtherHooks]): a
// repository can ship them, and they can hand the client another input
// than the one toolgate allowed, or allow what it asked about.
func (d *doctorEnv) checkProjectHooks(o hookinstall.Options) {
	if d.root == "" {
		return
	}
	o.Scope, o.ProjectDir = hookinstall.Project, d.root
	name := "hooks." + string(o.Client) + ".project"
	others, err := hookinstall.OtherHooks(o)
	if err != nil {
		d.add(name, statusWarn, fmt.Sprintf("the project's %s settings cannot be read, so its hooks cannot be checked: %v", o.Client, err),
			"correct the file at the line shown")
		return
	}
	if len(others) == 0 {
		return
	}
	var list []string
	for _, h := range others {
		list = append(list, fmt.Sprintf("%s in %s: %q", h.Event, h.Path, h.Command))
	}
	d.add(name, statusWarn, fmt.Sprintf("the project defines hooks of its own that run next to toolgate's before each tool call (%s): %s takes a changed input or an allow from them too, so they can run another command than the one toolgate allowed and wrapped in its sandbox, or allow what toolgate asks you about",
		strings.Join(list, "; "), o.Client),
		"read them; remove them from the project's settings unless you trust what they do")
}

// failureEffect says what the client does when its hook cannot run.
func failureEffect(c hookinstall.Client) string {
	if c == hookinstall.ClaudeCode {
		return "Claude Code blocks every tool call"
	}
	return string(c) + " runs every tool call ungated when its hook fails"
}

// missingPrograms returns the programs of st's hook commands that cannot
// be run.
func missingPrograms(st *hookinstall.Status) []string {
	var out []string
	for _, cmds := range st.Commands {
		for _, cmd := range cmds {
			prog := hookProgram(cmd)
			if slices.Contains(out, prog) {
				continue
			}
			var err error
			if strings.Contains(prog, "/") {
				var fi os.FileInfo
				if fi, err = os.Stat(prog); err == nil && (fi.IsDir() || fi.Mode().Perm()&0o111 == 0) {
					err = errors.New("not executable")
				}
			} else {
				_, err = exec.LookPath(prog)
			}
			if err != nil {
				out = append(out, prog)
			}
		}
	}
	slices.Sort(out)
	return out
}

// hookProgram returns the program of a hook command as hook install
// writes it ([hookinstall.Program]), else the whole command.
func hookProgram(cmd string) string {
	if prog, ok := hookinstall.Program(cmd); ok {
		return prog
	}
	return cmd
}

func (d *doctorEnv) checkServer() {
	api, err := agentServer(d.server, d.stateDir, "", true)
	switch {
	case err != nil:
		fix := "start toolgate serve, or correct $TOOLGATE_SERVER and $TOOLGATE_TOKEN"
		tok := filepath.Join(d.stateDir, server.AgentTokenFile)
		if fi, serr := os.Stat(tok); d.stateDir != "" && serr == nil && fi.Mode().Perm()&0o077 != 0 {
			fix = "chmod 600 " + tok + ", or delete it and start toolgate serve for a fresh token"
		}
		d.add("server", statusFail, err.Error(), fix)
		return
	case api == nil:
		tok := filepath.Join(d.stateDir, server.AgentTokenFile)
		if _, err := os.Stat(tok); d.stateDir == "" || err != nil {
			d.add("server", statusWarn, "no toolgate serve has run here (no agent token at "+tok+"): calls that need a person are asked only of Claude Code, and denied for Gemini CLI and Codex",
				"toolgate serve")
			return
		}
		d.add("server", statusWarn, "no toolgate serve listens at "+DefaultServer+": calls that need a person are asked only of Claude Code, and denied for Gemini CLI and Codex",
			"toolgate serve (or set $TOOLGATE_SERVER to where it runs)")
		return
	}
	ctx, cancel := context.WithTimeout(d.ctx, 3*time.Second)
	defer cancel()
	api.http = &http.Client{Timeout: 3 * time.Second}
	var who struct {
		Role string `json:"role"`
	}
	if err := api.do(ctx, http.MethodGet, "/v1/whoami", nil, &who); err != nil {
		if unreachable := (*unreachableError)(nil); errors.As(err, &unreachable) {
			d.add("server", statusFail, fmt.Sprintf("cannot reach the toolgate server at %s: %v", api.base, err),
				"start toolgate serve, or name the server that runs with --server or $TOOLGATE_SERVER")
			return
		}
		d.add("server", statusFail, fmt.Sprintf("the toolgate server at %s does not accept the agent token: %v", api.base, err),
			"check that the server runs with --state-dir "+d.stateDir+", or set $TOOLGATE_TOKEN to its agent token")
		return
	}
	d.add("server", statusOK, fmt.Sprintf("toolgate serve at %s answers and accepts the agent token (role %s)", api.base, who.Role), "")
}

func (d *doctorEnv) checkPolicy() {
	pf := policyFlags{project: d.root}
	root, files, err := pf.projectFiles()
	if err != nil {
		d.add("policy", statusFail, err.Error(), "correct the file at the line shown, then check it again with: toolgate policy lint")
		return
	}
	var paths []string
	for _, f := range files {
		if f.Path != "" {
			paths = append(paths, f.Path)
		}
	}
	cli, err := pf.cliLayer(d.c)
	if err != nil {
		d.add("policy", statusFail, err.Error(), "")
		return
	}
	set, err := mergeForLint(append(files, cli))
	if err != nil {
		d.add("policy", statusFail, err.Error(), "correct the setting named, then check it again with: toolgate policy lint")
		return
	}
	findings := policy.Lint(set)
	if len(findings) == 0 {
		if len(paths) == 0 {
			d.add("policy", statusOK, "no policy files; the built-in defaults apply", "")
		} else {
			d.add("policy", statusOK, "lint clean: "+strings.Join(paths, ", "), "")
		}
		return
	}
	msg := findings[0].String()
	if len(findings) > 1 {
		msg = fmt.Sprintf("%d findings; the first: %s", len(findings), msg)
	}
	fix := "toolgate policy lint lists them with file and line"
	home, _ := os.UserHomeDir()
	if slices.ContainsFunc(files, func(f *policy.File) bool { return f.Untrusted() != "" }) && !policy.Trusted(files, root, home) {
		fix = fmt.Sprintf("if you trust this project, add trusted_projects = [%q] to %s; %s", tildePath(root), policy.DefaultLocations("").User, fix)
	}
	d.add("policy", statusWarn, msg, fix)
}

func (d *doctorEnv) checkState() {
	dir := d.stateDir
	if dir == "" {
		d.add("state", statusWarn, "no state directory: neither $XDG_STATE_HOME nor a home directory is set", "set HOME or XDG_STATE_HOME")
		return
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add("state", statusOK, dir+" does not exist yet; toolgate serve creates it with mode 0700", "")
		return
	case err != nil:
		d.add("state", statusFail, err.Error(), "")
		return
	case !fi.IsDir():
		d.add("state", statusFail, dir+" is not a directory", "move it away; toolgate serve creates the directory")
		return
	}
	var problems []string
	status, fix := statusOK, ""
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() {
		problems = append(problems, fmt.Sprintf("it is owned by uid %d, not by you (uid %d): its owner can read and replace the tokens", uid, os.Getuid()))
		status, fix = statusFail, fmt.Sprintf("sudo chown -R %d %s", os.Getuid(), dir)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		switch {
		case perm&0o022 != 0:
			problems = append(problems, fmt.Sprintf("it has mode %04o: other users could replace the tokens, and toolgate serve refuses to start", perm))
			status = statusFail
		case perm&0o700 != 0o700:
			problems = append(problems, fmt.Sprintf("it has mode %04o: you cannot use it fully", perm))
			status = statusFail
		default:
			problems = append(problems, fmt.Sprintf("it has mode %04o: other users can see what it holds", perm))
			if status == statusOK {
				status = statusWarn
			}
		}
		fix = strings.TrimPrefix(fix+" && chmod 700 "+dir, " && ")
	}
	for _, name := range []string{server.AgentTokenFile, server.ApproverTokenFile} {
		p := filepath.Join(dir, name)
		tfi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if perm := tfi.Mode().Perm(); perm&0o077 != 0 {
			problems = append(problems, fmt.Sprintf("%s has mode %04o: other users can read the token, and toolgate refuses it", name, perm))
			status = statusFail
			fix = strings.TrimPrefix(fix+" && chmod 600 "+p, " && ")
		}
	}
	if len(problems) == 0 {
		d.add("state", statusOK, dir+" is yours, mode 0700", "")
		return
	}
	d.add("state", status, dir+": "+strings.Join(problems, "; "), fix)
}

func (d *doctorEnv) checkLog() {
	db := d.db
	if db == "" {
		d.add("log", statusWarn, "no event log to check: no state directory", "give --db")
		return
	}
	size := int64(-1)
	if !isPostgres(db) {
		fi, err := os.Stat(db)
		if errors.Is(err, fs.ErrNotExist) {
			d.add("log", statusOK, db+" does not exist yet; toolgate serve and the hooks create it", "")
			return
		}
		if err != nil {
			d.add("log", statusFail, err.Error(), "")
			return
		}
		size = fi.Size()
		if wal, err := os.Stat(db + "-wal"); err == nil {
			size += wal.Size()
		}
	}
	store, err := openStore(d.ctx, db, true, nil)
	if err != nil {
		d.add("log", statusFail, "the event log cannot be opened: "+err.Error(), "if it is damaged, stop toolgate serve, move "+db+" away and keep it for inspection; a new log is started")
		return
	}
	defer store.Close()
	cr, ok := store.(eventlog.ChainReader)
	if !ok {
		d.add("log", statusWarn, fmt.Sprintf("the event log %s keeps no chain of hashes to check", db), "")
		return
	}
	var key []byte
	tok, tokErr := server.ReadTokenFile(filepath.Join(d.stateDir, server.ApproverTokenFile))
	if tokErr == nil {
		key = server.ChainKeyFor(tok)
	}
	label := db
	if size >= 0 {
		label = fmt.Sprintf("%s (%s)", db, byteSize(size))
	}
	var rep *eventlog.VerifyReport
	if key != nil {
		rep, err = eventlog.Verify(d.ctx, cr, key, "")
	} else {
		rep, err = seqGaps(d.ctx, cr)
	}
	if err != nil {
		d.add("log", statusFail, err.Error(), "")
		return
	}
	verify := fmt.Sprintf("toolgate audit --verify --db %s --state-dir %s", db, d.stateDir)
	if len(rep.Problems) > 0 {
		msg := fmt.Sprintf("%s: %d problem(s) in %d event(s); the first: %s", label, len(rep.Problems), rep.Events, rep.Problems[0])
		d.add("log", statusFail, msg, verify+" lists them: events were changed or deleted outside toolgate; keep the file for inspection and find out who can write it")
		return
	}
	msg := fmt.Sprintf("%s: %d event(s) in %d session(s) verified", label, rep.Events, rep.Sessions)
	status, fixes := statusOK, []string(nil)
	if key == nil {
		msg = fmt.Sprintf("%s: %d event(s) in %d session(s), no gap in any session's seq; the chains of hashes were not checked: %v", label, rep.Events, rep.Sessions, tokErr)
		status, fixes = statusWarn, append(fixes, "run doctor with the server's --state-dir, which holds approver.token")
	}
	if size > logSizeWarn {
		msg += fmt.Sprintf("; the file is larger than %s", byteSize(logSizeWarn))
		status, fixes = statusWarn, append(fixes, "stop toolgate serve and move "+db+" away to archive it (toolgate audit --db reads it there); a new log is started")
	}
	d.add("log", status, msg, strings.Join(fixes, "; "))
}

// seqGaps finds the gaps in each session's seq, the one check of a log's
// integrity that needs no chain key.
func seqGaps(ctx context.Context, cr eventlog.ChainReader) (*eventlog.VerifyReport, error) {
	rep := &eventlog.VerifyReport{}
	session, last := "", int64(0)
	for row, err := range cr.ChainRows(ctx, "") {
		if err != nil {
			return nil, fmt.Errorf("reading the event log: %w", err)
		}
		rep.Events++
		if row.Session != session || rep.Events == 1 {
			rep.Sessions++
			session, last = row.Session, 0
		}
		if row.Seq != last+1 {
			rep.Problems = append(rep.Problems, eventlog.Problem{Session: row.Session, ID: row.ID, Seq: row.Seq, Kind: eventlog.ProblemDeleted,
				Detail: fmt.Sprintf("seq %d follows seq %d", row.Seq, last)})
		}
		last = row.Seq
	}
	return rep, nil
}

// byteSize writes n bytes for a person.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// tildeText writes the home directory in s as ~.
func tildeText(s string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return s
	}
	return strings.ReplaceAll(s, home+string(filepath.Separator), "~"+string(filepath.Separator))
}
