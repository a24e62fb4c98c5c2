package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCodeDependencies: the files a call's code depends on are found as
// deeply as the analysis sees (sourced scripts, included makefiles), and
// what it cannot see is said (Unit.CodeUnseen), never left out silently.
func TestCodeDependencies(t *testing.T) {
	chain := map[string]string{}
	for i := range maxDepDepth + 1 {
		chain[fmt.Sprintf("d/%d.sh", i)] = fmt.Sprintf("source ./d/%d.sh\n", i+1)
	}
	many := map[string]string{}
	var lines []string
	for i := range maxDepFiles + 1 {
		many[fmt.Sprintf("m/%d.sh", i)] = "X=1\n"
		lines = append(lines, fmt.Sprintf(". ./m/%d.sh", i))
	}
	many["t.sh"] = strings.Join(lines, "\n") + "\n"
	big := map[string]string{}
	lines = nil
	for i := range maxDepTotal/(60<<10) + 1 {
		big[fmt.Sprintf("b/%d.sh", i)] = strings.Repeat("# padding padding padding padding padding padding\n", 60<<10/51)
		lines = append(lines, fmt.Sprintf(". $P/b/%d.sh", i))
	}
	big["t.sh"] = strings.Join(lines, "\n") + "\n"
	cases := []struct {
		name    string
		files   map[string]string
		command string
		// code lists the files, relative to the project, that must be in
		// the unit's Code; unseen, when set, is part of CodeUnseen.
		code   []string
		unseen string
	}{
		{"bash script sourcing two levels", map[string]string{"t.sh": "source ./lib/a.sh\n", "lib/a.sh": ". lib/b.sh\n", "lib/b.sh": ""},
			"bash t.sh", []string{"t.sh", "lib/a.sh", "lib/b.sh"}, ""},
		{"bash options before the script", map[string]string{"t.sh": "source ./a.sh\n", "a.sh": ""},
			"bash -o errexit -x t.sh arg", []string{"t.sh", "a.sh"}, ""},
		{"sourcing in a branch", map[string]string{"t.sh": "if true; then source ./a.sh; fi\n[ -f ./b.sh ] && . ./b.sh\n", "a.sh": "", "b.sh": ""},
			"sh t.sh", []string{"t.sh", "a.sh", "b.sh"}, ""},
		{"sourcing a relative path in a loop", map[string]string{"t.sh": "for i in 1 2; do . ./b.sh; done\n", "b.sh": ""},
			"sh t.sh", []string{"t.sh"}, "directory it is sourced from is not known"},
		{"sourcing a relative path in a function", map[string]string{"t.sh": "f() { . ./a.sh; }\nf\n", "a.sh": ""},
			"bash t.sh", []string{"t.sh"}, "directory it is sourced from is not known"},
		{"sourcing an absolute path in a function", map[string]string{"t.sh": "f() { . $P/a.sh; }\nf\n", "a.sh": ""},
			"bash t.sh", []string{"t.sh", "a.sh"}, ""},
		{"relative sources one after another", map[string]string{"t.sh": "source ./a.sh\nsource ./b.sh\n. ./c.sh\n", "a.sh": "X=1\nf() { echo; }\n", "b.sh": ". ./c.sh\n", "c.sh": ""},
			"bash t.sh", []string{"t.sh", "a.sh", "b.sh", "c.sh"}, ""},
		{"absent sourced file is bound", map[string]string{"t.sh": "source ./local.sh || true\n"},
			"bash t.sh", []string{"t.sh", "local.sh"}, ""},
		{"cd in the script, then a relative source", map[string]string{"t.sh": "cd lib\nsource ./a.sh\n", "lib/a.sh": ""},
			"bash t.sh", []string{"t.sh"}, "directory it is sourced from is not known"},
		{"cd in the script, then an absolute source", map[string]string{"t.sh": "cd lib\nsource $P/lib/a.sh\n", "lib/a.sh": ""},
			"bash t.sh", []string{"t.sh", "lib/a.sh"}, ""},
		{"a cycle is read once", map[string]string{"t.sh": "source ./a.sh\n", "a.sh": "source ./t.sh\n"},
			"bash t.sh", []string{"t.sh", "a.sh"}, ""},
		{"run by path with a shell shebang", map[string]string{"t.sh": "#!/usr/bin/env bash\nsource ./a.sh\n", "a.sh": ""},
			"./t.sh", []string{"a.sh"}, ""},
		{"run by path with no shebang", map[string]string{"t.sh": "source ./a.sh\n", "a.sh": ""},
			"./t.sh", []string{"a.sh"}, ""},
		{"run by path with another interpreter", map[string]string{"t.py": "#!/usr/bin/python3\nimport os\n"},
			"./t.py", nil, ""},
		{"source on the line", map[string]string{"env.sh": "source ./a.sh\n", "a.sh": ""},
			"source ./env.sh", []string{"env.sh", "a.sh"}, ""},
		{"source on the line looked up in PATH", map[string]string{"env.sh": ""},
			". env.sh", nil, "looks the file up in PATH"},
		{"computed sourced path", map[string]string{"t.sh": "source \"$(dirname \"$0\")/a.sh\"\n"},
			"bash t.sh", []string{"t.sh"}, "not known until the line runs"},
		{"sourced path in a variable", map[string]string{"t.sh": "source $LIB/a.sh\n"},
			"bash t.sh", []string{"t.sh"}, "not known until the line runs"},
		{"command name not known", map[string]string{"t.sh": "$RUN ./a.sh\n"},
			"bash t.sh", []string{"t.sh"}, "name is not known"},
		{"sourced file changes the directory", map[string]string{"t.sh": "source ./a.sh\nsource ./b.sh\n", "a.sh": "cd /tmp\n", "b.sh": ""},
			"bash t.sh", []string{"t.sh", "a.sh"}, "directory it is sourced from is not known"},
		{"sourced file defines a function that changes the directory", map[string]string{"t.sh": "source ./a.sh\nf\nsource ./b.sh\n", "a.sh": "f() { builtin cd /tmp; }\n", "b.sh": ""},
			"bash t.sh", []string{"t.sh", "a.sh"}, "directory it is sourced from is not known"},
		{"file sourced by a sourced file changes the directory", map[string]string{"t.sh": "source ./a.sh\nsource ./b.sh\n", "a.sh": "source ./c.sh\n", "c.sh": "pushd /tmp\n", "b.sh": ""},
			"bash t.sh", []string{"t.sh", "a.sh", "c.sh"}, "directory it is sourced from is not known"},
		{"too deep", chain, "source ./d/0.sh", nil, "levels deep"},
		{"too many", many, "bash t.sh", nil, "more than"},
		{"too many bytes", big, "bash t.sh", nil, "bytes of files"},
		{"script that does not parse", map[string]string{"t.sh": "if then fi (\n"},
			"bash t.sh", []string{"t.sh"}, "cannot be analysed"},
		{"script runs a shell script", map[string]string{"t.sh": "bash ./helper.sh -x\n", "helper.sh": "source ./lib.sh\n", "lib.sh": ""},
			"bash t.sh", []string{"t.sh", "helper.sh", "lib.sh"}, ""},
		{"script runs a script by path", map[string]string{"t.sh": "./helper.sh\n", "helper.sh": "#!/bin/sh\n. ./lib.sh\n", "lib.sh": ""},
			"bash t.sh", []string{"t.sh", "helper.sh", "lib.sh"}, ""},
		{"script runs python and make", map[string]string{"t.sh": "python3 tool.py \"$@\"\nmake -C sub\n", "tool.py": "", "sub/Makefile": "include x.mk\n", "sub/x.mk": ""},
			"bash t.sh", []string{"t.sh", "tool.py", "sub/Makefile", "sub/x.mk"}, ""},
		{"script evals a computed string", map[string]string{"t.sh": "eval \"$CMD\"\n"},
			"bash t.sh", []string{"t.sh"}, "not known"},
		{"script runs python on a computed path", map[string]string{"t.sh": "python3 \"$TOOL\"\n"},
			"bash t.sh", []string{"t.sh"}, "not known until the line runs"},
		{"script runs a script on a computed path", map[string]string{"t.sh": "sh \"$TOOL\"\n"},
			"bash t.sh", []string{"t.sh"}, "not known until the line runs"},
		{"python with computed arguments after its script", map[string]string{"tool.py": ""},
			"python3 tool.py \"$X\"", []string{"tool.py"}, ""},
		{"shell reads its script from a file", map[string]string{"t.sh": "source ./a.sh\n", "a.sh": ""},
			"bash < t.sh", []string{"t.sh", "a.sh"}, ""},
		{"shell -s reads its script from a file", map[string]string{"t.sh": "source ./a.sh\n", "a.sh": ""},
			"sh -s arg < t.sh", []string{"t.sh", "a.sh"}, ""},
		{"shell reads its script from a pipe", map[string]string{"t.sh": "source ./a.sh\n", "a.sh": ""},
			"cat t.sh | bash", nil, "standard input"},
		{"shell reads its script from a here-string", map[string]string{"a.sh": ""},
			"bash <<< 'echo hi'", nil, ""},
		{"script exports a variable that changes what code runs", map[string]string{"t.sh": "export PYTHONPATH=./lib\npython3 tool.py\n", "tool.py": ""},
			"bash t.sh", []string{"t.sh"}, "sets PYTHONPATH"},
		{"script exports ordinary variables", map[string]string{"t.sh": "export FOO=\"$HOME/x\" BAR\ndeclare -x BAZ=1\nsource ./a.sh\n", "a.sh": ""},
			"bash t.sh", []string{"t.sh", "a.sh"}, ""},
		{"script assigns BASH_ENV", map[string]string{"t.sh": "BASH_ENV=./x.sh bash ./helper.sh\n", "helper.sh": ""},
			"bash t.sh", []string{"t.sh"}, "sets BASH_ENV"},
		{"make reads the first makefile and its includes", map[string]string{"Makefile": "include a.mk b.mk\n-include c.mk # note\nall:\n\ttrue\n", "a.mk": "sinclude sub/d.mk\n", "b.mk": "", "sub/d.mk": ""},
			"make all", []string{"GNUmakefile", "makefile", "Makefile", "a.mk", "b.mk", "c.mk", "sub/d.mk"}, ""},
		{"make -f and -C", map[string]string{"sub/build.mk": "include x.mk\n", "sub/x.mk": ""},
			"make -C sub -f build.mk", []string{"sub/build.mk", "sub/x.mk"}, ""},
		{"make --directory= and --file=", map[string]string{"sub/build.mk": "include x.mk\n", "sub/x.mk": ""},
			"make --directory=sub --file=build.mk", []string{"sub/build.mk", "sub/x.mk"}, ""},
		{"make include of a continued line", map[string]string{"Makefile": "include a.mk \\\n  b.mk\n", "a.mk": "", "b.mk": ""},
			"make", []string{"Makefile", "a.mk", "b.mk"}, ""},
		{"make include by pattern", map[string]string{"Makefile": "include mk/*.mk\n", "mk/a.mk": "", "mk/b.mk": ""},
			"make", []string{"Makefile", "mk", "mk/a.mk", "mk/b.mk"}, ""},
		{"make include with a variable", map[string]string{"Makefile": "include $(CONF).mk\n"},
			"make", []string{"Makefile"}, "not known until make runs"},
		{"make eval", map[string]string{"Makefile": "$(eval include x.mk)\n"},
			"make", []string{"Makefile"}, "$(eval)"},
		{"make --eval", map[string]string{"Makefile": ""}, "make --eval='include x.mk'", nil, "--eval"},
		{"make with MAKEFILES", map[string]string{"Makefile": ""}, "MAKEFILES=x.mk make", nil, "MAKEFILES"},
		{"make -I and a missing include", map[string]string{"Makefile": "include gone.mk\n"},
			"make -I inc", nil, "-I directories"},
		{"make binds the script of a recipe on the rule's line", map[string]string{"Makefile": "X := a;b\nall: dep ; ./build.sh\n$(X) x&: ; @sh other.sh\n", "build.sh": "", "other.sh": ""},
			"make", []string{"Makefile", "build.sh", "other.sh"}, ""},
		{"make loads a shared object", map[string]string{"Makefile": "load ./ext.so\n"},
			"make", []string{"Makefile"}, "load"},
		{"make -load", map[string]string{"Makefile": "-load ext.so(init)\n"},
			"make", []string{"Makefile"}, "load"},
		{"make binds the scripts its recipes run", map[string]string{"Makefile": "build:\n\t@./build.sh\n\t-sh other.sh $$HOME\n\tbash -c 'echo $$x'\n", "build.sh": "#!/bin/sh\n. ./lib.sh\n", "lib.sh": "", "other.sh": ""},
			"make build", []string{"Makefile", "build.sh", "lib.sh", "other.sh"}, ""},
		{"make recipe in an included makefile", map[string]string{"Makefile": "include a.mk\n", "a.mk": "all:\n\tpython3 gen.py\n", "gen.py": ""},
			"make", []string{"Makefile", "a.mk", "gen.py"}, ""},
		{"make recipe run by a variable", map[string]string{"Makefile": "all:\n\t$(TOOL) x\n"},
			"make", []string{"Makefile"}, "not known until make runs"},
		{"make recipe runs an automatic variable", map[string]string{"Makefile": "all: run.sh\n\tsh $<\n"},
			"make", []string{"Makefile"}, "sh is given a script whose name is not known"},
		{"make runs $(shell) as it reads the makefile", map[string]string{"Makefile": "V := $(shell ./version.sh)\nall:\n\techo $(shell git rev-parse HEAD) $(V)\n", "version.sh": ""},
			"make", []string{"Makefile", "version.sh"}, ""},
		{"make $(shell) with a computed command", map[string]string{"Makefile": "V := $(shell $(GEN))\n"},
			"make", []string{"Makefile"}, "not known until make runs"},
		{"npm test binds the scripts it runs", map[string]string{
			"package.json": `{"scripts":{"pretest":"sh ./pre.sh","test":"node test.js && ./run.sh","posttest":"jest --ci"}}`,
			"pre.sh":       "", "test.js": "", "run.sh": "#!/bin/sh\n. ./lib.sh\n", "lib.sh": "", "node_modules/.bin/jest": "#!/bin/sh\n"},
			"npm test", []string{"package.json", "pre.sh", "test.js", "run.sh", "lib.sh", "node_modules/.bin/jest"}, ""},
		{"npm run a script", map[string]string{"package.json": `{"scripts":{"build":"bash scripts/build.sh"}}`, "scripts/build.sh": ""},
			"npm run build -- --prod", []string{"package.json", "scripts/build.sh", ".npmrc", ".pnpmfile.cjs"}, ""},
		{"yarn runs a script by its name", map[string]string{"package.json": `{"scripts":{"lint":"python3 lint.py"}}`, "lint.py": ""},
			"yarn lint", []string{"package.json", "lint.py"}, ""},
		{"npm run a computed script", map[string]string{"package.json": `{"scripts":{}}`},
			"npm run \"$S\"", []string{"package.json"}, "not known until the line runs"},
		{"npm script run by a variable", map[string]string{"package.json": `{"scripts":{"build":"$TOOL x"}}`},
			"npm run build", []string{"package.json"}, "not known until it runs"},
		{"python binds the modules it imports from beside it", map[string]string{"t.py": "import os, helper as h\nfrom util.sub import x; import json\n", "helper.py": "import lib\n", "lib.py": "", "util.py": ""},
			"python3 t.py", []string{"t.py", "helper.py", "lib.py", "util.py", "os.py", "json.py"}, ""},
		{"python -c imports from the directory it runs in", map[string]string{"helper.py": ""},
			"python3 -c 'import helper'", []string{"helper.py"}, ""},
		{"python -m runs a module of the directory it runs in", map[string]string{"tool.py": ""},
			"python3 -m tool", []string{"tool.py"}, ""},
		{"python imports a package beside it", map[string]string{"t.py": "import pkg.mod\n", "pkg/__init__.py": ""},
			"python3 t.py", []string{"t.py"}, "package pkg"},
		{"python relative import", map[string]string{"t.py": "from . import x\n"},
			"python3 t.py", []string{"t.py"}, "relative"},
		{"python import by computed name", map[string]string{"t.py": "m = __import__(name)\n"},
			"python3 t.py", []string{"t.py"}, "computed"},
		{"python -c after an option with a value", map[string]string{"helper.py": ""},
			"python3 -W ignore -c 'import helper'", []string{"helper.py"}, ""},
		{"python -c in a cluster", map[string]string{"helper.py": ""},
			"python3 -Ic 'import helper'", []string{"helper.py"}, ""},
		{"python -m with its module attached", map[string]string{"tool.py": ""},
			"python3 -X dev -mtool", []string{"tool.py"}, ""},
		{"python runs its script after an option with a value", map[string]string{"t.py": "import helper\n", "helper.py": ""},
			"python3 -W ignore t.py", []string{"t.py", "helper.py"}, ""},
		{"python given a computed script after an option", nil,
			"python3 -W ignore \"$S\"", nil, "not known until the line runs"},
		{"python with an option not known", map[string]string{"t.py": ""},
			"python3 -Z t.py", nil, "-Z"},
		{"python imports in one-line compound statements", map[string]string{"t.py": "try: import helper\nexcept ImportError: pass\nif True: from util import x\n", "helper.py": "", "util.py": ""},
			"python3 t.py", []string{"t.py", "helper.py", "util.py"}, ""},
		{"python runs code it reads", map[string]string{"t.py": "exec(open('other.py').read())\n"},
			"python3 t.py", []string{"t.py"}, "computed"},
		{"python changes where it imports from", map[string]string{"t.py": "import sys; sys.path.insert(0, 'lib')\nimport helper\n"},
			"python3 t.py", []string{"t.py"}, "computed"},
		{"node binds the modules it requires", map[string]string{"t.js": "const lib = require('./lib');\n// require('./commented')\nconst s = \"require('./quoted')\";\nconst r = /'/;\nrequire(\"./after\")\n", "lib.js": "", "after.js": ""},
			"node t.js", []string{"t.js", "lib", "lib.js", "after.js"}, ""},
		{"node binds what it imports", map[string]string{"t.mjs": "import x from './a.mjs';\nimport './side.js'\nexport * from \"./c\";\nexport { y } from './d.cjs';\nconst m = await import(`./b.js`);\nimport.meta.url;\n", "a.mjs": "", "side.js": "", "c.js": "", "d.cjs": "", "b.js": ""},
			"node t.mjs", []string{"t.mjs", "a.mjs", "side.js", "c", "c.js", "d.cjs", "b.js"}, ""},
		{"node binds nested requires", map[string]string{"t.js": "require('./lib/a')\n", "lib/a.js": "module.exports = require('../b.js')\n", "b.js": "require('./c.json')\n", "c.json": "{}"},
			"node -- t.js arg", []string{"t.js", "lib/a.js", "b.js", "c.json"}, ""},
		{"node resolves a directory's index.js", map[string]string{"t.js": "require('./lib')\n", "lib/index.js": "require('./x')\n", "lib/x.js": ""},
			"node t.js", []string{"t.js", "lib", "lib.js", "lib.json", "lib/package.json", "lib/index.js", "lib/x.js"}, ""},
		{"node resolves a directory's package.json main", map[string]string{"t.js": "require('./lib')\n", "lib/package.json": `{"main": "./main.js"}`, "lib/main.js": ""},
			"node t.js", []string{"t.js", "lib.js", "lib/package.json", "lib/main.js"}, ""},
		{"node with a directory main that is not simple", map[string]string{"t.js": "require('./lib')\n", "lib/package.json": `{"main": "../elsewhere"}`},
			"node t.js", []string{"t.js"}, "main module"},
		{"node code that reads as a regular expression", map[string]string{"t.js": "let y = 1, z = y++ / 2; require('./a'); z = 1 / 3\nif (y) /`/.test(''); require('./b')\n`\n", "a.js": "", "b.js": ""},
			"node t.js", []string{"t.js", "a.js", "b.js"}, ""},
		{"node code that reads as a comment", map[string]string{"t.js": "if (y) /\\//.test(s); require(process.env.X)\n"},
			"node t.js", []string{"t.js"}, "computed"},
		{"node requires a module by a computed name", map[string]string{"t.js": "const name = './lib';\nrequire(name)\n"},
			"node t.js", []string{"t.js"}, "computed"},
		{"node requires a template with a substitution", map[string]string{"t.js": "require(`./lib/${x}`)\n"},
			"node t.js", []string{"t.js"}, "computed"},
		{"node imports by a computed name", map[string]string{"t.mjs": "await import(p)\n"},
			"node t.mjs", []string{"t.mjs"}, "computed"},
		{"node aliases require", map[string]string{"t.js": "const r = require;\nr('./lib')\n"},
			"node t.js", []string{"t.js"}, "require other than"},
		{"node requires a package of node_modules", map[string]string{"t.js": "const fs = require('fs'), p = require('node:path');\nrequire('lodash')\n", "node_modules/lodash/index.js": ""},
			"node t.js", []string{"t.js"}, "package lodash"},
		{"node requires only built-in modules", map[string]string{"t.js": "require('fs'); require('node:child_process'); import('fs/promises')\n"},
			"node t.js", []string{"t.js"}, ""},
		{"node -e requires from the directory it runs in", map[string]string{"helper.js": ""},
			"node -e \"require('./helper')\"", []string{"helper.js"}, ""},
		{"node -p with a computed require", nil,
			"node -p 'require(process.argv[1])' x", nil, "computed"},
		{"node --require of a local file", map[string]string{"setup.js": "require('./more')\n", "more.js": "", "t.js": ""},
			"node -r ./setup.js t.js", []string{"setup.js", "more.js", "t.js"}, ""},
		{"node --import of a package", map[string]string{"t.js": ""},
			"node --import tsx t.js", nil, "tsx"},
		{"node with options that load nothing", map[string]string{"t.js": "require('./lib')\n", "lib.js": ""},
			"node --no-warnings --enable-source-maps --max-old-space-size=4096 --inspect=9229 t.js", []string{"t.js", "lib.js"}, ""},
		{"node --run runs a script of package.json", map[string]string{"package.json": `{"scripts":{"build":"sh ./b.sh"}}`, "b.sh": ""},
			"node --run build", nil, "--run"},
		{"node --test runs the test files it finds", map[string]string{"a.test.js": ""},
			"node --test", nil, "--test"},
		{"node --snapshot-blob", map[string]string{"t.js": ""},
			"node --snapshot-blob snap.blob t.js", nil, "--snapshot-blob"},
		{"node --loader", map[string]string{"t.js": ""},
			"node --loader ./l.mjs t.js", nil, "--loader"},
		{"node with NODE_OPTIONS on the line", map[string]string{"t.js": ""},
			"NODE_OPTIONS='--require ./evil.js' node t.js", nil, "NODE_OPTIONS"},
		{"node script run by path", map[string]string{"t.js": "#!/usr/bin/env node\nrequire('./lib')\n", "lib.js": ""},
			"./t.js", []string{"lib.js"}, ""},
		{"script runs node", map[string]string{"t.sh": "node ./t.js\n", "t.js": "require('./lib')\n", "lib.js": ""},
			"bash t.sh", []string{"t.sh", "t.js", "lib.js"}, ""},
		{"make references nested too deep", map[string]string{"Makefile": "X := " + strings.Repeat("$(a ", 4000) + strings.Repeat(")", 4000) + "\n"},
			"make", []string{"Makefile"}, "not known until make runs"},
		{"make $(shell) nested too deep", map[string]string{"Makefile": "X := " + strings.Repeat("$(shell echo ", 2000) + strings.Repeat(")", 2000) + "\n"},
			"make", []string{"Makefile"}, "levels deep"},
		{"make with a shell of the workspace", map[string]string{"Makefile": "SHELL := ./mysh\nall:\n\ttrue\n"},
			"make", []string{"Makefile"}, "SHELL"},
		{"make with a shell for one target", map[string]string{"Makefile": "all: SHELL := ./mysh\nall:\n\ttrue\n"},
			"make", []string{"Makefile"}, "SHELL"},
		{"make with a shell defined over lines", map[string]string{"Makefile": "define SHELL\n./mysh\nendef\nall:\n\ttrue\n"},
			"make", []string{"Makefile"}, "SHELL"},
		{"make given a shell on its command line", map[string]string{"Makefile": "all:\n\ttrue\n"},
			"make SHELL=./mysh all", nil, "SHELL"},
		{"make given MAKEFILES on its command line", map[string]string{"Makefile": ""},
			"make MAKEFILES=x.mk", nil, "MAKEFILES"},
		{"make given the system bash on its command line", map[string]string{"Makefile": "all:\n\ttrue\n"},
			"make SHELL=/bin/bash CC=gcc all", []string{"Makefile"}, ""},
		{"make with the system bash", map[string]string{"Makefile": "SHELL := /bin/bash\n.SHELLFLAGS := -eu -o pipefail -c\nall:\n\ttrue\n"},
			"make", []string{"Makefile"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			for name, body := range c.files {
				p := filepath.Join(w.project, name)
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(t, os.WriteFile(p, []byte(w.expand(body)), 0o755))
			}
			e := w.engine(t, layers{})
			d := e.Explain(context.Background(), &Request{Tool: "Bash", Input: sh(c.command), Cwd: w.project})
			if d.Trace == nil || len(d.Trace.Units) == 0 {
				t.Fatalf("no units: %+v", d)
			}
			var u *Unit
			for _, x := range d.Trace.Units {
				if x.Command != nil && x.Command.Name != "" {
					u = x
				}
			}
			if u == nil {
				t.Fatalf("no command unit in %+v", d.Trace.Units)
			}
			var got []string
			for _, f := range u.Code {
				got = append(got, f.Real)
			}
			for _, want := range c.code {
				if p := filepath.Join(w.project, want); !slices.Contains(got, p) {
					t.Errorf("code %v lacks %s", got, p)
				}
			}
			switch {
			case c.unseen == "" && u.CodeUnseen != "":
				t.Errorf("unseen %q, want every dependency seen", u.CodeUnseen)
			case c.unseen != "" && !strings.Contains(u.CodeUnseen, c.unseen):
				t.Errorf("unseen %q, want it to say %q", u.CodeUnseen, c.unseen)
			}
			call := d.Trace.call
			if (call.UnseenDependency() != "") != (c.unseen != "") {
				t.Errorf("Call.UnseenDependency() = %q", call.UnseenDependency())
			}
		})
	}
}
