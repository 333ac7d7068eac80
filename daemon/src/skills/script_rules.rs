//! Which files under a skill's `scripts/` folder are programs (and get a `skill:*` command) and
//! which are library modules they import, decided by reading them, never by running them.
//!
//! The rule, in order:
//! 1. hidden files and folders, `__pycache__`, `node_modules`, virtualenvs, data and document
//!    files are never commands;
//! 2. Python whose top-level `if __name__ == "__main__":` block only raises (or is empty) is a
//!    library module ([`super::python_main`]);
//! 3. a file the skill's SKILL.md names (its path below `scripts/`, e.g. `office/unpack.py`) is
//!    a command: the author calls it as a program;
//! 4. `__init__.py`, `__main__.py`, `conftest.py`, `setup.py` and files whose name starts with
//!    `_` are library modules;
//! 5. Python (by extension or shebang) with a `__main__` block that runs something is a
//!    command; without one it is a library module when it imports or defines something and only
//!    that (imports, functions, classes, constants: no statement runs at the top level), with or
//!    without a `#!` line;
//! 6. any other file with a `#!` line is a command; JavaScript that exports (`module.exports`,
//!    `export`) without reading `process.argv` or checking `require.main` is a library module;
//! 7. anything else (shell, Ruby, Perl, plain Node scripts, executables) is a command.
//!
//! Nested scripts are named by their path with `.` between folders:
//! `scripts/office/unpack.py` → `skill:<skill>:office.unpack`.

use super::python_main::{MainBlock, main_block};

/// Folders below `scripts/` that hold no scripts of the skill's own.
const SKIPPED_DIRS: &[&str] = &[
    "__pycache__",
    "node_modules",
    "venv",
    ".venv",
    "env",
    "site-packages",
    "dist",
    "build",
];

/// Whether the folder `name` below `scripts/` is searched for scripts.
pub fn is_script_dir(name: &str) -> bool {
    !name.starts_with('.') && !SKIPPED_DIRS.contains(&name)
}

/// Whether a file (its path below `scripts/`, its first bytes, and — for a file longer than
/// what was read — its last bytes, where a `__main__` block usually is) is a library module
/// rather than a program. `skill_md` is the text of the skill's SKILL.md.
pub fn is_library(rel_path: &str, head: &str, tail: Option<&str>, skill_md: &str) -> bool {
    let file_name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    let ext = file_name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let python = ext == "py"
        || (ext.is_empty()
            && head
                .lines()
                .next()
                .is_some_and(|l| l.starts_with("#!") && l.contains("python")));
    let main = if python {
        match main_block(head) {
            MainBlock::Absent => tail.map_or(MainBlock::Absent, main_block),
            found => found,
        }
    } else {
        MainBlock::Absent
    };
    // A module whose `__main__` only raises ("should not be run directly") says it is no
    // program, whatever else points at it.
    if main == MainBlock::OnlyRaises {
        return true;
    }
    if mentioned(rel_path, skill_md) {
        return false;
    }
    if matches!(
        file_name,
        "__init__.py" | "__main__.py" | "conftest.py" | "setup.py"
    ) || file_name.starts_with('_')
    {
        return true;
    }
    if python {
        // A shebang does not make a module of definitions a program (shared helpers often
        // carry one); only a `__main__` block or top-level statements do.
        return main == MainBlock::Absent && only_defines(head);
    }
    if head.starts_with("#!") {
        return false;
    }
    match ext {
        "js" | "mjs" | "cjs" | "ts" => {
            let exports = head.contains("module.exports")
                || head.contains("exports.")
                || head.lines().any(|l| l.trim_start().starts_with("export "));
            let runs = head.contains("process.argv")
                || head.contains("require.main")
                || head.contains("import.meta.main");
            exports && !runs
        }
        _ => false,
    }
}

/// The SKILL.md names the file by its path below `scripts/` (with or without `scripts/`).
fn mentioned(rel_path: &str, skill_md: &str) -> bool {
    if rel_path.contains('/') {
        return skill_md.contains(rel_path);
    }
    skill_md.contains(&format!("scripts/{rel_path}"))
}

/// No top-level Python statement other than imports, definitions, decorators, assignments and
/// docstrings (lines inside triple-quoted strings and continuation lines are skipped).
fn only_defines(source: &str) -> bool {
    let defines_something = source.lines().any(|l| {
        ["import ", "from ", "def ", "async def ", "class "]
            .iter()
            .any(|p| l.starts_with(p))
    });
    if !defines_something {
        // Nothing to import from it (a stub, a docstring only): not a library.
        return false;
    }
    let mut in_string: Option<&str> = None;
    for line in source.lines() {
        if let Some(q) = in_string {
            if line.matches(q).count() % 2 == 1 {
                in_string = None;
            }
            continue;
        }
        for q in ["\"\"\"", "'''"] {
            if line.matches(q).count() % 2 == 1 {
                in_string = Some(q);
            }
        }
        let starts_at_top = !line.starts_with([' ', '\t']) && !line.trim().is_empty();
        if !starts_at_top {
            continue;
        }
        let t = line.trim_end();
        let defining = [
            "import ",
            "from ",
            "def ",
            "async def ",
            "class ",
            "@",
            "#",
            "\"",
            "'",
            ")",
            "]",
            "}",
            "try:",
            "except",
            "else:",
            "finally:",
            "if TYPE_CHECKING",
        ]
        .iter()
        .any(|p| t.starts_with(p));
        let assignment = t.split_once('=').is_some_and(|(lhs, rhs)| {
            !rhs.starts_with('=')
                && lhs.trim().chars().all(|c| {
                    c.is_alphanumeric() || matches!(c, '_' | ':' | ' ' | ',' | '[' | ']' | '.')
                })
                && !lhs.contains('(')
        });
        if !defining && !assignment {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_library_t(rel: &str, head: &str, md: &str) -> bool {
        is_library(rel, head, None, md)
    }

    #[test]
    fn programs_and_library_modules() {
        let md = "Run `python scripts/office/pack.py out.docx`.";
        assert!(is_library_t("office/__init__.py", "", md));
        assert!(is_library_t("office/helpers.py", "def f(): pass\n", md));
        assert!(!is_library_t("office/pack.py", "import x\n", md));
        assert!(!is_library_t(
            "convert.py",
            "import argparse\nif __name__ == '__main__':\n    main()\n",
            md
        ));
        assert!(!is_library_t(
            "tool.py",
            "#!/usr/bin/env python3\nprint(1)\n",
            md
        ));
        assert!(!is_library_t(
            "top.py",
            "\"\"\"Doc.\n\nmore\n\"\"\"\nimport sys\nX = 1\nprint(sys.argv)\n",
            md
        ));
        assert!(is_library_t(
            "consts.py",
            "\"\"\"Doc.\"\"\"\nimport os\nX: int = 1\nY = [\n  1,\n]\ndef f():\n    print(2)\n",
            md
        ));
        assert!(is_library_t("_common.sh", "x=1\n", md));
        assert!(!is_library_t("build.sh", "set -e\nmake\n", md));
        assert!(is_library_t("lib.js", "module.exports = { f };\n", md));
        assert!(!is_library_t("run.js", "const a = process.argv[2];\n", md));
        assert!(!is_library_t("plain.js", "console.log('hi')\n", md));
        assert!(!is_script_dir("__pycache__") && !is_script_dir(".git"));
        // A raise-only `__main__` is no program, even when named; a shebang does not make
        // a module of definitions one.
        let refuses = "class V:\n    pass\nif __name__ == '__main__':\n    raise RuntimeError('should not be run directly')\n";
        assert!(is_library_t(
            "office/validators/base.py",
            refuses,
            "scripts/office/validators/base.py"
        ));
        assert!(is_library_t(
            "utils.py",
            "#!/usr/bin/env python3\nimport os\ndef f():\n    pass\n",
            md
        ));
        assert!(is_library_t(
            "noext",
            "#!/usr/bin/python3\nimport os\nX = 1\n",
            md
        ));
        // The guard past the bytes read is found in the file's tail.
        let long = format!("import sys\n{}", "def f():\n    pass\n".repeat(3));
        assert!(!is_library(
            "big.py",
            &long,
            Some("\nif __name__ == '__main__':\n    f()\n"),
            md
        ));
        assert!(is_script_dir("office"));
    }
}
