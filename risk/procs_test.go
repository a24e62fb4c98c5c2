package risk

import "testing"

// TestProcessCommandLines: ps, pgrep and top forms that print or match
// other processes' command lines or environments are credential reads;
// those that show only names and numbers stay reads.
func TestProcessCommandLines(t *testing.T) {
	tests := []struct {
		line string
		want Level
	}{
		{"ps", Read},
		{"ps -e", Read},
		{"ps -A", Read},
		{"ps -el", Read},
		{"ps -ejH", Read},
		{"ps -p 1", Read},
		{"ps -p1 -o pid,comm", Read},
		{"ps -o pid=PID,comm=NAME,%cpu,rss -u root", Read},
		{"ps --format pid,ucmd --no-headers", Read},
		{"ps -eo pid,stat,etime --sort=-etime", Read},
		{"ps -C nginx", Read},
		{"ps aux", Credential},
		{"ps ax", Credential},
		{"ps x", Credential},
		{"ps -aux", Credential},
		{"ps auxww", Credential},
		{"ps ww", Credential},
		{"ps -ww", Credential},
		{"ps -f", Credential},
		{"ps -ef", Credential},
		{"ps -eF", Credential},
		{"ps -e -f", Credential},
		{"ps -o args", Credential},
		{"ps -ocmd", Credential},
		{"ps -o pid,command", Credential},
		{"ps -eo pid,cmd", Credential},
		{"ps -O args", Credential},
		{"ps --format=pid,args", Credential},
		{"ps --format pid,comm,cmd", Credential},
		{"ps o pid,args", Credential},
		{"ps e", Credential},
		{"ps eww", Credential},
		{"ps -E", Credential},
		{"ps -p", Credential},
		{"ps --nope", Credential},
		{"ps -k", Credential},
		{"ps -e --sort=args", Credential},
		{"ps -e --sort +pid,-cmd", Credential},
		{"ps -p 1,2 --sort=command -o pid", Credential},
		{"pgrep nginx", Read},
		{"pgrep -u root -n sshd", Read},
		{"pgrep -c -x bash", Read},
		{"pgrep -a node", Credential},
		{"pgrep -l node", Credential},
		{"pgrep -fl node", Credential},
		{"pgrep -f token=ghp_", Credential},
		{"pgrep --list-full node", Credential},
		{"pgrep --list-name node", Credential},
		{"pgrep --full x", Credential},
		{"pgrep -un root -a x", Credential},
		{"top", Read},
		{"top -b -n 1", Read},
		{"top -bn1 -o %MEM", Read},
		{"top -b -p 12 -n 1", Read},
		{"top -c", Credential},
		{"top -bc -n 1", Credential},
		{"top -cbn1", Credential},
		{"top -b -n1 -c", Credential},
		{"top --cmdline-toggle -b", Credential},
		{"top -b -n 1 -w 200", Read},
		{"top -b -w -c -n 1", Credential},
		{"top -bw -c", Credential},
		{"top -O -c", Credential},
		{"top -b --width -c", Credential},
		{"top -b --iterations=1 --pid 12", Read},
		{"top -b --unknown", Credential},
		{"top -b -Z", Credential},
		{"top -b stray", Credential},
	}
	for _, tc := range tests {
		w := words(tc.line)
		e := Command(w[0], w[1:], make([]bool, len(w)-1))
		if e.Level != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.line, e.Level, e.Secret, tc.want)
		}
		if tc.want == Credential && e.Secret == "" {
			t.Errorf("%s: a credential read without a reason", tc.line)
		}
	}
}

// TestProcPathsAreSecrets: the command lines, environments and memory of
// processes under /proc are credential paths.
func TestProcPathsAreSecrets(t *testing.T) {
	tests := []struct {
		path string
		want PathClass
	}{
		{"/proc/1/cmdline", Secret},
		{"/proc/self/cmdline", Secret},
		{"/proc/*/cmdline", Secret},
		{"/proc/1234/task/1234/cmdline", Secret},
		{"/proc/1/environ", Secret},
		{"/proc/*/environ", Secret},
		{"/proc/1/mem", Secret},
		{"/proc/cpuinfo", Ordinary},
		{"/proc/1/status", Ordinary},
		{"/proc/loadavg", Ordinary},
	}
	for _, tc := range tests {
		if got := ClassifyPath(tc.path, "/home/u"); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.path, got, tc.want)
		}
	}
}
