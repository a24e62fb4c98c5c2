package pathres

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Cache keeps real paths and directory entries across decisions in a
// long-running process, and forgets them as soon as anything they depend
// on may have changed. Every change completed before a decision began its
// [View] is seen by that view: a link swapped for another or for a
// directory, a directory renamed or moved (itself or any ancestor), a
// .toolgate/ directory created or removed, a permission changed, a file
// system mounted or unmounted.
//
// How: a kept answer depends on the names the kernel looks up while
// walking a path — in each real directory along the way, one name (the
// next component, or a link's target). The Cache holds an inotify watch
// on each such directory and remembers which names were looked up there.
// Begin reads, before the view uses anything kept, every event queued
// since the last read, with a poll of the inotify descriptor and of
// /proc/self/mountinfo together (one system call when nothing changed).
// The kernel queues an inotify event inside the system call that makes
// the change, before that call returns, so a change completed before
// Begin is in the queue when Begin reads it. An event that names a name
// looked up in a watched directory drops every answer whose walk looked
// that name up there (and every directory known through it); an event on
// a watched directory itself (its permissions, its removal or rename) or
// its removed watch drops every answer that looked anything up in it;
// and each of these starts a new generation, so that no answer being
// filled meanwhile is stored. A queue overflow, or a change of this
// process's mount table (which inotify does not report but the poll of
// mountinfo does), drops everything.
//
// Why nothing is missed:
//   - No time stamps are compared, so their granularity (a second on
//     some file systems, a clock tick on others) does not matter: two
//     changes in one tick are two events.
//   - No inode numbers are compared either. A watch is on the inode
//     object, not its number, and the name that led to it is watched in
//     its parent: a link replaced by a directory that happens to reuse
//     the link's inode number is a delete and a create (or a move onto
//     the name) in the parent, which is watched.
//   - A rename of any ancestor is a move event in the ancestor's parent
//     (watched, as every directory on the walk from / is) and a move of
//     the ancestor itself.
//   - Bind mounts: a watch is on the inode, so a change made through any
//     other mount of the same file system is reported; a mount or unmount
//     anywhere in the namespace is seen by the mountinfo poll.
//   - Case-insensitive lookups (XFS's ascii-ci; ext4, f2fs and tmpfs
//     directories flagged casefolded, which an empty directory can become
//     at any time): names are matched without regard to ASCII case, and
//     in a directory where a name beyond ASCII was looked up, or for an
//     event naming one, any event drops. Two ASCII names fold alike only
//     by ASCII case, so no other name can change a lookup unnoticed.
//   - Entries are kept only when every directory involved is on a local
//     file system that reports every change (ext4, xfs, btrfs, f2fs,
//     tmpfs, overlayfs). A network or FUSE file system, /proc or /sys,
//     where changes happen without an event, is resolved afresh every
//     time. (overlayfs reports changes made through it; its layers must
//     not be changed from outside, or the overlay itself is undefined.)
//   - An answer is kept only when it is proven to be current once the
//     watches are in place: the path is walked, its directories watched
//     from / downwards with the names looked up in each registered before
//     the next watch is added, the path walked again (the same lookups
//     must give the same answer as the kernel's resolution did), and the
//     answer is stored only if no event that drops was read in between
//     (a dropping event makes a new generation, and the answer belongs
//     to the old one). A change before a name was registered is in the
//     second walk; a change after is such an event, read either before
//     the answer is stored (which then is not) or by the next Begin
//     (which drops it).
//
// If a watch cannot be added, the path is not kept; if the queue cannot
// be read, the Cache stops keeping anything. It is safe for use by
// multiple goroutines.
type Cache struct {
	mu     sync.Mutex
	ino    int // the inotify descriptor
	mounts int // /proc/self/mountinfo, polled for mount changes
	off    bool
	gen    uint64
	reals  map[string]realResult
	ents   map[lookup]Entry
	// names are, per watch, the names (ASCII letters folded) whose
	// lookup a kept answer depends on; wild marks a watch with a name
	// beyond ASCII among them.
	names map[int32]map[string]bool
	wild  map[int32]bool
	// named counts the names registered since the last drop: a fill
	// registers its names before it knows whether its answer will be
	// kept, so they are bounded on their own.
	named int
	// dirs are the real directories whose every lookup from / is
	// watched, with their watch.
	dirs map[string]int32
	// byName and byWatch say which kept answers depend on a name looked
	// up in a watched directory, and on anything in it; an event drops
	// those answers only. Keys of answers dropped since may linger in
	// them, and then only drop more.
	byName  map[watchedName][]keptKey
	byWatch map[int32][]keptKey
	indexed int
	// watches are the watches added, each once its directory was found
	// on a file system of localFS (which never changes for a watched
	// inode): a watch added again is not checked again.
	watches map[int32]bool
	buf     []byte
}

// Bounds on what a Cache holds: past them it starts over.
const (
	maxKept    = 1 << 14
	maxWatches = 1 << 12
	maxNamed   = 16 * maxKept
)

// watchMask is what changes a directory's lookups: a name appearing,
// disappearing or being moved, and the directory's own attributes,
// removal or move.
const watchMask = unix.IN_ATTRIB | unix.IN_CREATE | unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// localFS are the file systems whose every change inotify reports.
var localFS = map[int64]bool{
	unix.EXT4_SUPER_MAGIC: true, unix.XFS_SUPER_MAGIC: true, unix.BTRFS_SUPER_MAGIC: true,
	unix.F2FS_SUPER_MAGIC: true, unix.TMPFS_MAGIC: true, unix.OVERLAYFS_SUPER_MAGIC: true,
}

var shared struct {
	once sync.Once
	c    *Cache
}

// Shared returns the process's Cache, made on first use; nil when the
// system offers none (no inotify, no /proc), and a nil Cache keeps
// nothing.
func Shared() *Cache {
	shared.once.Do(func() {
		shared.c, _ = NewCache()
	})
	return shared.c
}

// NewCache returns a Cache. It fails when inotify or /proc/self/mountinfo
// is unavailable.
func NewCache() (*Cache, error) {
	ino, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	mounts, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(ino)
		return nil, err
	}
	c := &Cache{ino: ino, mounts: mounts, buf: make([]byte, 64<<10)}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop()
	c.sync()
	return c, nil
}

// Close releases the Cache's descriptors; it keeps nothing afterwards.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stop()
	return nil
}

// stop makes the Cache keep nothing from now on.
func (c *Cache) stop() {
	if c.off {
		return
	}
	c.off = true
	unix.Close(c.ino)
	unix.Close(c.mounts)
	c.drop()
}

// drop forgets everything kept and starts a new generation.
func (c *Cache) drop() {
	c.gen++
	c.byName = map[watchedName][]keptKey{}
	c.byWatch = map[int32][]keptKey{}
	c.indexed = 0
	c.reals = map[string]realResult{}
	c.ents = map[lookup]Entry{}
	c.names = map[int32]map[string]bool{}
	c.wild = map[int32]bool{}
	c.named = 0
	c.dirs = map[string]int32{}
	if c.watches == nil {
		c.watches = map[int32]bool{}
	}
}

// begin reads every change queued so far; false when the Cache keeps
// nothing.
func (c *Cache) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sync()
	return !c.off
}

// sync reads what changed since it last ran, dropping what it affects.
// c.mu is held.
func (c *Cache) sync() {
	if c.off {
		return
	}
	fds := [2]unix.PollFd{{Fd: int32(c.ino), Events: unix.POLLIN}, {Fd: int32(c.mounts), Events: unix.POLLPRI}}
	var zero unix.Timespec
	for {
		_, err := unix.Ppoll(fds[:], &zero, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			c.stop()
			return
		}
		break
	}
	if fds[0].Revents&^unix.POLLIN != 0 || fds[1].Revents&unix.POLLNVAL != 0 {
		c.stop()
		return
	}
	if fds[1].Revents != 0 {
		c.drop()
	}
	if fds[0].Revents == 0 {
		return
	}
	for {
		n, err := unix.Read(c.ino, c.buf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return
		}
		if err != nil || n <= 0 {
			c.stop()
			return
		}
		if err := eachEvent(c.buf[:n], c.event); err != nil {
			c.stop()
			return
		}
	}
}

// event takes in one inotify event.
func (c *Cache) event(wd int32, mask uint32, name []byte) {
	switch {
	case mask&unix.IN_Q_OVERFLOW != 0:
		c.drop()
	case mask&unix.IN_IGNORED != 0:
		delete(c.watches, wd)
		if c.names[wd] != nil {
			c.gen++
			c.forgetWatch(wd)
		}
	case c.names[wd] == nil:
	case len(name) == 0 || c.wild[wd] || !isASCII(string(name)):
		c.gen++
		c.forgetWatch(wd)
	case c.names[wd][foldASCII(string(name))]:
		c.gen++
		n := watchedName{wd, foldASCII(string(name))}
		c.forget(c.byName[n])
		c.indexed -= len(c.byName[n])
		delete(c.byName, n)
	}
}

// forgetWatch drops every answer that looked anything up in the
// directory of wd.
func (c *Cache) forgetWatch(wd int32) {
	c.forget(c.byWatch[wd])
	c.indexed -= len(c.byWatch[wd])
	delete(c.byWatch, wd)
}

// keptKey names one kept answer: a real path, an entry or a known
// directory.
type keptKey struct {
	kind      uint8
	dir, name string
}

const (
	keptReal uint8 = iota
	keptEntry
	keptDir
)

// ancestorsIn reports whether every directory above dir is in wds.
func ancestorsIn(dir string, wds map[string]int32) bool {
	for x := dir; x != "/"; x = filepath.Dir(x) {
		if _, ok := wds[filepath.Dir(x)]; !ok {
			return false
		}
	}
	return true
}

// watchedName is a name (ASCII letters folded) in a watched directory.
type watchedName struct {
	wd   int32
	name string
}

// forget drops the answers of keys. Every answer in progress is lost as
// well, as the caller has begun a new generation.
func (c *Cache) forget(keys []keptKey) {
	for _, k := range keys {
		switch k.kind {
		case keptReal:
			delete(c.reals, k.dir)
		case keptEntry:
			delete(c.ents, lookup{k.dir, k.name})
		case keptDir:
			delete(c.dirs, k.dir)
		}
	}
}

// index records that the answer k depends on the lookups deps, made in
// the directories of wds. c.mu is held.
func (c *Cache) index(k keptKey, deps []lookup, wds map[string]int32) {
	for _, d := range deps {
		wd := wds[d.dir]
		n := watchedName{wd, foldASCII(d.name)}
		c.byName[n] = append(c.byName[n], k)
		c.byWatch[wd] = append(c.byWatch[wd], k)
		c.indexed += 2
	}
}

// isASCII reports whether name is all ASCII.
func isASCII(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return false
		}
	}
	return true
}

// foldASCII lower-cases the ASCII letters of name: names are matched
// without regard to ASCII case, so that in a directory that looks names
// up that way (XFS's ascii-ci, a casefolded directory of ext4, f2fs or
// tmpfs) a name created in another case is still a change of the name
// looked up. Elsewhere it only drops more.
func foldASCII(name string) string {
	for i := 0; i < len(name); i++ {
		if 'A' <= name[i] && name[i] <= 'Z' {
			return strings.Map(func(r rune) rune {
				if 'A' <= r && r <= 'Z' {
					return r + 'a' - 'A'
				}
				return r
			}, name)
		}
	}
	return name
}

// real returns the kept real path of abs.
func (c *Cache) real(abs string) (string, bool, bool) {
	if c == nil {
		return "", false, false
	}
	c.mu.Lock()
	r, ok := c.reals[abs]
	c.mu.Unlock()
	return r.real, r.exists, ok
}

// entry returns the kept entry at a name in a directory.
func (c *Cache) entry(at lookup) (Entry, bool) {
	if c == nil {
		return Absent, false
	}
	c.mu.Lock()
	e, ok := c.ents[at]
	c.mu.Unlock()
	return e, ok
}

// fillReal keeps real as abs's real path, which the package's realPath
// has just given, if it can be proven current (see [Cache]).
func (c *Cache) fillReal(abs, real string, exists bool) {
	if c == nil {
		return
	}
	r, ex, _, deps, ok := walk(abs, c.known)
	if !ok || r != real || ex != exists {
		return
	}
	gen, wds, ok := c.watch(deps)
	if !ok {
		return
	}
	r, ex, _, again, ok := walk(abs, c.known)
	if !ok || r != real || ex != exists || !slices.Equal(deps, again) {
		return
	}
	c.keep(gen, wds, keptKey{keptReal, abs, ""}, deps, func() { c.reals[abs] = realResult{real, exists} })
}

// fillEntry looks at a name in a real directory once its lookup is
// watched, and keeps what it finds if that can be proven current. It
// reports false when the directory is not one a watch can be relied on
// for; the caller then looks itself.
func (c *Cache) fillEntry(at lookup) (Entry, bool) {
	if c == nil {
		return Absent, false
	}
	r, ex, isDir, deps, ok := walk(at.dir, c.known)
	if !ok || !ex || !isDir || r != at.dir {
		return Absent, false
	}
	deps = append(deps, at)
	gen, wds, ok := c.watch(deps)
	if !ok {
		return Absent, false
	}
	r, ex, isDir, again, ok := walk(at.dir, c.known)
	if !ok || !ex || !isDir || r != at.dir || !slices.Equal(deps[:len(deps)-1], again) {
		return Absent, false
	}
	e := lstatEntry(filepath.Join(at.dir, at.name))
	c.keep(gen, wds, keptKey{keptEntry, at.dir, at.name}, deps, func() { c.ents[at] = e })
	return e, true
}

// known reports whether dir is a real directory whose every lookup from /
// is watched in the current generation, so that a walk may go through it
// without looking: any change of those lookups drops it.
func (c *Cache) known(dir string) bool {
	c.mu.Lock()
	_, ok := c.dirs[dir]
	c.mu.Unlock()
	return ok
}

// watch watches the directories of deps, parents first, each with the
// names looked up in it registered before the next is watched, and
// returns the generation they were watched in and their watches. It
// reports false when a directory cannot be watched or is on a file
// system not known to report every change.
func (c *Cache) watch(deps []lookup) (uint64, map[string]int32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return 0, nil, false
	}
	if len(c.watches)+len(deps) > maxWatches {
		if !c.restart() {
			return 0, nil, false
		}
	}
	if c.named+len(deps) > maxNamed {
		c.drop()
	}
	gen := c.gen
	wds := map[string]int32{}
	for _, l := range deps {
		dir := l.dir
		if _, ok := wds[dir]; ok {
			continue
		}
		wd, ok := c.dirs[dir]
		if !ok {
			// Not known in this generation: watch whatever the path
			// leads to now; the second walk proves it is what the
			// first one went through.
			w, err := unix.InotifyAddWatch(c.ino, dir, watchMask)
			if err != nil {
				return 0, nil, false
			}
			wd = int32(w)
			if !c.watches[wd] {
				var st unix.Statfs_t
				if err := unix.Statfs(dir, &st); err != nil || !localFS[int64(st.Type)] {
					return 0, nil, false
				}
				c.watches[wd] = true
			}
		}
		wds[dir] = wd
		names := c.names[wd]
		if names == nil {
			names = map[string]bool{}
			c.names[wd] = names
		}
		// Every lookup in this directory, wherever the walk made it.
		for _, d := range deps {
			if d.dir != dir {
				continue
			}
			if f := foldASCII(d.name); !names[f] {
				names[f] = true
				c.named++
				if !isASCII(d.name) {
					c.wild[wd] = true
				}
			}
		}
	}
	return gen, wds, true
}

// restart starts over with a new inotify descriptor, so that the
// watches of directories no longer used are let go. c.mu is held.
func (c *Cache) restart() bool {
	ino, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		c.stop()
		return false
	}
	unix.Close(c.ino)
	c.ino = ino
	c.watches = map[int32]bool{}
	c.drop()
	return true
}

// keep stores what put stores, as the answer k that depends on deps,
// and records the directories of wds as known, if no event that drops
// was read since generation gen began. It need not read the queue
// itself: a change after the names were registered is either read
// already (and the generation is over) or still queued, and then drops
// what is stored here at the next Begin.
func (c *Cache) keep(gen uint64, wds map[string]int32, k keptKey, deps []lookup, put func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off || c.gen != gen {
		return
	}
	if len(c.reals)+len(c.ents)+len(c.dirs) >= maxKept || c.indexed >= 16*maxKept {
		c.drop()
		return
	}
	for dir, wd := range wds {
		if _, ok := c.dirs[dir]; ok || !ancestorsIn(dir, wds) {
			continue
		}
		// A known directory depends on the lookup of each of its
		// components in its parent, and on anything of its own.
		c.dirs[dir] = wd
		dk := keptKey{keptDir, dir, ""}
		c.byWatch[wd] = append(c.byWatch[wd], dk)
		c.indexed++
		for x := dir; x != "/"; x = filepath.Dir(x) {
			c.index(dk, []lookup{{filepath.Dir(x), filepath.Base(x)}}, wds)
		}
	}
	c.index(k, deps, wds)
	put()
}
