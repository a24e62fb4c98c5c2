package risk

import (
	"strings"
	"sync"
)

// psCommon are the common parameters every cmdlet takes, as name=alias
// lists; a trailing = marks a parameter that takes a value.
const psCommon = "verbose|vb debug|db erroraction=|ea warningaction=|wa informationaction=|infa progressaction=|proga " +
	"errorvariable=|ev warningvariable=|wv informationvariable=|iv outvariable=|ov outbuffer=|ob pipelinevariable=|pv"

// psShould are the parameters of a cmdlet that changes things.
const psShould = " whatif|wi confirm|cf"

// psPathParams are -Path and -LiteralPath with its aliases.
const psPathParams = "path= literalpath=|pspath|lp "

// psParamSpec lists, for every cmdlet whose effects PowerShellCommand
// knows, the parameters it takes: "name=|alias|alias", with a = after the
// name of one that takes a value. A parameter not listed makes the command
// unknown: it may change what the cmdlet does (-Credential, -Stream on a
// write, -FromSession). Parameters the gate leaves out on purpose are not
// listed, so that a line using them asks. mkdir is left out: outside
// Windows it is the native program (mkdir -p).
var psParamSpec = map[string]string{
	"get-content": psPathParams + "readcount= totalcount=|first|head tail=|last filter= include= exclude= force " +
		"delimiter= wait raw encoding= asbytestream stream=",
	"select-string": psPathParams + "pattern= inputobject= simplematch casesensitive quiet list noemphasis include= " +
		"exclude= notmatch allmatches encoding= context= raw culture=",
	"test-path":     psPathParams + "filter= include= exclude= pathtype=|type isvalid olderthan= newerthan=",
	"get-item":      psPathParams + "filter= include= exclude= force stream=",
	"resolve-path":  psPathParams + "relative relativebasepath= force",
	"get-childitem": psPathParams + "filter= include= exclude= recurse|s depth= force name attributes= followsymlink directory|ad|d file|af hidden|ah|h readonly|ar system|as",
	"set-content":   psPathParams + "value= passthru filter= include= exclude= force encoding= nonewline asbytestream" + psShould,
	"add-content":   psPathParams + "value= passthru filter= include= exclude= force encoding= nonewline asbytestream" + psShould,
	"clear-content": psPathParams + "filter= include= exclude= force" + psShould,
	"new-item":      "path= name= itemtype=|type value=|target force" + psShould,
	"rename-item":   psPathParams + "newname= force passthru" + psShould,
	"out-file":      "filepath=|path literalpath=|pspath|lp encoding= append force noclobber|nooverwrite width= nonewline inputobject=" + psShould,
	"tee-object":    "filepath=|path literalpath=|pspath|lp append encoding= inputobject= variable=",
	"copy-item":     psPathParams + "destination= container recurse force filter= include= exclude= passthru" + psShould,
	"move-item":     psPathParams + "destination= force filter= include= exclude= passthru" + psShould,
	"remove-item":   psPathParams + "filter= include= exclude= recurse force" + psShould,
	"set-location":  psPathParams + "passthru stackname=",
	"push-location": psPathParams + "passthru stackname=",
	"pop-location":  "passthru stackname=",
	"get-location":  "psprovider= psdrive= stack stackname=",
	"foreach-object": "process= begin= end= remainingscripts= membername= argumentlist=|args inputobject= parallel= " +
		"throttlelimit= timeoutseconds= asjob usenewrunspace" + psShould,
	"where-object": "property= value= filterscript= inputobject= eq|ieq ceq ne|ine cne gt|igt cgt ge|ige cge lt|ilt clt " +
		"le|ile cle like|ilike clike notlike|inotlike cnotlike match|imatch cmatch notmatch|inotmatch cnotmatch " +
		"contains|icontains ccontains notcontains|inotcontains cnotcontains in|iin cin notin|inotin cnotin is isnot not",
	"write-output":     "inputobject= noenumerate",
	"write-host":       "object=|msg|message separator= nonewline foregroundcolor= backgroundcolor=",
	"select-object":    "property= excludeproperty= expandproperty= unique casesensitive last= first= skip= skiplast= wait index= skipindex= inputobject=",
	"sort-object":      "property= descending unique casesensitive culture= stable top= bottom= inputobject=",
	"measure-object":   "property= sum average maximum minimum standarddeviation allstats line word character ignorewhitespace inputobject=",
	"format-table":     "property= autosize|auto hidetableheaders wrap groupby= view= showerror displayerror force expand= inputobject= repeatheader",
	"format-list":      "property= groupby= view= showerror displayerror force expand= inputobject=",
	"out-string":       "stream width= nonewline inputobject=",
	"out-null":         "inputobject=",
	"get-date":         "date= year= month= day= hour= minute= second= millisecond= displayhint= format= uformat= asutc unixtimeseconds=|unixtime",
	"get-command":      "name= verb= noun= module= commandtype=|type totalcount= syntax showcommandinfo all listimported parametername= parametertype= usefuzzymatching",
	"get-alias":        "name= exclude= scope= definition=",
	"get-help":         "name= path= category= component= functionality= role= full detailed examples parameter=",
	"get-process":      "name=|processname id=|pid inputobject= includeusername module fileversioninfo|fv",
	"get-service":      "name=|servicename displayname= include= exclude= inputobject= dependentservices|ds requiredservices|sdo|servicesdependedon",
	"convertto-json":   "inputobject= depth= compress enumsasstrings asarray escapehandling=",
	"convertfrom-json": "inputobject= depth= ashashtable noenumerate datekind=",
	"clear-host":       "",
	"get-variable":     "name= valueonly include= exclude= scope=",
	"get-filehash":     psPathParams + "inputstream= algorithm=",
	"join-path":        "path= childpath= additionalchildpath= resolve",
	"split-path":       psPathParams + "parent leaf leafbase extension qualifier noqualifier isabsolute resolve",
	"import-csv":       psPathParams + "delimiter= useculture header= encoding=",
	"import-clixml":    psPathParams + "includetotalcount skip= first=",
	"format-hex":       psPathParams + "inputobject= encoding= count= offset= raw",
	"get-unique":       "inputobject= asstring ontype caseinsensitive",
}

// psCmdlet is what psParamSpec says of one cmdlet.
type psCmdlet struct {
	canon map[string]string // a parameter name or alias -> the parameter
	value map[string]bool   // parameters that take a value
}

// psCmdlets returns the cmdlets of psParamSpec by name. The table is built
// at first use, not when the program starts.
var psCmdlets = sync.OnceValue(func() map[string]*psCmdlet {
	out := make(map[string]*psCmdlet, len(psParamSpec))
	for name, spec := range psParamSpec {
		c := &psCmdlet{canon: map[string]string{}, value: map[string]bool{}}
		for _, f := range strings.Fields(spec + " " + psCommon) {
			names := strings.Split(f, "|")
			p, takes := strings.CutSuffix(names[0], "=")
			c.value[p] = takes
			c.canon[p] = p
			for _, a := range names[1:] {
				c.canon[a] = p
			}
		}
		out[name] = c
	}
	return out
})

// param returns the parameter that name (lower-case, without the dash)
// stands for: the parameter or alias of that name, or the one parameter
// whose name or alias starts with it, as PowerShell binds an abbreviation.
// It reports false for a name that fits no parameter or several.
func (c *psCmdlet) param(name string) (string, bool) {
	if p, ok := c.canon[name]; ok {
		return p, true
	}
	found := ""
	for n, p := range c.canon {
		if !strings.HasPrefix(n, name) {
			continue
		}
		if found != "" && found != p {
			return "", false
		}
		found = p
	}
	return found, found != ""
}

// psVariableName reports whether v names a plain variable, as -OutVariable
// and its kind take it: not env:PATH or another provider's item.
func psVariableName(v string) bool {
	v = strings.TrimPrefix(v, "+")
	if v == "" {
		return false
	}
	for _, r := range v {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// PowerShellUnknownParameter returns the first parameter, as written, of
// a PowerShell command (named and with arguments as shell.AnalyzePowerShell
// gives them) that its cmdlet does not take, or "" when the cmdlet takes
// them all or is not one whose parameters the gate knows.
func PowerShellUnknownParameter(name string, args []string) string {
	own, _, _ := splitPipe(args, make([]bool, len(args)))
	c := psCmdlets()[name]
	if c == nil {
		return ""
	}
	for i := 0; i < len(own); i++ {
		a := own[i]
		if !psParamWord(a) {
			continue
		}
		pname, v, hasV := strings.Cut(a[1:], ":")
		p, ok := c.param(strings.ToLower(pname))
		if !ok {
			return "-" + pname
		}
		if strings.HasSuffix(p, "variable") {
			val := v
			if !hasV && i+1 < len(own) {
				val = own[i+1]
			}
			if !psVariableName(val) {
				return "-" + p + " " + val
			}
		}
		if c.value[p] && !hasV && i+1 < len(own) && !psParamWord(own[i+1]) {
			i++
		}
	}
	return ""
}

// psParamWord reports whether a word is a parameter name: a dash and a
// letter (-Path, -Path:x), not a negative number or a lone dash.
func psParamWord(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	c := a[1]
	return c == '_' || c == '?' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80 || c == '-'
}
