package stage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The stage is the binary re-executed through /proc/self/exe with Arg0 as
// its argv[0] and its configuration in Env; the status pipe is StatusFD.
const (
	Arg0     = "toolgate-sandbox-stage"
	Env      = "TOOLGATE_SANDBOX_STAGE"
	StatusFD = 3
)

// Config is what the parent tells the stage.
type Config struct {
	Argv        []string `json:"argv"`
	Network     bool     `json:"network"`
	Writable    []string `json:"writable"`
	Landlock    bool     `json:"landlock"`
	LandlockNet bool     `json:"landlock_net"`
	Seccomp     bool     `json:"seccomp"`
	MountNS     bool     `json:"mountns"`
	NetNS       bool     `json:"netns"`
	Scratch     string   `json:"scratch"` // a directory the stage may mount a tmpfs on
	MaskFiles   []string `json:"mask_files"`
	MaskDirs    []string `json:"mask_dirs"`
}

// Status is what the stage writes to the parent, as JSON on StatusFD,
// before it execs the program, or instead of it when it fails.
type Status struct {
	Missing []string `json:"missing,omitempty"`
	Error   string   `json:"error,omitempty"`
	Code    int      `json:"code,omitempty"`
}

func init() {
	if len(os.Args) > 0 && os.Args[0] == Arg0 {
		if cfg, ok := os.LookupEnv(Env); ok {
			runStage(cfg)
		}
	}
}

// runStage never returns: it execs the program or exits with 126 (the
// sandbox could not be set up) or 127 (the program was not found).
func runStage(raw string) {
	runtime.LockOSThread() // never unlocked: the exec happens from this thread
	status := os.NewFile(StatusFD, "status")
	unix.CloseOnExec(StatusFD)
	fail := func(code int, format string, args ...any) {
		_ = json.NewEncoder(status).Encode(Status{Error: fmt.Sprintf(format, args...), Code: code})
		os.Exit(code)
	}
	var cfg Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil || len(cfg.Argv) == 0 {
		fail(126, "sandbox stage: bad configuration: %v", err)
	}
	if err := os.Unsetenv(Env); err != nil {
		fail(126, "sandbox stage: %v", err)
	}
	var missing []string
	if cfg.MountNS {
		if err := maskCredentials(cfg); err != nil {
			fail(126, "sandbox: masking credential paths: %v", err)
		}
	}
	if cfg.NetNS {
		if err := loopbackUp(); err != nil {
			fail(126, "sandbox: bringing up loopback in the network namespace: %v", err)
		}
	}
	if err := dropPrivileges(); err != nil {
		fail(126, "sandbox: dropping capabilities: %v", err)
	}
	path, err := exec.LookPath(cfg.Argv[0])
	if err != nil {
		fail(127, "sandbox: %v", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail(126, "sandbox: setting no_new_privs: %v", err)
	}
	if cfg.Landlock {
		if err := restrictLandlock(cfg); err != nil {
			fail(126, "sandbox: Landlock: %v", err)
		}
	}
	if cfg.Seccomp {
		if err := loadSeccomp(cfg.Network); err != nil {
			if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
				// The kernel refuses seccomp filters: a missing mechanism,
				// not a broken one.
				missing = append(missing, fmt.Sprintf("seccomp: the kernel refused the filter (%v), so ptrace, mount, new user namespaces, kernel modules, bpf and keyctl are not blocked", err))
			} else {
				fail(126, "sandbox: seccomp: %v", err)
			}
		}
	}
	if err := json.NewEncoder(status).Encode(Status{Missing: missing}); err != nil {
		fail(126, "sandbox stage: reporting: %v", err)
	}
	err = syscall.Exec(path, cfg.Argv, os.Environ())
	code := 126
	if errors.Is(err, unix.ENOENT) {
		code = 127
	}
	fail(code, "sandbox: exec %s: %v", path, err)
}

// maskCredentials covers each credential file with an empty read-only file
// and each credential directory with an empty read-only directory. Both
// come from a tmpfs mounted on the scratch directory inside this mount
// namespace only, remounted read-only before anything is bound from it.
func maskCredentials(cfg Config) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private: %w", err)
	}
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("tmpfs", cfg.Scratch, "tmpfs", flags, "size=16k,mode=0755"); err != nil {
		return fmt.Errorf("mounting tmpfs on %s: %w", cfg.Scratch, err)
	}
	emptyFile, emptyDir := filepath.Join(cfg.Scratch, "file"), filepath.Join(cfg.Scratch, "dir")
	if err := os.WriteFile(emptyFile, nil, 0o444); err != nil {
		return err
	}
	if err := os.Mkdir(emptyDir, 0o555); err != nil {
		return err
	}
	if err := unix.Mount("", cfg.Scratch, "", unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); err != nil {
		return fmt.Errorf("remounting %s read-only: %w", cfg.Scratch, err)
	}
	for _, m := range []struct {
		src   string
		paths []string
	}{{emptyFile, cfg.MaskFiles}, {emptyDir, cfg.MaskDirs}} {
		for _, p := range m.paths {
			if err := unix.Mount(m.src, p, "", unix.MS_BIND, ""); err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue // removed since the parent looked: nothing to read
				}
				return fmt.Errorf("covering %s: %w", p, err)
			}
		}
	}
	return nil
}

// loopbackUp brings up lo, the only interface of a new network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// keptCaps are what a root program keeps of its bounding set: what a root
// build needs in its own files (owner, mode, DAC override within what
// Landlock allows, set-id programs of its own), low ports, locked memory
// and nice. Every other capability is dropped, those the kernel adds
// later too: with them, root could read raw devices and kernel memory,
// rearrange mounts and namespaces, give a workspace binary file
// capabilities that a later run outside the sandbox would get
// (CAP_SETFCAP), open files by handle past the masks, or signal other
// users' processes.
var keptCaps = map[uintptr]bool{
	unix.CAP_CHOWN: true, unix.CAP_DAC_OVERRIDE: true, unix.CAP_FOWNER: true, unix.CAP_FSETID: true,
	unix.CAP_SETGID: true, unix.CAP_SETUID: true, unix.CAP_NET_BIND_SERVICE: true, unix.CAP_IPC_LOCK: true,
	unix.CAP_SYS_NICE: true,
}

// dropPrivileges clears the ambient capabilities the parent gave the stage
// for its mounts; a root program also loses every capability but keptCaps
// from its bounding set. A program that is not root keeps no capability
// across exec.
func dropPrivileges() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	if os.Geteuid() != 0 {
		// Nothing is kept across exec by a program that is not root; the
		// inheritable set is cleared too, so that it shows nothing.
		var data [2]unix.CapUserData
		return unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &data[0])
	}
	// PR_CAPBSET_READ fails with EINVAL past the kernel's last capability.
	for c := uintptr(0); ; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, c, 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			if c == 0 {
				return errors.New("the kernel reports no capability bounding set")
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("capability %d: %w", c, err)
		}
		if in == 0 || keptCaps[c] {
			continue // kept, or already gone as in a sandbox within a sandbox
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0); err != nil {
			return fmt.Errorf("capability %d: %w", c, err)
		}
	}
}

// quietDevices may be read and written by every program; terminals are
// added when standard input, output or error is one.
var (
	rwDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}
	roDevices = []string{"/dev/random", "/dev/urandom"}
)

// restrictLandlock confines this thread: reads everywhere but /dev, where
// only the devices above; writes only to cfg.Writable and the devices.
func restrictLandlock(cfg Config) error {
	c := landlock.V11.BestEffort()
	if cfg.Network || !cfg.LandlockNet {
		c.HandledAccessNet = 0
	}
	c.Scoped = llsys.ScopeSignal
	if !cfg.Network {
		c.Scoped |= llsys.ScopeAbstractUnixSocket
	}
	var rules []landlock.Rule
	ents, err := os.ReadDir("/")
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := "/" + e.Name()
		if p == "/dev" {
			continue
		}
		st, err := os.Stat(p)
		switch {
		case err != nil:
			continue // a dangling link at the root: nothing to read
		case st.IsDir():
			r := landlock.RODirs(p)
			if cfg.Network {
				r = r.WithResolveUnix()
			}
			rules = append(rules, r)
		default:
			rules = append(rules, landlock.ROFiles(p))
		}
	}
	rw := append([]string(nil), rwDevices...)
	for fd := 0; fd <= 2; fd++ {
		if t, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); err == nil &&
			(strings.HasPrefix(t, "/dev/pts/") || strings.HasPrefix(t, "/dev/tty")) {
			rw = append(rw, t)
		}
	}
	rules = append(rules,
		// Listing directories, / and /dev among them, shows names only.
		landlock.PathAccess(llsys.AccessFSReadDir, "/"),
		landlock.RWFiles(rw...).WithIoctlDev().IgnoreIfMissing(),
		landlock.ROFiles(roDevices...).IgnoreIfMissing(),
		landlock.RWDirs(cfg.Writable...).WithRefer(),
	)
	fd, flags, err := c.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return nil
	}
	defer unix.Close(fd)
	return llsys.LandlockRestrictSelf(fd, flags)
}
