package shell

import (
	"strings"
	"testing"
)

func TestAnalyzeCmd(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{`rd /S /Q C:\build`, []string{`rd /s /q C:\build`}},
		{`del /f /s /q *.tmp & echo done`, []string{"del /f /s /q *.tmp", "echo done"}},
		{`dir && type "my file.txt" || echo no`, []string{"dir", "type my file.txt", "echo no"}},
		{`cmd /c "rmdir /s /q dist"`, []string{`cmd /c rmdir /s /q dist`, "rmdir /s /q dist"}},
		{`echo x > out.txt`, []string{"echo x"}},
		{`(del a) & (del b)`, []string{"del a", "del b"}},
		{`DEL.EXE x`, []string{"del x"}},
		{`r^d /s x`, []string{"rd /s x"}},
		{`type %USERPROFILE%\.ssh\id_rsa`, []string{`type %USERPROFILE%\.ssh\id_rsa`}},
		{`call del x & start /b rd /s y`, []string{"call del x", "del x", "start /b rd /s y", "rd /s y"}},
		{`for /f %i in ('dir /b') do del %i`, []string{"for /f %i in", "'dir /b'", "do del %i", "del %i"}},
	}
	for _, tc := range tests {
		res, err := AnalyzeCmd(tc.src, nil)
		if err != nil {
			t.Errorf("AnalyzeCmd(%q): %v", tc.src, err)
			continue
		}
		var got []string
		for _, c := range res.Commands {
			if c.Name != "" {
				got = append(got, strings.TrimSpace(c.Name+" "+strings.Join(c.Args, " ")))
			}
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("AnalyzeCmd(%q):\n got %q\nwant %q", tc.src, got, tc.want)
		}
	}
	res, _ := AnalyzeCmd(`type %USERPROFILE%\.ssh\id_rsa`, nil)
	if !res.Commands[0].ArgDynamic[0] {
		t.Error("%VAR% must make the word dynamic")
	}
	res, _ = AnalyzeCmd(`echo x > out.txt`, nil)
	if len(res.Commands[0].Redirects) != 1 || res.Commands[0].Redirects[0].Target != "out.txt" {
		t.Errorf("redirect: %+v", res.Commands[0].Redirects)
	}
	for _, bad := range []string{`echo "x`, `(del a`} {
		if _, err := AnalyzeCmd(bad, nil); err == nil {
			t.Errorf("AnalyzeCmd(%q): want an error", bad)
		}
	}
}

func FuzzAnalyzeCmd(f *testing.F) {
	for _, s := range []string{`rd /s /q x`, `a & b && c || d | e`, `cmd /c "del x"`, `(a) > f 2>&1`, `%X% ^& "q"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		res, err := AnalyzeCmd(s, nil)
		if err != nil {
			return
		}
		for _, c := range res.Commands {
			if len(c.Args) != len(c.ArgDynamic) {
				t.Fatalf("%q: Args and ArgDynamic differ in length", s)
			}
		}
	})
}
