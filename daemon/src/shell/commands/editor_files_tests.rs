//! `read`, `write` and `edit` with an editor attached (a fake one holding buffers): inside the
//! session's folder they go through it, outside it they use the disk, the editor's error is the
//! command's, and an editor that is gone leaves the work to the disk with a notice.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use synapse_command::editor_files::{EditorError, EditorFiles, EditorFilesHandle};

use crate::shell::commands::edit::EditCommand;
use crate::shell::commands::read::ReadCommand;
use crate::shell::commands::write::WriteCommand;
use crate::shell::fake_host::FakeHost;

#[derive(Default)]
struct FakeEditor {
    buffers: Mutex<HashMap<PathBuf, String>>,
    writes: Mutex<Vec<(PathBuf, String)>>,
    /// Every request answers "gone" (the editor left).
    gone: bool,
}

impl EditorFiles for FakeEditor {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, EditorError>> {
        Box::pin(async move {
            if self.gone {
                return Err(EditorError::Gone("the editor left the session".into()));
            }
            self.buffers
                .lock()
                .get(path)
                .cloned()
                .ok_or_else(|| EditorError::Refused("no such buffer".into()))
        })
    }

    fn write<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<(), EditorError>> {
        Box::pin(async move {
            if self.gone {
                return Err(EditorError::Gone("the editor left the session".into()));
            }
            self.writes
                .lock()
                .push((path.to_path_buf(), content.to_string()));
            self.buffers
                .lock()
                .insert(path.to_path_buf(), content.to_string());
            Ok(())
        })
    }
}

fn setup(gone: bool) -> (tempfile::TempDir, FakeHost, Arc<FakeEditor>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("notes.txt"), "on disk\n").unwrap();
    let editor = Arc::new(FakeEditor {
        gone,
        ..FakeEditor::default()
    });
    editor
        .buffers
        .lock()
        .insert(root.join("notes.txt"), "unsaved buffer\n".into());
    let mut host = FakeHost::new(&root, dir.path());
    host.editor = Some(EditorFilesHandle::new(editor.clone(), &root));
    (dir, host, editor)
}

#[tokio::test]
async fn read_write_and_edit_go_through_the_editor_inside_the_folder() {
    let (dir, mut host, editor) = setup(false);
    let root = dir.path().join("project");
    let out = host.run(&ReadCommand, &["notes.txt"]).await;
    assert_eq!(out.text, "     1\tunsaved buffer\n");
    let out = host
        .run(&EditCommand, &["notes.txt", "unsaved", "edited"])
        .await;
    assert_eq!(out.text, "Replaced 1 occurrence in notes.txt (line 1)");
    assert_eq!(out.changes.len(), 1, "the diff still comes out");
    let out = host.run(&WriteCommand, &["sub/new.txt", "fresh\n"]).await;
    assert_eq!(out.text, "Created sub/new.txt (1 line, 6 bytes)");
    assert_eq!(
        editor.writes.lock().as_slice(),
        [
            (root.join("notes.txt"), "edited buffer\n".to_string()),
            (root.join("sub/new.txt"), "fresh\n".to_string()),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "on disk\n",
        "the disk is the editor's to save"
    );
    // Outside the session's folder: the disk, never the editor.
    std::fs::write(dir.path().join("outside.txt"), "outer\n").unwrap();
    let out = host.run(&ReadCommand, &["../outside.txt"]).await;
    assert_eq!(out.text, "     1\touter\n");
    host.run(&WriteCommand, &["../out2.txt", "x"]).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out2.txt")).unwrap(),
        "x"
    );
    assert_eq!(editor.writes.lock().len(), 2);
    // A file the editor has no buffer of is diffed against the disk.
    std::fs::write(root.join("plain.txt"), "old\n").unwrap();
    let out = host.run(&WriteCommand, &["plain.txt", "new\n"]).await;
    assert_eq!(out.text, "Overwrote plain.txt (1 line, 4 bytes)");
    assert_eq!((out.changes[0].added, out.changes[0].removed), (1, 1));
}

#[tokio::test]
async fn the_editors_error_is_the_commands_and_names_the_path() {
    let (_dir, mut host, _editor) = setup(false);
    let out = host.run(&ReadCommand, &["missing.txt"]).await;
    assert_eq!(out.exit_code, 1);
    assert_eq!(
        out.text,
        "read: missing.txt: the editor could not read it: no such buffer"
    );
    let out = host.run(&EditCommand, &["missing.txt", "a", "b"]).await;
    assert_eq!(
        out.text,
        "edit: missing.txt: the editor could not read it: no such buffer"
    );
}

#[tokio::test]
async fn an_editor_that_is_gone_leaves_the_work_to_the_disk_with_a_notice() {
    let (dir, mut host, _editor) = setup(true);
    let root = dir.path().join("project");
    let out = host.run(&ReadCommand, &["notes.txt"]).await;
    assert!(out.text.starts_with("     1\ton disk\n"), "{}", out.text);
    assert!(
        out.text.contains(
            "the editor did not answer (the editor left the session); read the file on disk instead"
        ),
        "{}",
        out.text
    );
    let out = host.run(&EditCommand, &["notes.txt", "on", "off"]).await;
    assert!(
        out.text.contains("edited the file on disk instead"),
        "{}",
        out.text
    );
    let out = host.run(&WriteCommand, &["new.txt", "kept"]).await;
    assert!(
        out.text.contains("wrote the file on disk instead"),
        "{}",
        out.text
    );
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "off disk\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("new.txt")).unwrap(),
        "kept"
    );
}
