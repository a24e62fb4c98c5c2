package risk

import "strings"

// The go command in the spec language of ParseSpecs: the build flags that
// build, install, run, test and vet share, and the flags of each. The
// lists follow "go help build", "go help testflag" and "go help vet" of
// Go 1.22.
//
// What the spec decides:
//
//   - -exec (run, test) and -toolexec (every build) name a program go
//     runs, with the built binary or each tool as its arguments; vet's
//     -vettool is the analysis tool go runs. They are kind exec, so a rule
//     that allows go test does not allow the program they name.
//   - go generate runs the commands that //go:generate lines of the
//     source name, which the words do not show: Command types it as
//     running a program. go env -w and -u write go's environment file,
//     whose GOFLAGS later go commands read as options: typed so too.
//   - Subcommands that only report or manage modules (env, list, mod,
//     work, version, doc, …) parse no options here: their words stay
//     operands, as before this spec.
//   - -overlay and -modfile replace source files and the module file with
//     others, which may bring code from anywhere: kind code.
//   - go accepts --flag for -flag, and no abbreviations; Command reads the one-dash spelling.
//     A flag given a value (-v=true) is unknown: it asks.
const goBuildFlags = `
  -C=dir -a -n -p=inert -race -msan -asan -cover -covermode=inert -coverpkg=pat -v -work -x
  -asmflags=inert -buildmode=inert -buildvcs?=inert -compiler=inert -gccgoflags=inert -gcflags=inert
  -installsuffix=inert -ldflags=inert -linkshared -mod=inert -modcacherw -modfile=code -overlay=code
  -pgo=inert -pkgdir=dir -tags=inert -trimpath -toolexec=exec -json`

const goTestFlags = `
  -exec=exec -c -o=write -fullpath -vet=inert -bench=pat -benchmem -benchtime=inert -count=inert
  -coverprofile=write -cpu=inert -failfast -fuzz=pat -fuzzminimizetime=inert -fuzztime=inert
  -list=pat -parallel=inert -run=pat -short -shuffle=inert -skip=pat -timeout=inert
  -blockprofile=write -blockprofilerate=inert -cpuprofile=write -memprofile=write
  -memprofilerate=inert -mutexprofile=write -mutexprofilefraction=inert -outputdir=dir -trace=write`

func init() {
	specSources = append(specSources, specSource{"go", "go: @single @noabbrev"})
}

// goSubcommandSources returns the subcommands of go.
func goSubcommandSources() []subcommandSource {
	return []subcommandSource{
		{name: "go build", program: "go", text: "build: @single @noabbrev -o=write" + goBuildFlags},
		{name: "go install", program: "go", text: "install: @single @noabbrev" + goBuildFlags},
		{name: "go run", program: "go", text: "run: @single @noabbrev @posix -exec=exec" + goBuildFlags},
		{name: "go test", program: "go", text: "test: @single @noabbrev" + goBuildFlags + goTestFlags},
		{name: "go vet", program: "go", text: "vet: @single @noabbrev -vettool=exec" + goBuildFlags},
		{name: "go generate", program: "go", text: "generate: @single @noabbrev -run=pat -skip=pat" + goBuildFlags},
		{name: "go others", program: "go", text: `
bug clean doc env fix fmt get list mod work tool version telemetry: @free
`},
	}
}

// goWords returns go's words as its spec reads them: --flag spelled -flag,
// as the go command accepts both; a one-dash word that names no flag of
// the subcommand spelled --word, so that the parse reports it unknown
// rather than reading it as a cluster of short flags, which go has not
// (-overlays is not -o verlays); and the words after go test's -args left
// out, since go hands them to the test binary it builds. sub is the spec
// of the subcommand when the words hold none (GOFLAGS).
func goWords(args []string, dyn []bool, sub *Spec) ([]string, []bool) {
	out, outDyn := make([]string, 0, len(args)), make([]bool, 0, len(args))
	for i, a := range args {
		d := i < len(dyn) && dyn[i]
		if !d {
			if sub == nil && len(out) == 0 && !strings.HasPrefix(a, "-") {
				sub = Lookup("go").Subcommand(a)
				out, outDyn = append(out, a), append(outDyn, d)
				continue
			}
			if strings.HasPrefix(a, "--") && len(a) > 2 {
				a = a[1:]
			}
			if sub != nil && sub.Program == "test" && a == "-args" {
				break
			}
			name, _, _ := strings.Cut(a, "=")
			if len(name) > 2 && name[0] == '-' && name[1] != '-' && sub != nil && !sub.Free && sub.long[name[1:]] == nil {
				a = "-" + a
			}
		}
		out, outDyn = append(out, a), append(outDyn, d)
	}
	return out, outDyn
}

// inertTestBinaryFlags are the flags of the testing package that a go test
// binary reads after -args and that write no file: -test.cpuprofile,
// -test.trace, -test.testlogfile, -test.outputdir and the like write
// where they say, and are left out.
var inertTestBinaryFlags = map[string]bool{
	"v": true, "run": true, "skip": true, "count": true, "timeout": true, "short": true, "bench": true,
	"benchtime": true, "benchmem": true, "cpu": true, "parallel": true, "failfast": true, "list": true,
	"shuffle": true, "fullpath": true, "paniconexit0": true,
}

// goTestBinaryFlag returns the first word of go test's test binary
// arguments (after -args, or after a "--", which go also hands on) that
// is a flag of the testing package not in inertTestBinaryFlags, or "".
// The test's own flags (-update, -v) are the project's: they pass, as
// the words after npm test's "--" do. A dynamic word may be any flag: it
// is returned too.
func goTestBinaryFlag(args []string, dyn []bool) string {
	sub := -1
	for i := 0; i < len(args); i++ {
		if !static(dyn, i) {
			return ""
		}
		if args[i] == "-C" || args[i] == "--C" {
			i++
			continue
		}
		if !strings.HasPrefix(args[i], "-") {
			sub = i
			break
		}
	}
	if sub < 0 || args[sub] != "test" {
		return ""
	}
	rest := -1
	for i := sub + 1; i < len(args); i++ {
		if static(dyn, i) && (args[i] == "-args" || args[i] == "--args" || args[i] == "--") {
			rest = i + 1
			break
		}
	}
	if rest < 0 {
		return ""
	}
	for i := rest; i < len(args); i++ {
		if !static(dyn, i) {
			return args[i]
		}
		name, _, _ := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if t, ok := strings.CutPrefix(name, "test."); ok && strings.HasPrefix(args[i], "-") && !inertTestBinaryFlags[t] {
			return args[i]
		}
	}
	return ""
}

// goToolFlagsKnown are, per build flag that passes flags to a tool (the
// compiler, the linker), the tool flags that run no program and write no
// file: -gcflags=all=-N -l, -ldflags="-s -w -X main.v=1". Any other (the
// linker's -extld and -extldflags, which name the external linker and its
// flags; -tmpdir; the profiles either tool writes) is unknown.
var goToolFlagsKnown = map[string]map[string]bool{
	"-gcflags": {"N": true, "l": true, "m": true, "S": true, "B": true, "C": true, "e": true, "h": true,
		"live": true, "wb": true, "std": true},
	"-ldflags":    {"s": true, "w": true, "X": true, "v": true, "buildid": true, "compressdwarf": true},
	"-asmflags":   {},
	"-gccgoflags": {},
}

// inertGoToolFlags reports whether value, the value of go's -gcflags,
// -ldflags, -asmflags or -gccgoflags, holds only tool flags of
// goToolFlagsKnown, after an optional "PATTERN=" (all=-N). A flag whose
// value names a path (a "/") is not inert either.
func inertGoToolFlags(flag, value string) bool {
	known, ok := goToolFlagsKnown[flag]
	if !ok {
		return true
	}
	if strings.ContainsAny(value, `'"\`) {
		return false
	}
	if !strings.HasPrefix(value, "-") {
		if _, rest, ok := strings.Cut(value, "="); ok {
			value = rest
		}
	}
	f := strings.Fields(value)
	for i := 0; i < len(f); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(f[i], "-"), "=")
		if !strings.HasPrefix(f[i], "-") || !known[name] || hasVal && strings.Contains(val, "/") {
			return false
		}
		if flag == "-ldflags" && name == "X" && !hasVal {
			i++ // -X importpath.name=value
		}
	}
	return true
}
