use super::*;
use pretty_assertions::assert_eq;

#[test]
fn python_module_docstring_with_sections() {
    let src = r#"#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Extract text from PDF files.

Usage:
    extract_text.py <pdf_path> [--pages <list>]

Parameters:
    pdf_path: the PDF to read
"""
import sys
"#;
    let d = parse(src, DocStyle::Python, "extract_text.py");
    assert_eq!(d.summary.as_deref(), Some("Extract text from PDF files."));
    assert_eq!(d.usage_args.as_deref(), Some("<pdf_path> [--pages <list>]"));
    assert!(
        d.full
            .starts_with("Extract text from PDF files.\n\nUsage:\n    extract_text.py"),
        "{}",
        d.full
    );
    assert!(d.full.contains("pdf_path: the PDF to read"));
}

#[test]
fn python_without_docstring_falls_back_to_comments() {
    let d = parse(
        "#!/usr/bin/python3\n# Counts words.\n# Usage: python3 wc.py FILE\nimport x\n",
        DocStyle::Python,
        "wc.py",
    );
    assert_eq!(d.summary.as_deref(), Some("Counts words."));
    assert_eq!(d.usage_args.as_deref(), Some("FILE"));
}

#[test]
fn shell_hash_block() {
    let src = "#!/bin/bash\n#\n# Greets someone\n#\n# Usage: greet.sh NAME [--loud]\n# Examples:\n#   greet.sh bob\n\nset -e\n# not doc\n";
    let d = parse(src, DocStyle::Hash, "greet.sh");
    assert_eq!(d.summary.as_deref(), Some("Greets someone."));
    assert_eq!(d.usage_args.as_deref(), Some("NAME [--loud]"));
    assert!(d.full.contains("Examples:\n  greet.sh bob"), "{:?}", d.full);
    assert!(!d.full.contains("not doc"));
}

#[test]
fn jsdoc_and_line_comments() {
    let src = "#!/usr/bin/env node\n/**\n * Lists open ports.\n *\n * @usage ports.js [--json]\n * @param {boolean} json print JSON\n */\nconsole.log(1)\n";
    let d = parse(src, DocStyle::Slash, "ports.js");
    assert_eq!(d.summary.as_deref(), Some("Lists open ports."));
    assert_eq!(d.usage_args.as_deref(), Some("[--json]"));
    assert!(d.full.contains("@param {boolean} json print JSON"));

    let d = parse(
        "// Says hi\n// Usage: node hi.js WHO\nlet a\n",
        DocStyle::Slash,
        "hi.js",
    );
    assert_eq!(d.summary.as_deref(), Some("Says hi."));
    assert_eq!(d.usage_args.as_deref(), Some("WHO"));
}

#[test]
fn description_section_and_no_doc() {
    let d = parse(
        "\"\"\"\nDescription: Does a thing\n\"\"\"\n",
        DocStyle::Python,
        "t.py",
    );
    assert_eq!(d.summary.as_deref(), Some("Does a thing."));
    let d = parse("echo hi\n", DocStyle::Hash, "t.sh");
    assert_eq!(d, ScriptDoc::default());
}

#[test]
fn wrapped_paragraphs_headings_and_argparse_before_comments() {
    let wrapped = "\"\"\"Resolve the folder a plan keeps its\nbriefs in. Creates it when missing.\n\nMore.\n\"\"\"\n";
    let d = parse(wrapped, DocStyle::Python, "ws.py");
    assert_eq!(
        d.summary.as_deref(),
        Some("Resolve the folder a plan keeps its briefs in.")
    );
    let heading =
        "\"\"\"\nSpreadsheet Formula Refresher\nRecomputes every formula of a workbook.\n\"\"\"\n";
    let d = parse(heading, DocStyle::Python, "r.py");
    assert_eq!(d.summary.as_deref(), Some("Spreadsheet Formula Refresher."));
    // Python: the parser's description beats a leading comment (which is often a note).
    let src = "#!/usr/bin/env python3\n# Keep in sync with the other copy\nimport argparse\np = argparse.ArgumentParser(description=\"Merge CSV files on a key (e.g. an id column). Fast.\")\n";
    let d = parse(src, DocStyle::Python, "merge.py");
    assert_eq!(
        d.summary.as_deref(),
        Some("Merge CSV files on a key (e.g. an id column).")
    );
    assert!(d.own_help);

    // A module's "Usage:" for importers is no command line.
    let module = "\"\"\"\nRuns the converter where sockets are blocked.\n\nUsage:\n    from office.convert import run\n\n    result = run([\"--headless\"])\n\"\"\"\n";
    let d = parse(module, DocStyle::Python, "convert.py");
    assert_eq!(d.usage_args, None);
    assert_eq!(
        d.summary.as_deref(),
        Some("Runs the converter where sockets are blocked.")
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of Python, shell and JavaScript, halves of strings and calls, and text outside
    /// ASCII, joined in any order: what the readers must answer without a panic.
    fn source() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "\"\"\"",
            "'''",
            "\"",
            "'",
            "(",
            ")",
            "\n",
            "\r\n",
            "    ",
            "#",
            "# Usage: x.py <a>\n",
            "if __name__ == \"__main__\":",
            "raise RuntimeError(",
            "main()",
            "pass",
            "argparse.ArgumentParser(",
            "description=",
            "usage=",
            "DESC = ",
            "DESC",
            "textwrap.dedent(",
            "@click.command(",
            "help=",
            "def f():",
            "import os",
            "é",
            "résumé",
            "日本",
            "\\",
            ",",
            "=",
            ". ",
            "Usage:",
            "%(prog)s",
            "//",
            "/**",
            "*/",
            "module.exports",
            "#!/usr/bin/env python3\n",
        ]);
        prop::collection::vec(piece, 0..60).prop_map(|p| p.concat())
    }

    proptest! {
        #[test]
        fn any_source_is_read_without_a_panic(src in source()) {
            for style in [DocStyle::Python, DocStyle::Hash, DocStyle::Slash] {
                let d = parse(&src, style, "x.py");
                if let Some(s) = d.summary {
                    prop_assert!(s.chars().count() <= 201);
                }
            }
            let _ = crate::skills::script_rules::is_library("x.py", &src, Some(&src), "");
            let _ = crate::skills::python_main::main_block(&src);
        }
    }
}
