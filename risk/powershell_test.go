package risk_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/risk"
	"github.com/toolgate/toolgate/shell"
)

// lastPS returns the effect of the last command of a PowerShell line that
// names a program (not an expression inside a script block).
func lastPS(t testing.TB, line string) (risk.Effect, shell.Command) {
	t.Helper()
	res, err := shell.AnalyzePowerShell(line, nil)
	if err != nil || len(res.Commands) == 0 {
		t.Fatalf("AnalyzePowerShell(%q): %v, %d commands", line, err, len(res.Commands))
	}
	var c shell.Command
	for _, x := range res.Commands {
		if x.Name != "" {
			c = x
		}
	}
	return risk.PowerShellCommand(c.Name, c.Args, c.ArgDynamic), c
}

func TestPowerShellPipeline(t *testing.T) {
	tests := []struct {
		line      string
		reads     []string
		writes    []string
		recursive bool
		glob      string
		unknown   bool
		level     risk.Level
		opaque    bool
	}{
		// A listing gives its tree to a cmdlet that reads what it is given.
		{line: "Get-ChildItem -Force | Get-Content", reads: []string{"."}, recursive: true, level: risk.Read},
		{line: "gci src -Filter *.go | gc", reads: []string{"src"}, recursive: true, glob: "*.go", level: risk.Read},
		{line: "gci -Include .env | cat", reads: []string{"."}, recursive: true, glob: ".env*", level: risk.Read},
		{line: "gci -Filter *.htm | gc", reads: []string{"."}, recursive: true, glob: "*.htm*", level: risk.Read},
		{line: "ls -r | ? { $_.Length -gt 0 } | sort Name | select -First 3 | Get-Content", reads: []string{"."}, recursive: true, level: risk.Read},
		{line: "gci -Force | Get-Item | gc", reads: []string{"."}, recursive: true, level: risk.Read},
		{line: "dir src | Select-String KEY", reads: []string{"src"}, recursive: true, level: risk.Read},
		{line: "gci | Get-FileHash", reads: []string{"."}, recursive: true, level: risk.Read},
		{line: `gci .\src | gc`, reads: []string{"./src"}, recursive: true, level: risk.Read},
		// Items and literal strings are the paths themselves.
		{line: "Get-Item .env | gc", reads: []string{".env"}, level: risk.Read},
		{line: "'.env','a' | gc", reads: []string{".env", "a"}, level: risk.Read},
		{line: `'.env ','src\a' | gc`, reads: []string{".env", "src/a"}, level: risk.Read},
		// A name filter picks files below the path named.
		{line: "gc . -Filter *nv", reads: []string{"."}, recursive: true, glob: "*nv", level: risk.Read},
		{line: "Select-String -Path src -Include *.go,*.md -Pattern x", reads: []string{"src"}, recursive: true, level: risk.Read},
		// A path of its own: the pipeline gives the cmdlet no path.
		{line: "gci | gc README.md", reads: []string{"README.md"}, level: risk.Read},
		{line: "gci | Select-String KEY README.md", reads: []string{"README.md"}, level: risk.Read},
		// Text searched is no file.
		{line: "git log | Select-String fix", level: risk.Read},
		{line: "Get-Content a.txt | Select-String x", level: risk.Read},
		// What cannot be told is not known.
		{line: "Get-Content list.txt | Get-Content", unknown: true, level: risk.Read},
		{line: "gci | Select-Object -ExpandProperty FullName | gc", unknown: true, level: risk.Read},
		{line: "gci | % { $_ } | gc", unknown: true, level: risk.Read},
		{line: "$files | Remove-Item", unknown: true, level: risk.Write},
		{line: "git ls-files | gc", unknown: true, level: risk.Read},
		{line: "gci src -Name | gc", unknown: true, level: risk.Read},
		{line: "gci $d | gc", unknown: true, level: risk.Read},
		{line: "gci | gc -Path { $_.FullName }", reads: []string{shell.BlockWord}, unknown: true, level: risk.Read},
		// Writes, deletes and copies of the items given.
		{line: "gci -Recurse | Remove-Item", writes: []string{"."}, level: risk.Destructive, opaque: true},
		{line: "gci | Set-Content -Value x", writes: []string{"."}, level: risk.Write, opaque: true},
		{line: "gci -Force | Copy-Item -Destination out", reads: []string{"."}, writes: []string{"out"}, recursive: true, level: risk.Write, opaque: true},
		{line: "gci -Force | Move-Item -Destination out", reads: []string{"."}, writes: []string{"out", "."}, recursive: true, level: risk.Write, opaque: true},
		// $_ in a ForEach-Object or Where-Object block is what the stages
		// before it give.
		{line: "gci -Force | % { gc $_ }", reads: []string{"."}, recursive: true, level: risk.Read},
		{line: "gci src -Filter *.go | ForEach-Object { Get-Content -LiteralPath $_.FullName }", reads: []string{"src"}, recursive: true, glob: "*.go", level: risk.Read},
		{line: "'a.txt' | % { Get-Content $PSItem }", reads: []string{"a.txt"}, level: risk.Read},
		{line: "gci | ? { Select-String -Path $_ -Pattern x -Quiet }", reads: []string{"."}, recursive: true, level: risk.Read},
		{line: "gci | % { Remove-Item $_ }", writes: []string{"."}, level: risk.Destructive, opaque: true},
		{line: "gci | % { Copy-Item $_ out }", reads: []string{"out", "."}, writes: []string{"out"}, recursive: true, level: risk.Write},
		{line: "gci | % { Copy-Item x $_ }", reads: []string{"x", "."}, writes: []string{"."}, recursive: true, level: risk.Write, opaque: true},
		{line: "gci | % { Set-Content -Path out.txt -Value $_ }", writes: []string{"out.txt"}, level: risk.Write},
		{line: "gci | % { gc $_.Name }", unknown: true, level: risk.Read},
		{line: "git ls-files | % { gc $_ }", unknown: true, level: risk.Read},
		{line: "gci | % { if ($x) { gc $_ } }", unknown: true, level: risk.Read},
		{line: "gci | % { iwr $_ }", unknown: true, level: risk.Network},
		{line: "gci env: | % { gc $_ }", level: risk.Credential},
		// A stage that takes no paths is not changed by its input.
		{line: "gci | Measure-Object", level: risk.Read},
		{line: "gci | % { Format-Table -Property $_ }", unknown: true, level: risk.Read},
		{line: "gci | % -Begin { 1 } -Process { $_.Name }", level: risk.Read},
		{line: "gci | Where-Object -FilterScript { $_.Length -gt 1 }", level: risk.Read},
		{line: "gci | Select-Object Name", level: risk.Read},
		{line: "Get-Content f | Select-Object -First 5", level: risk.Read},
	}
	for _, tc := range tests {
		e, _ := lastPS(t, tc.line)
		if !slices.Equal(e.Reads, tc.reads) || !slices.Equal(e.Writes, tc.writes) || e.Recursive != tc.recursive ||
			e.NameGlob != tc.glob || e.Unknown != tc.unknown || e.Level != tc.level || (e.Opaque != "") != tc.opaque {
			t.Errorf("%s:\n got reads %q writes %q recursive %v glob %q unknown %v level %s opaque %q\nwant reads %q writes %q recursive %v glob %q unknown %v level %s opaque %v",
				tc.line, e.Reads, e.Writes, e.Recursive, e.NameGlob, e.Unknown, e.Level, e.Opaque,
				tc.reads, tc.writes, tc.recursive, tc.glob, tc.unknown, tc.level, tc.opaque)
		}
	}
	// The environment listed and handed on is a secret.
	if e, _ := lastPS(t, "gci env: | Out-String | Select-String KEY"); e.Level != risk.Read {
		t.Errorf("text of the environment searched: level %s, want read (the listing itself is judged)", e.Level)
	}
	if e, _ := lastPS(t, "gci env: | gc"); e.Secret == "" || e.Level != risk.Credential {
		t.Errorf("gci env: | gc: %+v, want a credential read", e)
	}
}

func TestPowerShellParameters(t *testing.T) {
	tests := []struct {
		line, want string
	}{
		{"Get-Content README.md", ""},
		{"Get-Content -Raw -Encoding utf8 README.md", ""},
		{"gc -Tail 5 README.md -ErrorAction Stop", ""},
		{"gc -First 5 README.md -ea 0 -OutVariable lines", ""},
		{"gci src -Recurse -Filter *.go -File", ""},
		{"gci -s -h -d", ""},
		{"Select-String -Path *.go -Pattern TODO -CaseSensitive -Context 2", ""},
		{"Where-Object Name -Like *.go", ""},
		{"Remove-Item x -WhatIf", ""},
		{"Write-Output -5", ""},
		{"Get-Content -Credential x README.md", "-credential"},
		{"Get-Content -Bogus README.md", "-bogus"},
		{"gc -f README.md", "-f"}, // ambiguous: -Filter, -Force
		{"Set-Content -Stream s -Path a -Value x", "-stream"},
		{"Copy-Item a b -ToSession $s", "-tosession"},
		{"gc README.md -OutVariable env:PATH", "-outvariable env:PATH"},
		{"gc README.md -ov:global:x", "-outvariable global:x"},
		{"gci -- x", "--"},
		{"Get-Help Get-Item -Online", "-online"},
		{"git log --bogus", ""}, // a native program: judged elsewhere
		{"gci | Get-Content -Bogus", "-bogus"},
	}
	for _, tc := range tests {
		_, c := lastPS(t, tc.line)
		got := risk.PowerShellUnknownParameter(c.Name, c.Args)
		if got != tc.want {
			t.Errorf("PowerShellUnknownParameter(%q) = %q, want %q", tc.line, got, tc.want)
		}
		e := risk.PowerShellCommand(c.Name, c.Args, c.ArgDynamic)
		if tc.want != "" && (e.Known || e.Level < risk.Execute) {
			t.Errorf("%s: an unknown parameter leaves the effect %+v known", tc.line, e)
		}
	}
	_, c := lastPS(t, "rm -rf src")
	if e := risk.PowerShellCommand(c.Name, c.Args, c.ArgDynamic); e.Level != risk.Destructive || e.Destructive == "" {
		t.Errorf("rm -rf src: %+v, want a destructive effect", e)
	}
	// What the other words say still counts.
	_, c = lastPS(t, "Remove-Item -Recurse -Force -Bogus src")
	if e := risk.PowerShellCommand(c.Name, c.Args, c.ArgDynamic); e.Destructive == "" || !slices.Equal(e.Writes, []string{"src"}) {
		t.Errorf("Remove-Item with an unknown parameter: %+v, want a destructive write of src", e)
	}
}

func TestPowerShellProviders(t *testing.T) {
	tests := []struct {
		line    string
		reads   []string
		unknown bool
		secret  bool
	}{
		{line: "gc FileSystem::/etc/passwd", reads: []string{"/etc/passwd"}},
		{line: `gc Microsoft.PowerShell.Core\FileSystem::/etc/shadow`, reads: []string{"/etc/shadow"}},
		{line: `gci HKLM:\SOFTWARE`, reads: []string{"HKLM:/SOFTWARE"}, unknown: true},
		{line: `gci Cert:\CurrentUser\My`, reads: []string{"Cert:/CurrentUser/My"}, unknown: true},
		{line: `gc C:\Users\me\.ssh\id_rsa`, reads: []string{`C:\Users\me\.ssh\id_rsa`}},
		{line: "gc '.env '", reads: []string{".env"}},
		{line: "gc 'src/.env. .'", reads: []string{"src/.env"}},
		{line: "gc ../x/./a", reads: []string{"../x/./a"}},
		{line: "gc ENV~1", reads: []string{"ENV~1"}, unknown: true},
		{line: `gc src\PROGRA~1.TXT`, reads: []string{"src/PROGRA~1.TXT"}, unknown: true},
		{line: "gc a~b", reads: []string{"a~b"}},
		{line: "ls env:", secret: true},
		{line: "dir variable:", secret: true},
		{line: "Get-Variable", secret: true},
		{line: "Get-Variable -Name PSVersionTable"},
	}
	for _, tc := range tests {
		e, _ := lastPS(t, tc.line)
		if !slices.Equal(e.Reads, tc.reads) || e.Unknown != tc.unknown || (e.Secret != "") != tc.secret {
			t.Errorf("%s: reads %q unknown %v secret %q; want reads %q unknown %v secret %v",
				tc.line, e.Reads, e.Unknown, e.Secret, tc.reads, tc.unknown, tc.secret)
		}
	}
}

// FuzzPowerShellCommand checks that no line makes the effects panic, and
// that a stage fed by a listing never reads less than the listing's
// tree.
func FuzzPowerShellCommand(f *testing.F) {
	for _, s := range []string{"gci -Force | gc", "gci src -Filter *.go | sls x", "'a','b' | ri", "$x | gc",
		"gci | ? { $_ } | select -First 1 | cp -Destination d", "gc -Bogus x", "gc -ov:env:X x", "gci Env: | gc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		res, err := shell.AnalyzePowerShell(s, nil)
		if err != nil {
			return
		}
		for _, c := range res.Commands {
			e := risk.PowerShellCommand(c.Name, c.Args, c.ArgDynamic)
			risk.PowerShellUnknownParameter(c.Name, c.Args)
			if c.Name == "get-content" && len(c.Args) == 2 && strings.HasPrefix(c.Args[0], shell.PipeMark) && c.Args[1] == "get-childitem" {
				if !e.Recursive || !slices.Equal(e.Reads, []string{"."}) {
					t.Fatalf("%q: gci | gc reads %q recursive %v", s, e.Reads, e.Recursive)
				}
			}
		}
	})
}
