// Package shell turns a bash command line into every simple command it
// would run, so that a policy can judge each one on its own.
//
// # What Analyze reports
//
// Analyze parses the line with mvdan.cc/sh in bash mode; a line that is not
// valid bash yields a *ParseError with the line and column of the fault.
// Otherwise it returns one Command per simple command, in source order,
// wherever the command is written: in lists, pipelines, subshells and
// blocks; in command and process substitutions (including those inside
// arithmetic, parameter expansions such as ${x:-$(cmd)}, [[ ]] and (( ))
// operands, case words and patterns, for-loop words, array elements,
// declaration values, redirection targets and unquoted heredoc bodies); in
// if, while, until, for, select and case bodies; in coproc, time and !
// statements; and in function bodies, which are reported whether or not the
// function is called. A substitution's commands come before the command
// whose word contains it.
//
// Nothing is dropped silently: [[ ]], (( )), let and the declaration
// builtins (export, declare, local, readonly, typeset) are reported under
// the names "[[", "((", "let" and the builtin's name. A statement that runs
// no program, because it only assigns variables or only redirects, is
// reported with an empty Name; so are the redirections of a compound
// command and of a command that starts a nested shell.
//
// # Words
//
// Each word is expanded as bash would expand it where that can be known
// statically: quotes and backslashes are removed, $'…' strings are decoded,
// braces are expanded ({a,b} gives two words, with a cap on the total), a
// leading ~ (and one after = or : in assignments and assignment-like words)
// becomes the home directory, and $HOME, $PWD and the variables of
// Options.Env are substituted, with field splitting when unquoted. Anything
// else — an unknown variable, a parameter operator, $(…), `…`, $((…)),
// <(…), ~user, xargs input, find's {} — makes the word dynamic: it is then
// kept as one word in its source text and flagged in ArgDynamic. Glob
// patterns stay literal and are not dynamic.
//
// A known value is only trusted while nothing in the line may change it.
// Any assignment to the variable anywhere in the line, and builtins such as
// read, unset, printf -v or getopts that name it, make it unknown; eval,
// source, trap, declare -n or -i, arithmetic on variables and a program
// name that is not static make every variable unknown.
//
// # Program names
//
// Name is the program word after expansion. An absolute path into a system
// bin directory (/bin, /usr/bin, /sbin, /usr/sbin, /usr/local/bin,
// /usr/local/sbin, /opt/homebrew/bin) is reduced to its base name; any
// other word containing a slash is kept as a cleaned path that still
// contains a slash. A program word that is dynamic or a glob pattern sets
// NameDynamic and adds a Problem.
//
// # Wrappers and nested shells
//
// Wrappers are seen through and recorded in Wrappers: sudo, doas, env,
// timeout, nice, ionice, nohup, time, command, builtin, exec, stdbuf,
// chrt, taskset, setsid, unbuffer, busybox, xargs, find -exec (and
// -execdir, -ok, -okdir) and watch. Their options are parsed with the
// option tables of the real programs; an option that is not known, or a
// word whose expansion might be an option or might be several words, makes
// the wrapped program unknowable, so the wrapper is reported with
// NameDynamic and a Problem. The wrapper is reported on its own when it
// runs no command (sudo -s, env, command -v, exec with only redirections).
//
// The string of sh -c (and bash, zsh, dash, ksh, ash, mksh, rbash, fish
// and busybox sh, with combined flags such as -lc), su -c, eval, watch, a
// trap action, an alias definition and a mapfile -C callback is parsed as
// bash and analyzed in turn; so is a script that a shell, source or . reads
// from standard input when that is a static heredoc or here-string, or the
// static output of echo, printf or cat piped into it. Its commands carry
// the position of the string in the top-level line (for piped text, that of
// the command reading it). If the string is dynamic or does not parse, the
// shell or eval is reported itself together with a Problem.
//
// # Arithmetic
//
// Text that reaches bash's arithmetic evaluation is code, quoted or not:
// bash expands it once more as it evaluates it, so that a command
// substitution in an array subscript runs, and it evaluates the value of
// every variable named in it as an expression in turn. Such text is found
// in (( )), $(( )), $[ ], let, the C-style for, the operands of the
// arithmetic operators (-eq, -lt, ...) and of -v in [[ ]], subscripts and
// the offset and length of ${x:off:len} in expansions and assignments, the
// values assigned where the line gives a variable the integer attribute,
// the variable names given to builtins (read, printf -v, mapfile, unset,
// getopts, wait -p, test -v and the declaration builtins) and the value of
// the variable of an indirection ${!ref}. A command substitution in it,
// after quote removal, is analyzed as a command of the line (Via "subst");
// its output is evaluated in turn, which is a Problem. A variable it reads
// is a Problem unless it is a special parameter that only holds a number
// ($#, $?, $$, $!, RANDOM, LINENO, SECONDS and the like), a positional
// parameter outside functions, nested shells and lines that set them, or a
// variable that the line only ever assigns static values, loop words of
// static text and integers; those values are analyzed as arithmetic text
// in turn.
//
// # Working directory
//
// Dir starts as Options.Dir and follows cd and pushd with static targets
// through sequential lists and the right side of &&. It becomes unknown
// ("") after cd -, cd with a dynamic target, popd, a relative target while
// CDPATH may apply, and after anything whose effect on the directory
// cannot be known: an if, case or loop whose body may change it, either
// side of || changing it, the last element of a pipeline changing it (bash
// may run it in the shell with lastpipe), a call to a function defined in
// the line, source, a dynamic eval or program name, and a trap or alias
// that changes it. Subshells, substitutions, background jobs, nested shells
// and the other elements of a pipeline keep their changes to themselves.
// Function bodies, trap actions and alias bodies run at unknown times and
// get an unknown Dir. env -C and sudo -D set Dir for the wrapped command.
//
// # Limits
//
// The analysis costs time linear in the line. A line longer than 64 KiB,
// brackets nested more than 512 levels deep, shell strings or arithmetic
// text nested more than 100 levels deep, more than 2,000 commands, or more
// steps than a budget proportional to the line's length make Analyze
// return an error wrapping ErrTooComplex; AnalyzeContext also stops when
// its context is done. Brace expansion is limited in the words and bytes
// it may produce; past that a word is dynamic with a Problem.
//
// Analyze describes what the line may run, not what it will do at run
// time. Dir assumes every cd succeeds: after "cd /x; rm *" the rm is
// reported in /x, although bash would run it in the old directory if the
// cd failed. PATH changes, hash -p, enable and similar builtins are
// reported as commands but their effect on later lookups is not modeled;
// the caller must judge them. A caller should treat a dynamic word as
// unknown, and must not allow a line on its own say-so when Problems is
// not empty.
package shell
