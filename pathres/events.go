package pathres

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// eventHeader is the size of the fixed part of a Linux inotify event:
// wd, mask, cookie and the length of the name that follows.
const eventHeader = 16

// eachEvent calls fn for each inotify event record in buf, as read(2)
// returns them from an inotify descriptor: the watch, the event mask and
// the name (NUL padding removed; empty for an event on the watched
// directory itself). name is only valid during the call. A record that
// runs past the end of buf is an error, and nothing after it is read.
func eachEvent(buf []byte, fn func(wd int32, mask uint32, name []byte)) error {
	for off := 0; off < len(buf); {
		if len(buf)-off < eventHeader {
			return fmt.Errorf("inotify event at byte %d: %d bytes left, a header needs %d", off, len(buf)-off, eventHeader)
		}
		h := buf[off : off+eventHeader]
		wd := int32(binary.NativeEndian.Uint32(h[0:]))
		mask := binary.NativeEndian.Uint32(h[4:])
		n := binary.NativeEndian.Uint32(h[12:])
		if uint64(n) > uint64(len(buf)-off-eventHeader) {
			return fmt.Errorf("inotify event at byte %d: name of %d bytes, only %d left", off, n, len(buf)-off-eventHeader)
		}
		name := buf[off+eventHeader : off+eventHeader+int(n)]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		fn(wd, mask, name)
		off += eventHeader + int(n)
	}
	return nil
}
