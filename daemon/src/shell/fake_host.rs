//! [`FakeHost`]: a [`CommandHost`] without bash, for unit tests of agent commands. It has a
//! folder and an environment; a native command line is recorded and answered from a script
//! instead of run. Tests here run the built-in commands through it and assert what the model
//! would read.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use synapse_command::{AgentCommand, CommandContext, CommandHost, CommandOutput};

/// A host with a current folder and `HOME`, whose "shell" answers every line with `answer`.
pub struct FakeHost {
    pub cwd: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    /// The native command lines run so far, with the time limit each was given.
    pub ran: Vec<(String, Duration)>,
    pub answer: fn(&str) -> CommandOutput,
    /// The editor whose files the file commands use (`None`: the disk).
    pub editor: Option<synapse_command::editor_files::EditorFilesHandle>,
}

impl FakeHost {
    /// A host in `cwd`, with `HOME` set to `home`, that answers each line with its own text.
    pub fn new(cwd: &Path, home: &Path) -> Self {
        Self {
            cwd: cwd.to_path_buf(),
            env: vec![("HOME".into(), home.into())],
            ran: Vec::new(),
            answer: |line| CommandOutput::success(format!("ran: {line}\n")),
            editor: None,
        }
    }

    /// Runs `command` with `args` here, as the router would after the gate let it.
    pub async fn run(&mut self, command: &dyn AgentCommand, args: &[&str]) -> CommandOutput {
        self.run_with_stdin(command, args, None).await
    }

    /// The same with heredoc input.
    pub async fn run_with_stdin(
        &mut self,
        command: &dyn AgentCommand,
        args: &[&str],
        stdin: Option<&str>,
    ) -> CommandOutput {
        let editor = self.editor.clone();
        let mut ctx = CommandContext::new(
            self,
            stdin.map(str::to_string),
            Duration::from_secs(30),
            CancellationToken::new(),
        )
        .with_editor(editor);
        command
            .run(&mut ctx, args.iter().map(|a| a.to_string()).collect())
            .await
    }
}

impl CommandHost for FakeHost {
    fn name(&self) -> &str {
        "fake"
    }

    fn cwd(&self) -> &Path {
        &self.cwd
    }

    fn env(&self) -> &[(OsString, OsString)] {
        &self.env
    }

    fn run_native<'a>(
        &'a mut self,
        command: &'a str,
        timeout: Duration,
        _: &'a CancellationToken,
    ) -> BoxFuture<'a, CommandOutput> {
        self.ran.push((command.to_string(), timeout));
        let out = (self.answer)(command);
        Box::pin(async move { out })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::commands::{bash::BashCommand, edit, glob, job, read, write};
    use pretty_assertions::assert_eq;

    struct Dirs {
        _tmp: tempfile::TempDir,
        project: PathBuf,
        home: PathBuf,
    }

    fn dirs() -> Dirs {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Dirs {
            _tmp: tmp,
            project,
            home,
        }
    }

    #[tokio::test]
    async fn write_edit_and_read_work_on_the_hosts_folder_without_a_shell() {
        let d = dirs();
        let mut host = FakeHost::new(&d.project, &d.home);
        let out = host
            .run_with_stdin(
                &write::WriteCommand,
                &["src/notes.txt"],
                Some("alpha\nbeta\n"),
            )
            .await;
        assert_eq!(out.exit_code, 0, "{}", out.text);
        assert_eq!(
            std::fs::read_to_string(d.project.join("src/notes.txt")).unwrap(),
            "alpha\nbeta\n"
        );
        let out = host
            .run(&edit::EditCommand, &["src/notes.txt", "beta", "gamma"])
            .await;
        assert_eq!(out.exit_code, 0, "{}", out.text);
        let out = host.run(&read::ReadCommand, &["src/notes.txt"]).await;
        assert_eq!(out.exit_code, 0, "{}", out.text);
        assert!(out.text.contains("1\talpha"), "{}", out.text);
        assert!(out.text.contains("2\tgamma"), "{}", out.text);
        assert!(host.ran.is_empty(), "no shell line ran: {:?}", host.ran);

        // `~` is the host's HOME.
        let out = host
            .run(&write::WriteCommand, &["~/todo.md", "- ship it"])
            .await;
        assert_eq!(out.exit_code, 0, "{}", out.text);
        assert!(d.home.join("todo.md").exists());
    }

    #[tokio::test]
    async fn an_edit_whose_text_is_absent_changes_nothing_and_says_so() {
        let d = dirs();
        std::fs::write(d.project.join("a.txt"), "one\n").unwrap();
        let mut host = FakeHost::new(&d.project, &d.home);
        let out = host
            .run(&edit::EditCommand, &["a.txt", "two", "three"])
            .await;
        assert_ne!(out.exit_code, 0);
        assert!(out.text.contains("a.txt"), "names the file: {}", out.text);
        assert_eq!(
            std::fs::read_to_string(d.project.join("a.txt")).unwrap(),
            "one\n"
        );
    }

    #[tokio::test]
    async fn glob_lists_the_hosts_files_relative_to_its_folder() {
        let d = dirs();
        std::fs::create_dir_all(d.project.join("src")).unwrap();
        std::fs::write(d.project.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(d.project.join("README.md"), "# r\n").unwrap();
        let mut host = FakeHost::new(&d.project, &d.home);
        let out = host.run(&glob::GlobCommand, &["**/*.rs"]).await;
        assert_eq!(out.exit_code, 0, "{}", out.text);
        assert_eq!(out.text.trim(), "src/main.rs");
    }

    #[tokio::test]
    async fn bash_hands_its_line_to_the_hosts_shell_with_its_own_timeout() {
        let d = dirs();
        let mut host = FakeHost::new(&d.project, &d.home);
        let out = host
            .run(&BashCommand, &["--timeout", "5", "make test"])
            .await;
        assert_eq!(out.text, "ran: make test\n");
        assert_eq!(
            host.ran,
            vec![("make test".to_string(), Duration::from_secs(5))]
        );
        let out = host.run(&BashCommand, &["--timeout", "soon", "x"]).await;
        assert_eq!(out.exit_code, synapse_command::EXIT_USAGE);
        assert_eq!(host.ran.len(), 1, "a usage error runs nothing");
    }

    #[tokio::test]
    async fn job_without_a_sessions_shell_says_why_instead_of_failing_silently() {
        let d = dirs();
        let mut host = FakeHost::new(&d.project, &d.home);
        let out = host.run(&job::JobCommand, &["list"]).await;
        assert_eq!(out.exit_code, 1);
        assert!(out.text.contains("session's own shell"), "{}", out.text);
    }
}
