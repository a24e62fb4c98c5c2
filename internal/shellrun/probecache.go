package shellrun

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/internal/sandbox"
)

// ProbeCacheFile is the name of the file, in a state directory, that
// keeps the sandbox probes that found every mechanism.
const ProbeCacheFile = "sandbox-probe.json"

// ProbeCached is [Probe] for a short-lived process, such as a hook run
// once per tool call: a report that found Landlock and a mount namespace
// is kept in file (mode 0600), keyed by the boot, the kernel, the mode,
// the network setting, the disabled mechanisms and this binary, and read
// back instead of starting a confined process again. Only such reports
// are kept: a machine that lacks them is probed each time, so one that
// gains them is seen at once. A kept report that has gone stale (a
// kernel setting changed within the boot) cannot loosen a run: the hook's
// wrapper requires both mechanisms (toolgate sandbox --require), so
// without them the command does not run.
// file "" is Probe.
func ProbeCached(ctx context.Context, p sandbox.Policy, file string) (sandbox.Report, error) {
	key := probeKey(p)
	if file == "" || key == "" {
		return Probe(ctx, p)
	}
	kept := map[string]sandbox.Report{}
	if data, err := os.ReadFile(file); err == nil {
		_ = json.Unmarshal(data, &kept) // a damaged file is probed over
	}
	if rep, ok := kept[key]; ok && keepable(rep) {
		return rep, nil
	}
	rep, err := Probe(ctx, p)
	if err != nil || !keepable(rep) {
		return rep, err
	}
	fresh := map[string]sandbox.Report{key: rep}
	for k, v := range kept {
		if strings.HasPrefix(k, bootPrefix()) && len(fresh) < 16 {
			fresh[k] = v
		}
	}
	if data, err := json.Marshal(fresh); err == nil {
		_ = writeProbeCache(file, data) // the cache is only a shortcut
	}
	return rep, nil
}

// keepable reports whether a probe's report may be kept: it found the
// mechanisms that confine a program's files.
func keepable(rep sandbox.Report) bool { return rep.FS == "landlock" && rep.Mask == "mountns" }

// probeKey names what a probe's report depends on; "" when the boot or
// the binary cannot be told apart, so nothing is kept.
func probeKey(p sandbox.Policy) string {
	boot := bootPrefix()
	exe, err := os.Executable()
	if boot == "" || err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s%s|%t|%s|%s|%d|%d", boot, p.Mode, p.Network, os.Getenv(sandbox.DisableEnv), exe, fi.Size(), fi.ModTime().UnixNano())
}

// bootPrefix is the kernel's boot id and release, which a reboot or a new
// kernel changes.
func bootPrefix() string {
	id, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	rel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(id)) + "|" + strings.TrimSpace(string(rel)) + "|"
}

// writeProbeCache replaces file with data, by a rename, mode 0600.
func writeProbeCache(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".probe-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
