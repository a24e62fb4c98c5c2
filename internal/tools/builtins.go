package tools

import (
	"encoding/json"
	"errors"

	"github.com/toolgate/toolgate/policy"
)

// pathAliases are the names agents give a file tool's path.
var pathAliases = map[string]string{"file_path": "path", "absolute_path": "path", "notebook_path": "path"}

func builtins() []*spec {
	return []*spec{
		{Tool: Tool{Name: policy.ToolRead, ReadOnly: true,
			Description: "Read a text file. offset is the first line (1-based), limit the number of lines; at most 256 KiB is returned and a cut is said. Binary files are refused.",
			Schema: json.RawMessage(`{"type": "object", "additionalProperties": false,
  "properties": {"path": {"type": "string", "minLength": 1}, "offset": {"type": "integer", "minimum": 1}, "limit": {"type": "integer", "minimum": 1}},
  "required": ["path"]}`)},
			aliases: pathAliases, run: runRead},
		{Tool: Tool{Name: policy.ToolWrite,
			Description: "Create or overwrite a file with content, creating parent directories as needed.",
			Schema: json.RawMessage(`{"type": "object", "additionalProperties": false,
  "properties": {"path": {"type": "string", "minLength": 1}, "content": {"type": "string"}},
  "required": ["path", "content"]}`)},
			aliases: pathAliases, run: runWrite},
		{Tool: Tool{Name: policy.ToolEdit,
			Description: "Replace old_string by new_string in a file. old_string must occur exactly once unless replace_all is true. edits gives several replacements, made in order; either all apply or the file is unchanged.",
			Schema: json.RawMessage(`{"type": "object", "additionalProperties": false,
  "properties": {"path": {"type": "string", "minLength": 1}, "old_string": {"type": "string", "minLength": 1}, "new_string": {"type": "string"}, "replace_all": {"type": "boolean"},
    "edits": {"type": "array", "minItems": 1, "items": {"type": "object", "additionalProperties": false,
      "properties": {"old_string": {"type": "string", "minLength": 1}, "new_string": {"type": "string"}, "replace_all": {"type": "boolean"}},
      "required": ["old_string", "new_string"]}}},
  "required": ["path"]}`)},
			aliases: pathAliases, run: runEdit, check: checkEdit},
		{Tool: Tool{Name: policy.ToolList, ReadOnly: true,
			Description: "List a directory (default the working directory); with pattern, the files below it whose relative path matches the glob (** across directories). At most 1000 entries.",
			Schema: json.RawMessage(`{"type": "object", "additionalProperties": false,
  "properties": {"path": {"type": "string", "minLength": 1}, "pattern": {"type": "string", "minLength": 1}}}`)},
			aliases: map[string]string{"dir_path": "path", "directory": "path", "glob": "pattern"}, run: runList},
		{Tool: Tool{Name: policy.ToolSearch, ReadOnly: true,
			Description: "Search file contents for a regular expression (Go syntax) below path, honouring .gitignore and skipping .git and binary files. glob filters file names. Prints path:line:text, at most limit matches (default 500).",
			Schema: json.RawMessage(`{"type": "object", "additionalProperties": false,
  "properties": {"pattern": {"type": "string", "minLength": 1}, "path": {"type": "string", "minLength": 1}, "glob": {"type": "string", "minLength": 1},
    "ignore_case": {"type": "boolean"}, "limit": {"type": "integer", "minimum": 1, "maximum": 5000}},
  "required": ["pattern"]}`)},
			aliases: map[string]string{"query": "pattern", "regex": "pattern", "dir_path": "path", "directory": "path", "include": "glob"}, run: runSearch},
		{Tool: Tool{Name: policy.ToolPatch,
			Description: "Apply a patch: a unified diff (---/+++ headers, @@ hunks) or a '*** Begin Patch' envelope (*** Add File / *** Update File / *** Delete File / *** Move to). Either every file changes or none does.",
			Schema: json.RawMessage(`{"type": "object", "additionalProperties": false,
  "properties": {"patch": {"type": "string", "minLength": 1}},
  "required": ["patch"]}`)},
			aliases: map[string]string{"input": "patch", "diff": "patch", "command": "patch"}, run: runPatch},
		{Tool: Tool{Name: policy.ToolFetch, ReadOnly: true,
			Description: "Fetch an http or https URL; every redirect is checked by the gate.",
			Schema: json.RawMessage(`{"type": "object", "additionalProperties": false,
  "properties": {"url": {"type": "string", "minLength": 1}, "prompt": {"type": "string"}},
  "required": ["url"]}`)},
			run: runFetchDirect},
		{Tool: Tool{Name: policy.ToolShell,
			Description: "Run a shell command line in the workspace (workdir: a directory inside it).",
			Schema: json.RawMessage(`{"type": "object", "additionalProperties": false,
  "properties": {"command": {"type": "string", "minLength": 1}, "workdir": {"type": "string", "minLength": 1}, "description": {"type": "string"}},
  "required": ["command"]}`)},
			aliases: map[string]string{"cmd": "command", "directory": "workdir", "cwd": "workdir", "dir_path": "workdir"}, run: runShell},
	}
}

// checkEdit requires one of the two forms of an edit: old_string and
// new_string, or edits.
func checkEdit(args map[string]any) error {
	_, hasOld := args["old_string"]
	_, hasNew := args["new_string"]
	_, hasEdits := args["edits"]
	switch {
	case hasEdits && (hasOld || hasNew):
		return errors.New("edit: input.edits: conflicts with input.old_string/new_string: give one form")
	case hasEdits:
		return nil
	case !hasOld:
		return errors.New("edit: input.old_string: is required (or give edits)")
	case !hasNew:
		return errors.New("edit: input.new_string: is required")
	}
	return nil
}
