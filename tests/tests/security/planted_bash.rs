//! A `bash` planted in a folder of the client's PATH (a relative entry, a project's tool folder)
//! is never the session's shell: the daemon starts bash by absolute path, for an unsandboxed
//! `synapse exec` shell, a sandboxed one, and a background job alike.

use std::os::unix::fs::PermissionsExt;

use synapse_tests::{TestEnv, run};

#[test]
fn a_bash_first_on_the_clients_path_never_becomes_the_shell() {
    let env = TestEnv::new();
    let project = env.workdir().join("cloned");
    let tools = project.join("node_modules/.bin");
    std::fs::create_dir_all(&tools).unwrap();
    let marker = env.root().join("planted-bash-ran");
    let planted = tools.join("bash");
    std::fs::write(
        &planted,
        format!(
            "#!/bin/sh\ntouch '{}'\nexec /bin/sh \"$@\"\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.start_daemon();
    let path = format!(
        "node_modules/.bin:{}:{}",
        tools.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for args in [
        vec!["exec", "echo $BASH_VERSION"],
        vec!["exec", "--permission-mode", "auto", "echo $BASH_VERSION"],
        vec!["exec", "--session", "jobs", "job start 'true'"],
    ] {
        let mut cmd = env.synapse();
        cmd.current_dir(&project).env("PATH", &path).args(&args);
        let out = run(&mut cmd);
        assert!(out.success(), "{args:?}: {out:?}");
        if args.len() == 2 || args.len() == 4 {
            assert!(!out.stdout.trim().is_empty(), "real bash answered: {out:?}");
        }
    }
    assert!(
        !marker.exists(),
        "a bash from the client's PATH was started by the daemon"
    );
}
