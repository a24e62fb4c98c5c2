package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/engine"
)

// DefaultReceiptTTL is how long a receipt stays valid when
// Options.ReceiptTTL is zero.
const DefaultReceiptTTL = 5 * time.Minute

// contentHashLimit is the largest file whose content is hashed into its
// version; a larger file's version is its identity, size and change times.
const contentHashLimit = 64 << 10

// Resource is a path a call touches, as it was when the call was decided.
type Resource struct {
	// Path is the real path (symlinks followed).
	Path string `json:"path"`
	// Access is "read", "write" or "delete".
	Access string `json:"access"`
	// Version identifies the path's state: "absent", a content hash for a
	// small regular file, or the file's identity and change times.
	Version string `json:"version"`
}

// Receipt binds an allowed call to what was allowed: the tool, a hash of
// its normalized arguments, the real path of its working directory, the
// resources it touches with their versions, and an expiry. [Gate.Verify]
// checks it again just before the call runs; any difference fails closed.
type Receipt struct {
	ID         string     `json:"id"`
	ToolCallID string     `json:"toolCallId"`
	Tool       string     `json:"tool"`
	ArgsHash   string     `json:"argsHash"`
	Cwd        string     `json:"cwd"`
	Resources  []Resource `json:"resources,omitempty"`
	Expires    time.Time  `json:"expires"`
}

// argsHash is the SHA-256 of the call's normalized form: canonical tool,
// arguments (keys sorted), shell and real working directory.
func argsHash(c *engine.Call) string {
	b, err := json.Marshal(struct {
		Tool  string         `json:"t"`
		Input map[string]any `json:"i"`
		Shell string         `json:"s"`
		Cwd   string         `json:"c"`
	}{string(c.Tool), c.Request.Input, strings.ToLower(c.Request.Shell), c.Cwd})
	if err != nil {
		// Arguments that cannot be encoded match nothing but themselves.
		b = fmt.Appendf(nil, "unencodable:%p", c.Request)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// resources lists the paths the call's units touch, each once, with their
// current versions, sorted by path.
func resources(c *engine.Call) []Resource {
	seen := map[string]int{}
	var out []Resource
	add := func(p engine.PathFact, access string) {
		if p.Real == "" {
			return
		}
		if p.Delete {
			access = "delete"
		}
		if i, ok := seen[p.Real]; ok {
			if rank(access) > rank(out[i].Access) {
				out[i].Access = access
			}
			return
		}
		seen[p.Real] = len(out)
		out = append(out, Resource{Path: p.Real, Access: access, Version: version(p.Real)})
	}
	for _, u := range c.Units {
		for _, p := range u.Reads {
			add(p, "read")
		}
		for _, p := range u.Writes {
			add(p, "write")
		}
		for _, p := range u.Code {
			add(p, "read")
		}
	}
	slices.SortFunc(out, func(a, b Resource) int { return strings.Compare(a.Path, b.Path) })
	return out
}

func rank(access string) int {
	switch access {
	case "delete":
		return 2
	case "write":
		return 1
	}
	return 0
}

// version returns the state of the file at path without following a final
// symlink: "absent", "sha256:…" for a regular file up to contentHashLimit,
// or a stamp of its type, device, inode, size and modification and change
// times, which any write changes. A path whose state cannot be read gets a
// version of its own each time, equal to no other.
func version(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return "absent"
		}
		// A state that cannot be read cannot be vouched for: the version
		// matches no other, so nothing bound to it is ever reused.
		return "unreadable:" + randomHex()
	}
	stamp := fmt.Sprintf("%s:%d:%d", fi.Mode().Type(), fi.Size(), fi.ModTime().UnixNano())
	if id := fileIdentity(fi); id != "" {
		stamp += ":" + id
	}
	if !fi.Mode().IsRegular() || fi.Size() > contentHashLimit {
		return "stat:" + stamp
	}
	f, err := os.Open(path)
	if err != nil {
		return "stat:" + stamp
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, contentHashLimit+1)); err != nil {
		return "stat:" + stamp
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// changed returns the first resource of want that is not as it was (a
// different version, or missing from have), or nil.
func changed(want, have []Resource) *Resource {
	now := map[string]string{}
	for _, r := range have {
		now[r.Path] = r.Version
	}
	for i, r := range want {
		if v, ok := now[r.Path]; !ok || v != r.Version {
			return &want[i]
		}
	}
	return nil
}
