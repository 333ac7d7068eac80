//! SKILL.md parsing and validation, and the names that become `skill:<skill>:<script>` commands:
//! no input may panic, and a refusal always names the file.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use synapse_shared::skill::{
    check_command_component, parse_skill_md, split_wrapper_name, validate_name,
};

const PATH: &str = "/fuzz/skill/SKILL.md";

fuzz_target!(|text: &str| {
    for folder in [Some("skill"), None] {
        match parse_skill_md(Path::new(PATH), text, folder) {
            Ok(parsed) => {
                assert!(validate_name(&parsed.meta.name).is_ok() || parsed.meta.name.len() > 64);
                assert!(text.is_char_boundary(parsed.body_offset));
            }
            Err(e) => assert!(e.to_string().starts_with(PATH), "{e}"),
        }
    }
    let _ = validate_name(text);
    if check_command_component(text).is_ok() {
        assert!(!text.contains([':', '/', ' ', '\'', '"', '$', '`', '\n']));
    }
    let _ = split_wrapper_name(text);
});
