package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompletionScripts(t *testing.T) {
	for _, tc := range []struct {
		shell, want string
		code        int
	}{
		{"bash", "__start_toolgate", 0},
		{"zsh", "#compdef toolgate", 0},
		{"fish", "complete -c toolgate", 0},
		{"tcsh", "", 2},
	} {
		var stdout, stderr bytes.Buffer
		code := Run([]string{"completion", tc.shell}, strings.NewReader(""), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("completion %s: exit %d, %d bytes (%s); want exit %d and %q", tc.shell, code, stdout.Len(), stderr.String(), tc.code, tc.want)
		}
	}
}

// TestBashCompletion loads the bash script into a real bash and completes
// command lines with it; toolgate is this test binary.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "toolgate")); err != nil {
		t.Fatal(err)
	}
	// The script uses bash-completion's _get_comp_words_by_ref; a minimal
	// one stands in when the package is not installed.
	const script = `
type _get_comp_words_by_ref >/dev/null 2>&1 || _get_comp_words_by_ref() { cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
compopt() { :; }
source <(toolgate completion bash)
complete_line() {
	COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
	read -ra COMP_WORDS <<<"$COMP_LINE"
	[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	__start_toolgate
	echo "${COMPREPLY[*]}"
}
complete_line "toolgate doc"
complete_line "toolgate hook install "
complete_line "toolgate doctor s"
complete_line "toolgate completion "
`
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), asToolgateEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "doctor\nclaude-code gemini codex\nsandbox server state\nbash zsh fish\n"
	if string(out) != want {
		t.Fatalf("completions:\n%s\nwant:\n%s", out, want)
	}
}
