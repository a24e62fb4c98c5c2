package engine

import (
	"fmt"
	"maps"
	"sync"

	"github.com/toolgate/toolgate/internal/argschema"
	"github.com/toolgate/toolgate/policy"
)

// toolSchemas are the argument schemas of the canonical tools (JSON Schema
// 2020-12). Fields agents add that the gate does not judge are allowed;
// fields it judges must have the right type, and at least one of a tool's
// path, command or URL fields must be present.
var toolSchemas = map[policy.Tool]string{
	policy.ToolShell: `{
	  "type": "object",
	  "properties": {
	    "command": {"$ref": "#/$defs/cmd"}, "cmd": {"$ref": "#/$defs/cmd"},
	    "directory": {"type": "string"}, "workdir": {"type": "string"}, "cwd": {"type": "string"}, "dir_path": {"type": "string"},
	    "description": {"type": "string"}, "timeout": {"type": "number"}, "run_in_background": {"type": "boolean"}
	  },
	  "anyOf": [{"required": ["command"]}, {"required": ["cmd"]}],
	  "$defs": {"cmd": {"oneOf": [{"type": "string", "minLength": 1}, {"type": "array", "minItems": 1, "items": {"type": "string"}}]}}
	}`,
	policy.ToolRead: `{
	  "type": "object",
	  "properties": {"file_path": {"type": "string"}, "path": {"type": "string"}, "absolute_path": {"type": "string"},
	    "notebook_path": {"type": "string"}, "offset": {"type": "number"}, "limit": {"type": "number"}},
	  "anyOf": [{"required": ["file_path"]}, {"required": ["path"]}, {"required": ["absolute_path"]}, {"required": ["notebook_path"]}]
	}`,
	policy.ToolWrite: `{
	  "type": "object",
	  "properties": {"file_path": {"type": "string"}, "path": {"type": "string"}, "absolute_path": {"type": "string"}, "content": {"type": "string"}},
	  "anyOf": [{"required": ["file_path"]}, {"required": ["path"]}, {"required": ["absolute_path"]}]
	}`,
	policy.ToolEdit: `{
	  "type": "object",
	  "properties": {"file_path": {"type": "string"}, "path": {"type": "string"}, "absolute_path": {"type": "string"},
	    "notebook_path": {"type": "string"}, "old_string": {"type": "string"}, "new_string": {"type": "string"},
	    "replace_all": {"type": "boolean"}, "edits": {"type": "array"}},
	  "anyOf": [{"required": ["file_path"]}, {"required": ["path"]}, {"required": ["absolute_path"]}, {"required": ["notebook_path"]}]
	}`,
	policy.ToolPatch: `{
	  "type": "object",
	  "properties": {"patch": {"type": "string"}, "input": {"type": "string"}, "diff": {"type": "string"}, "command": {"type": "string"}},
	  "anyOf": [{"required": ["patch"]}, {"required": ["input"]}, {"required": ["diff"]}, {"required": ["command"]}]
	}`,
	policy.ToolList: `{
	  "type": "object",
	  "properties": {"path": {"type": "string"}, "dir_path": {"type": "string"}, "directory": {"type": "string"},
	    "pattern": {"type": "string"}, "glob": {"type": "string"}, "ignore": {"type": "array"}}
	}`,
	policy.ToolSearch: `{
	  "type": "object",
	  "properties": {"pattern": {"type": "string"}, "query": {"type": "string"}, "regex": {"type": "string"},
	    "path": {"type": "string"}, "dir_path": {"type": "string"}, "directory": {"type": "string"},
	    "glob": {"type": "string"}, "include": {"type": "string"}},
	  "anyOf": [{"required": ["pattern"]}, {"required": ["query"]}, {"required": ["regex"]}]
	}`,
	policy.ToolFetch: `{
	  "type": "object",
	  "properties": {"url": {"type": "string", "minLength": 1}, "prompt": {"type": "string"}},
	  "required": ["url"]
	}`,
	policy.ToolWebSearch: `{
	  "type": "object",
	  "properties": {"query": {"type": "string", "minLength": 1}},
	  "required": ["query"]
	}`,
	policy.ToolMCP: `{"type": "object"}`,

	policy.ToolAgentState: `{"type": "object"}`,
	policy.ToolSchedule:   `{"type": "object"}`,
	policy.ToolSkill:      `{"type": "object"}`,
	policy.ToolPlanExit:   `{"type": "object"}`,
}

// ArgumentSchemas returns the JSON Schema (draft 2020-12) the arguments
// of each canonical tool are checked against, by tool: a copy.
func ArgumentSchemas() map[policy.Tool]string { return maps.Clone(toolSchemas) }

// compiledSchemas holds each tool's schema, compiled at its first use,
// not when the program starts, and one tool's alone: a command that checks
// one call (an agent client's hook) pays for the schema of its tool only.
// A schema that does not compile is a programming error caught by the
// tests: every call of its tool panics with its error.
var compiledSchemas = func() map[policy.Tool]func() *argschema.Schema {
	out := make(map[policy.Tool]func() *argschema.Schema, len(toolSchemas))
	for tool, src := range toolSchemas {
		out[tool] = sync.OnceValue(func() *argschema.Schema { return compileSchema(tool, src) })
	}
	return out
}()

// compileSchema compiles the schema src of tool.
func compileSchema(tool policy.Tool, src string) *argschema.Schema {
	s, err := argschema.Compile([]byte(src))
	if err != nil {
		panic(fmt.Sprintf("engine: schema of %s: %v", tool, err))
	}
	return s
}

// validateSchema checks a tool's arguments against its schema. The error
// names the offending field: "input.command: got number, want string".
func validateSchema(tool policy.Tool, in map[string]any) error {
	schema, ok := compiledSchemas[tool]
	if !ok {
		return fmt.Errorf("tool %s has no argument schema", tool)
	}
	return schema().Validate(in)
}
