package approval

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY opens a pseudo-terminal and returns its two ends: what is
// written to ptm is typed on pts, and what is written to pts shows on ptm.
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptm.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlock pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptm.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("pseudo-terminal number: %v", e)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	return ptm, pts
}

// ptyTTY drives a Terminal whose input and output are a real terminal.
func ptyTTY(t *testing.T) *tty {
	ptm, pts := openPTY(t)
	scr := newScreen()
	go io.Copy(scr, ptm)
	term := &Terminal{In: pts, Out: pts}
	t.Cleanup(func() { term.Close() })
	return &tty{t: t, term: term, scr: scr, in: ptm}
}

func TestTerminalOnPTY(t *testing.T) {
	t.Run("colour", func(t *testing.T) {
		t.Setenv("NO_COLOR", "")
		os.Unsetenv("NO_COLOR")
		h := ptyTTY(t)
		ch := h.ask(context.Background(), npmTest())
		h.expect("\x1b[1m[a/s/p/u/e/d] > \x1b[0m")
		h.send("a")
		if r := await(t, ch); r.err != nil || r.a.Kind != AllowOnce {
			t.Fatalf("got %+v, %v", r.a, r.err)
		}
	})
	t.Run("NO_COLOR", func(t *testing.T) {
		t.Setenv("NO_COLOR", "")
		h := ptyTTY(t)
		ch := h.ask(context.Background(), npmTest())
		h.expect("> ")
		h.send("a")
		if r := await(t, ch); r.err != nil || r.a.Kind != AllowOnce {
			t.Fatalf("got %+v, %v", r.a, r.err)
		}
		if s := h.scr.String(); strings.Contains(s, "\x1b") {
			t.Fatalf("colour with NO_COLOR set:\n%q", s)
		}
	})
	t.Run("type-ahead is not an answer", func(t *testing.T) {
		h := ptyTTY(t)
		// Typed before the question; the echo shows the terminal has it.
		h.send("a")
		h.expect("a\r\n")
		ch := h.ask(context.Background(), npmTest())
		h.expect("> ")
		h.send("d")
		h.expect("Message for the model")
		h.send("typed after")
		if r := await(t, ch); r.err != nil || r.a != (Answer{Kind: Deny, Message: "typed after", Via: ViaTerminal}) {
			t.Fatalf("got %+v, %v", r.a, r.err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		h := ptyTTY(t)
		ctx, cancel := context.WithCancel(context.Background())
		ch := h.ask(ctx, npmTest())
		h.expect("> ")
		cancel()
		if r := await(t, ch); r.err != context.Canceled {
			t.Fatalf("got %+v, %v", r.a, r.err)
		}
		ch = h.ask(context.Background(), npmTest())
		h.expect("> ")
		h.send("s")
		if r := await(t, ch); r.err != nil || r.a.Kind != AllowSession {
			t.Fatalf("got %+v, %v", r.a, r.err)
		}
	})
}
