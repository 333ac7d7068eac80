//! Which files under a skill's `scripts/` folder are programs (and get a `skill:*` command) and
//! which are library modules they import, decided by reading them, never by running them.
//!
//! The rule, in order:
//! 1. hidden files and folders, `__pycache__`, `node_modules`, virtualenvs, data and document
//!    files are never commands;
//! 2. a file the skill's SKILL.md names (its path below `scripts/`, e.g. `office/unpack.py`) is
//!    a command: the author calls it as a program;
//! 3. `__init__.py`, `__main__.py`, `conftest.py`, `setup.py` and files whose name starts with
//!    `_` are library modules;
//! 4. a file with a `#!` line is a command;
//! 5. Python that imports or defines something and only that (imports, functions, classes,
//!    constants: no statement runs at the top level) and has no `if __name__ == "__main__"` guard is a library module,
//!    and so is JavaScript that exports (`module.exports`, `export`) without reading
//!    `process.argv` or checking `require.main`;
//! 6. anything else (shell, Ruby, Perl, plain Node scripts, executables) is a command.
//!
//! Nested scripts are named by their path with `.` between folders:
//! `scripts/office/unpack.py` → `skill:<skill>:office.unpack`.

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

/// Whether a file (its path below `scripts/`, its first bytes) is a library module rather than
/// a program. `skill_md` is the text of the skill's SKILL.md.
pub fn is_library(rel_path: &str, head: &str, skill_md: &str) -> bool {
    if mentioned(rel_path, skill_md) {
        return false;
    }
    let file_name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    if matches!(
        file_name,
        "__init__.py" | "__main__.py" | "conftest.py" | "setup.py"
    ) || file_name.starts_with('_')
    {
        return true;
    }
    if head.starts_with("#!") {
        return false;
    }
    let ext = file_name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "py" => !has_python_main_guard(head) && only_defines(head),
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

fn has_python_main_guard(source: &str) -> bool {
    source.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("if __name__") && t.contains("__main__")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_and_library_modules() {
        let md = "Run `python scripts/office/pack.py out.docx`.";
        assert!(is_library("office/__init__.py", "", md));
        assert!(is_library("office/helpers.py", "def f(): pass\n", md));
        assert!(!is_library("office/pack.py", "import x\n", md));
        assert!(!is_library(
            "convert.py",
            "import argparse\nif __name__ == '__main__':\n    main()\n",
            md
        ));
        assert!(!is_library(
            "tool.py",
            "#!/usr/bin/env python3\nprint(1)\n",
            md
        ));
        assert!(!is_library(
            "top.py",
            "\"\"\"Doc.\n\nmore\n\"\"\"\nimport sys\nX = 1\nprint(sys.argv)\n",
            md
        ));
        assert!(is_library(
            "consts.py",
            "\"\"\"Doc.\"\"\"\nimport os\nX: int = 1\nY = [\n  1,\n]\ndef f():\n    print(2)\n",
            md
        ));
        assert!(is_library("_common.sh", "x=1\n", md));
        assert!(!is_library("build.sh", "set -e\nmake\n", md));
        assert!(is_library("lib.js", "module.exports = { f };\n", md));
        assert!(!is_library("run.js", "const a = process.argv[2];\n", md));
        assert!(!is_library("plain.js", "console.log('hi')\n", md));
        assert!(!is_script_dir("__pycache__") && !is_script_dir(".git"));
        assert!(is_script_dir("office"));
    }
}
