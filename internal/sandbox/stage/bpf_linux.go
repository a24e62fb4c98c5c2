//go:build amd64 || arm64

package stage

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Offsets into struct seccomp_data, which a seccomp filter reads:
//
//	int   nr;                  // 0
//	__u32 arch;                // 4
//	__u64 instruction_pointer; // 8
//	__u64 args[6];             // 16
//
// Classic BPF loads 32 bits at a time, so an argument is read in two
// halves. amd64 and arm64 are little-endian: the low half comes first.
const (
	offNr     = 0
	offArch   = 4
	offArgs   = 16
	sizeData  = offArgs + 6*8
	maxInsns  = 4096 // BPF_MAXINSNS: the kernel refuses longer programs
	maxOffset = 255  // a conditional jump's offsets are 8 bits
)

// argLow and argHigh are the offsets of the halves of argument i (0–5).
func argLow(i int) uint32  { return offArgs + 8*uint32(i) }
func argHigh(i int) uint32 { return offArgs + 8*uint32(i) + 4 }

// A label names an instruction that jumps go to. It is placed once, after
// every jump to it: classic BPF jumps only forward.
type label int

// next, as a jump target, is the instruction that follows the jump. It is
// the zero label: an instruction built without targets goes on.
const next label = 0

type insn struct {
	code   uint16
	jt, jf label // conditional jumps only
	k      uint32
}

// A program is a classic BPF program under construction whose jumps name
// labels; assemble resolves them to offsets.
type program struct {
	insns []insn
	at    []int // at[l-1] is the index label l was placed at, or -1
}

// label returns a new label, to be placed later.
func (p *program) label() label {
	p.at = append(p.at, -1)
	return label(len(p.at))
}

// place makes l name the next instruction appended.
func (p *program) place(l label) { p.at[l-1] = len(p.insns) }

// load loads the 32-bit word of seccomp_data at off into the accumulator.
func (p *program) load(off uint32) {
	p.insns = append(p.insns, insn{code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, k: off})
}

// jumpEq goes to jt when the accumulator is k, else to jf.
func (p *program) jumpEq(k uint32, jt, jf label) {
	p.insns = append(p.insns, insn{code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, jt: jt, jf: jf, k: k})
}

// jumpGE goes to jt when the accumulator is k or more, else to jf.
func (p *program) jumpGE(k uint32, jt, jf label) {
	p.insns = append(p.insns, insn{code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, jt: jt, jf: jf, k: k})
}

// jumpSet goes to jt when the accumulator has a bit of k set, else to jf.
func (p *program) jumpSet(k uint32, jt, jf label) {
	p.insns = append(p.insns, insn{code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, jt: jt, jf: jf, k: k})
}

// ret ends the program with a seccomp action (SECCOMP_RET_*).
func (p *program) ret(action uint32) {
	p.insns = append(p.insns, insn{code: unix.BPF_RET | unix.BPF_K, k: action})
}

// assemble resolves the labels. It fails on a label never placed, a jump
// backward or farther than 8 bits reach, a program the kernel would refuse
// for its length, and one that can run past its end.
func (p *program) assemble() ([]unix.SockFilter, error) {
	if len(p.insns) == 0 || len(p.insns) > maxInsns {
		return nil, fmt.Errorf("seccomp filter of %d instructions: 1 to %d are accepted", len(p.insns), maxInsns)
	}
	if last := p.insns[len(p.insns)-1]; last.code != unix.BPF_RET|unix.BPF_K {
		return nil, fmt.Errorf("seccomp filter ends with instruction %#x, not a return", last.code)
	}
	out := make([]unix.SockFilter, len(p.insns))
	for i, in := range p.insns {
		out[i] = unix.SockFilter{Code: in.code, K: in.k}
		if in.code&0x07 != unix.BPF_JMP {
			continue
		}
		var err error
		if out[i].Jt, err = p.offset(i, in.jt); err != nil {
			return nil, err
		}
		if out[i].Jf, err = p.offset(i, in.jf); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// offset is the jump offset from instruction i to label l.
func (p *program) offset(i int, l label) (uint8, error) {
	if l == next {
		return 0, nil
	}
	if l < 0 || int(l) > len(p.at) || p.at[l-1] < 0 {
		return 0, fmt.Errorf("seccomp filter: instruction %d jumps to label %d, never placed", i, l)
	}
	to := p.at[l-1]
	d := to - i - 1
	if d < 0 || d > maxOffset || to >= len(p.insns) {
		return 0, fmt.Errorf("seccomp filter: instruction %d jumps to instruction %d of %d: a jump reaches 1 to %d instructions forward", i, to, len(p.insns), maxOffset+1)
	}
	return uint8(d), nil
}
