//! Issue 19, `synapse mcp add|remove|get` as `claude mcp add` users expect, through the real
//! daemon and the real `server-memory` from npm: added → connected with its tools at once;
//! `get` shows the entry with secrets masked; a project entry waits for trust; a config file
//! that does not parse is refused, never overwritten; removed → its commands are gone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support;

use mcp_support::fixtures_dir;
use synapse_tests::TestEnv;

#[test]
fn add_get_remove_a_real_server() {
    let env = TestEnv::new();
    let server =
        fixtures_dir().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    let server = server.display().to_string();
    let add = env.cli(&[
        "mcp",
        "add",
        "memory",
        "-e",
        "API_TOKEN=s3cret",
        "--",
        "node",
        &server,
    ]);
    assert!(add.success(), "{}{}", add.stdout, add.stderr);
    assert!(
        add.stdout
            .contains("memory is connected: 9 tool(s) as mcp:memory:<tool>."),
        "{}",
        add.stdout
    );
    assert!(env.home().join("bin/mcp:memory:read_graph").exists());

    let get = env.cli(&["mcp", "get", "memory"]);
    assert!(get.success(), "{}", get.stderr);
    assert!(get.stdout.contains("state:     ready"), "{}", get.stdout);
    assert!(
        get.stdout.contains("\"API_TOKEN\": \"***\""),
        "{}",
        get.stdout
    );
    assert!(!get.stdout.contains("s3cret"), "{}", get.stdout);
    assert!(
        get.stdout.contains("mcp:memory:create_entities"),
        "{}",
        get.stdout
    );

    let again = env.cli(&["mcp", "add", "memory", "--", "node", &server]);
    assert!(!again.success());
    assert!(
        again.stderr.contains("already has a server \"memory\""),
        "{}",
        again.stderr
    );

    let remove = env.cli(&["mcp", "remove", "memory"]);
    assert!(remove.success(), "{}", remove.stderr);
    assert!(!env.home().join("bin/mcp:memory:read_graph").exists());
    let list = env.cli(&["mcp", "list"]);
    assert!(list.stdout.contains("synapse mcp add"), "{}", list.stdout);
}

#[test]
fn project_entries_wait_for_trust_and_broken_files_are_kept() {
    let env = TestEnv::new();
    let project = env.workdir();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let add = env.cli(&[
        "mcp", "add", "--scope", "project", "tool", "--", "echo", "hi",
    ]);
    assert!(add.success(), "{}", add.stderr);
    assert!(
        add.stdout.contains("only in a trusted folder"),
        "{}",
        add.stdout
    );
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(saved["mcpServers"]["tool"]["command"], "echo");

    std::fs::create_dir_all(env.home().join("mcp")).unwrap();
    let user = env.home().join("mcp/mcp_servers.json");
    std::fs::write(&user, "{ \"mcpServers\": ").unwrap();
    let add = env.cli(&["mcp", "add", "x", "--", "echo"]);
    assert!(!add.success());
    assert!(add.stderr.contains("is not valid JSON"), "{}", add.stderr);
    assert_eq!(
        std::fs::read_to_string(&user).unwrap(),
        "{ \"mcpServers\": "
    );

    let http = env.cli(&["mcp", "add", "--transport", "http", "web", "not-a-url"]);
    assert_eq!(http.code, Some(2), "{}", http.stderr);
}

#[test]
fn a_codex_users_servers_are_found_in_their_config_toml() {
    let env = TestEnv::new();
    let server =
        fixtures_dir().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    let codex = env.user_home().join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(
        codex.join("config.toml"),
        format!(
            "model = \"o3\"\n\n[mcp_servers.memory]\ncommand = \"node\"\nargs = [{:?}]\n\
             enabled_tools = [\"read_graph\", \"search_nodes\"]\n",
            server.display().to_string()
        ),
    )
    .unwrap();
    let mut listed = String::new();
    synapse_tests::wait_until(
        synapse_tests::DEADLINE,
        "the Codex server to connect",
        || {
            listed = env.cli(&["mcp", "list"]).stdout;
            listed
                .lines()
                .any(|l| l.starts_with("memory") && l.contains("ready"))
        },
    );
    let get = env.cli(&["mcp", "get", "memory"]);
    assert!(get.stdout.contains(".codex/config.toml"), "{}", get.stdout);
    // enabled_tools is honoured: two commands, not nine.
    assert!(get.stdout.contains("tools:     2"), "{}", get.stdout);
}
