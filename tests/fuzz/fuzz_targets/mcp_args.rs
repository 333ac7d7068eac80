//! The MCP argument mapper: a tool's input schema (as the server sent it), a command line and
//! stdin become `tools/call` arguments or a usage error; help texts render from any schema; and
//! `${VAR}` expansion in config strings. No input may panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use synapse_mcp::args::map_argv;
use synapse_mcp::expand::expand;
use synapse_mcp::schema::ToolSpec;

fuzz_target!(|input: (&str, Vec<String>, Option<&[u8]>)| {
    let (schema, argv, stdin) = input;
    let schema: Map<String, Value> = serde_json::from_str(schema).unwrap_or_default();
    let spec = ToolSpec::new("mcp:fuzz:tool", Some("A tool."), &schema);
    let _ = (
        spec.signature(),
        spec.short_help(),
        spec.full_help(),
        spec.example(),
    );
    if let Ok(arguments) = map_argv(&spec, &argv, stdin) {
        for p in spec.params.iter().filter(|p| p.required) {
            assert!(
                arguments.contains_key(&p.name),
                "required {} missing",
                p.name
            );
        }
    }
    for word in &argv {
        let _ = expand(word, &|name| {
            (name == "HOME").then(|| "/home/u".to_string())
        });
    }
});
