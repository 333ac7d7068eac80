use super::*;
use crate::skills::error::SkillError;
use pretty_assertions::assert_eq;
use std::fs;

struct Env {
    _t: tempfile::TempDir,
    home: PathBuf,
    syn: PathBuf,
    paths: StorePaths,
}

fn env() -> Env {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let syn = t.path().join("syn");
    fs::create_dir_all(&home).unwrap();
    let p = Paths::with_home(&syn);
    p.ensure_layout().unwrap();
    Env {
        home,
        syn,
        paths: StorePaths::from_paths(&p),
        _t: t,
    }
}

impl Env {
    fn config(&self, cwd: Option<&Path>) -> RootConfig {
        RootConfig {
            synapse_skills: self.syn.join("skills"),
            user_home: Some(self.home.clone()),
            env_dir: None,
            project_cwds: cwd.map(Path::to_path_buf).into_iter().collect(),
        }
    }
    fn open(&self, cwd: Option<&Path>) -> (Arc<SkillStore>, RefreshReport) {
        SkillStore::open(self.paths.clone(), self.config(cwd))
    }
}

fn skill(root: &Path, name: &str, desc: &str) -> PathBuf {
    let dir = root.join(name);
    fs::create_dir_all(dir.join("scripts")).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {desc}\n---\n# {name}\n\nDo the {name} thing.\n"),
    )
    .unwrap();
    dir
}

fn index(e: &Env) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(&e.paths.index_file).unwrap()).unwrap()
}

#[test]
fn malformed_yaml_is_skipped_and_others_load() {
    let e = env();
    let root = e.syn.join("skills");
    skill(&root, "good", "Works.");
    let bad = root.join("bad");
    fs::create_dir_all(&bad).unwrap();
    fs::write(
        bad.join("SKILL.md"),
        "---\nname: bad\ndescription: [oops\n---\n",
    )
    .unwrap();
    let (store, report) = e.open(None);
    assert_eq!(report.skills, 1);
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    let err = &report.errors[0];
    assert!(
        err.starts_with(&format!("{}:3:", bad.join("SKILL.md").display())),
        "{err}"
    );
    assert_eq!(
        store
            .list()
            .iter()
            .map(|s| s.id.as_str())
            .collect::<Vec<_>>(),
        vec!["user:good"]
    );
    assert_eq!(index(&e)["totalSkills"], 1);
}

#[test]
fn precedence_shadowing_and_plugin_layout() {
    let e = env();
    let proj = e.home.join("proj");
    let sub = proj.join("a/b");
    fs::create_dir_all(&sub).unwrap();
    skill(&proj.join(".claude/skills"), "dup", "Project copy.");
    skill(&e.syn.join("skills"), "dup", "User copy.");
    skill(
        &e.home
            .join(".claude/plugins/cache/market/tools/1.0.0/skills"),
        "dup",
        "Plugin copy.",
    );
    skill(
        &e.home
            .join(".claude/plugins/cache/market/tools/1.0.0/skills"),
        "plug",
        "Plugin only.",
    );
    skill(&e.home.join(".agents/skills"), "agent", "From agents.");
    // A cached plugin loads only when Claude Code's settings enable it.
    skill(
        &e.home.join(".claude/plugins/cache/market/off/1.0.0/skills"),
        "hidden",
        "Disabled plugin.",
    );
    fs::create_dir_all(e.home.join(".claude")).unwrap();
    fs::write(
        e.home.join(".claude/settings.json"),
        r#"{"enabledPlugins": {"tools@market": true, "off@market": false}}"#,
    )
    .unwrap();
    let (store, _) = e.open(Some(&sub));
    let dup = store.show_in("dup", &sub).unwrap();
    assert_eq!(
        (dup.id.as_str(), dup.description.as_str()),
        ("project:dup", "Project copy.")
    );
    // Plugin skills are `<plugin>:<skill>`: they never shadow (nor are shadowed by) the user's.
    assert_eq!(dup.shadows, vec!["user:dup".to_string()]);
    // Without a folder (and from any other project) the user's own copy answers.
    let user = store.show("dup").unwrap();
    assert_eq!(
        (user.id.as_str(), user.description.as_str()),
        ("user:dup", "User copy.")
    );
    assert!(user.shadows.is_empty(), "{:?}", user.shadows);
    let elsewhere = e.home.join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    assert_eq!(store.show_in("dup", &elsewhere).unwrap().id, "user:dup");
    assert!(store.show("project:dup").is_err());
    let report = store.refresh_in(&sub);
    let shadow: Vec<&String> = report
        .warnings
        .iter()
        .filter(|w| w.contains("shadows"))
        .collect();
    assert_eq!(shadow.len(), 1, "{:?}", report.warnings);
    assert!(shadow[0].starts_with("project:dup ("), "{shadow:?}");
    let plug = store.show("tools:plug").unwrap();
    assert_eq!(
        (plug.source, plug.id.as_str()),
        (SkillSource::Plugin, "plugin:tools:plug")
    );
    assert_eq!(store.show("tools:dup").unwrap().description, "Plugin copy.");
    assert!(store.show("plug").is_err());
    assert!(
        store.show("off:hidden").is_err(),
        "a disabled plugin stays out"
    );
    assert_eq!(store.show("agent").unwrap().id, "user:agent");
    // An explicit id reaches a shadowed skill.
    assert!(
        store
            .load_text("user:dup", false)
            .unwrap()
            .contains("Do the dup thing.")
    );
}

#[test]
fn scripts_become_wrappers_and_follow_changes_incrementally() {
    let e = env();
    let root = e.syn.join("skills");
    let dir = skill(&root, "pdf", "PDF tools.");
    fs::write(
        dir.join("scripts/extract.py"),
        "\"\"\"Extract text.\n\nUsage: extract.py FILE\n\"\"\"\nimport sys\nprint(sys.argv)\n",
    )
    .unwrap();
    let (store, r) = e.open(None);
    assert_eq!((r.skills, r.tools, r.wrappers_written), (1, 1, 1));
    let wrapper = e.paths.bin_dir.join("skill:pdf:extract");
    assert!(
        fs::read_to_string(&wrapper)
            .unwrap()
            .contains("Usage: skill:pdf:extract FILE")
    );

    // Edit: help follows; unrelated events change nothing.
    fs::write(
        dir.join("scripts/extract.py"),
        "\"\"\"Pull text out.\"\"\"\nprint(1)\n",
    )
    .unwrap();
    let r = store
        .apply_paths(&[dir.join("scripts/extract.py")])
        .unwrap();
    assert_eq!(r.wrappers_written, 1);
    assert!(
        fs::read_to_string(&wrapper)
            .unwrap()
            .contains("Pull text out.")
    );
    assert!(
        store
            .apply_paths(&[dir.join("scripts/extract.py")])
            .is_none()
    );
    assert!(
        store
            .apply_paths(std::slice::from_ref(&e.paths.index_file))
            .is_none()
    );

    // New script, then the skill folder renamed (new name in SKILL.md too), then deleted.
    fs::write(dir.join("scripts/merge.sh"), "# Merge PDFs\n").unwrap();
    store.apply_paths(&[dir.join("scripts/merge.sh")]).unwrap();
    assert!(e.paths.bin_dir.join("skill:pdf:merge").exists());
    assert_eq!(index(&e)["totalTools"], 2);

    let moved = root.join("pdf2");
    fs::rename(&dir, &moved).unwrap();
    fs::write(
        moved.join("SKILL.md"),
        "---\nname: pdf2\ndescription: PDF tools.\n---\nx\n",
    )
    .unwrap();
    store.apply_paths(&[dir.clone(), moved.clone()]).unwrap();
    assert!(!wrapper.exists());
    assert!(e.paths.bin_dir.join("skill:pdf2:extract").exists());
    assert_eq!(index(&e)["skills"][0]["name"], "pdf2");

    fs::remove_dir_all(&moved).unwrap();
    store.apply_paths(std::slice::from_ref(&moved)).unwrap();
    assert!(!e.paths.bin_dir.join("skill:pdf2:extract").exists());
    assert_eq!(index(&e)["totalSkills"], 0);
}

#[test]
fn skills_folder_deleted_and_recreated() {
    let e = env();
    let root = e.syn.join("skills");
    let dir = skill(&root, "a", "A.");
    fs::write(dir.join("scripts/run.sh"), "echo\n").unwrap();
    let (store, _) = e.open(None);
    fs::remove_dir_all(&root).unwrap();
    store.apply_paths(std::slice::from_ref(&root)).unwrap();
    assert!(!e.paths.bin_dir.join("skill:a:run").exists());
    let dir = skill(&root, "a", "A.");
    fs::write(dir.join("scripts/run.sh"), "echo\n").unwrap();
    store.apply_paths(std::slice::from_ref(&root)).unwrap();
    assert!(e.paths.bin_dir.join("skill:a:run").exists());
}

#[test]
fn load_text_bundled_files_and_unknown_names() {
    let e = env();
    let dir = skill(&e.syn.join("skills"), "pdf-editor", "Edits PDFs.");
    fs::write(dir.join("scripts/extract.py"), "print(1)\n").unwrap();
    fs::create_dir_all(dir.join("references")).unwrap();
    fs::write(dir.join("references/REF.md"), "ref").unwrap();
    let (store, _) = e.open(None);
    let text = store.load_text("pdf-editor", false).unwrap();
    assert!(
        text.starts_with("# Skill: pdf-editor\n\n# pdf-editor\n\nDo the pdf-editor thing.\n"),
        "{text}"
    );
    assert!(text.contains("- references/REF.md\n"), "{text}");
    assert!(
        text.contains("- scripts/extract.py  (command: skill:pdf-editor:extract)"),
        "{text}"
    );
    assert!(!text.contains("- SKILL.md"));

    let err = store.load_text("pdf-edit", false).unwrap_err().to_string();
    assert!(err.contains("did you mean: pdf-editor?"), "{err}");
    let err = store.load_text("../../etc/passwd", false).unwrap_err();
    assert!(matches!(err, SkillError::NotFound { .. }), "{err}");
    let err = store
        .read_file("pdf-editor", "../../../etc/passwd")
        .unwrap_err();
    assert!(matches!(err, SkillError::PathEscape { .. }), "{err}");
    assert_eq!(
        store
            .read_file("pdf-editor", "references/REF.md")
            .unwrap()
            .1,
        b"ref"
    );
}

#[test]
fn permissions_deny_ask_allow_and_enabled_state() {
    let e = env();
    let root = e.syn.join("skills");
    for n in ["open", "risky", "secret"] {
        fs::write(skill(&root, n, "D.").join("scripts/run.sh"), "echo\n").unwrap();
    }
    fs::write(
        &e.paths.settings_file,
        r#"{"permissions": {"skill": {"secret": "deny", "ri*": "ask"}}}"#,
    )
    .unwrap();
    let (store, r) = e.open(None);
    assert_eq!(r.skills, 2);
    assert_eq!(
        store
            .list()
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        vec!["open", "risky"]
    );
    assert!(!e.paths.bin_dir.join("skill:secret:run").exists());
    assert!(matches!(
        store.load("secret"),
        Err(SkillError::Denied { .. })
    ));
    assert!(matches!(
        store.read_file("secret", "SKILL.md"),
        Err(SkillError::Denied { .. })
    ));
    assert_eq!(
        store.load("risky").unwrap(),
        LoadDecision::NeedsApproval {
            id: "user:risky".into(),
            name: "risky".into()
        }
    );
    assert!(matches!(
        store.load_text("risky", false),
        Err(SkillError::ApprovalRequired { .. })
    ));
    assert!(
        store
            .load_text("risky", true)
            .unwrap()
            .starts_with("# Skill: risky")
    );
    assert!(matches!(
        store.load("open").unwrap(),
        LoadDecision::Ready(_)
    ));
    assert!(store.search_skills("secret", 10).is_empty());

    let s = store.set_enabled("open", false, None).unwrap();
    assert!(!s.enabled);
    assert!(!e.paths.bin_dir.join("skill:open:run").exists());
    assert!(matches!(
        store.load("open"),
        Err(SkillError::Disabled { .. })
    ));
    let settings = fs::read_to_string(&e.paths.settings_file).unwrap();
    assert!(settings.contains("\"user:open\""), "{settings}");
    store.set_enabled("user:open", true, None).unwrap();
    assert!(e.paths.bin_dir.join("skill:open:run").exists());
}

#[test]
fn create_and_delete() {
    let e = env();
    let (store, _) = e.open(None);
    let s = store
        .create("new-skill", "Says \"hi\": $(x) #not-a-comment", "Body.")
        .unwrap();
    assert_eq!(s.id, "user:new-skill");
    assert_eq!(s.description, "Says \"hi\": $(x) #not-a-comment");
    assert!(matches!(
        store.create("new-skill", "d", ""),
        Err(SkillError::AlreadyExists { .. })
    ));
    assert!(matches!(
        store.create("Bad Name", "d", ""),
        Err(SkillError::InvalidName { .. })
    ));
    assert!(matches!(
        store.create("ok", " ", ""),
        Err(SkillError::InvalidDescription { .. })
    ));
    assert_eq!(index(&e)["totalSkills"], 1);
    store.delete("new-skill", None).unwrap();
    assert!(!e.syn.join("skills/new-skill").exists());
    assert!(store.list().is_empty());

    let proj = e.home.join("p");
    skill(&proj.join(".synapse/skills"), "proj-only", "P.");
    let (store, _) = e.open(Some(&proj));
    assert!(matches!(
        store.delete("proj-only", Some(&proj)),
        Err(SkillError::NotDeletable { .. })
    ));
    // From outside the project the name is not one of the user's skills.
    assert!(matches!(
        store.delete("proj-only", None),
        Err(SkillError::NotFound { .. })
    ));
    assert!(proj.join(".synapse/skills/proj-only/SKILL.md").exists());
}

#[test]
fn folders_seen_long_ago_are_let_go_unless_their_workspace_is_up() {
    let e = env();
    let (store, _) = e.open(None);
    let project = |i: usize| {
        let dir = e.home.join(format!("p{i}"));
        skill(
            &dir.join(".synapse/skills"),
            &format!("skill-{i}"),
            "A project skill.",
        );
        dir
    };
    let cwds = |store: &SkillStore| store.read().config.project_cwds.clone();
    // A workspace that is up keeps its project however many folders come after it.
    let held = project(0);
    store.attach_workspace(&held, &e.syn.join("workspaces/p0/bin"));
    for i in 1..=(LOOSE_CWDS_KEPT + 4) {
        store.add_project_cwd(&project(i));
    }
    let now = cwds(&store);
    assert!(now.contains(&held), "{now:?}");
    assert_eq!(now.len(), LOOSE_CWDS_KEPT + 1, "{now:?}");
    assert!(
        !now.contains(&e.home.join("p1")),
        "the oldest loose folder went"
    );
    let roots = store.roots();
    assert!(
        !roots.iter().any(|r| r.dir.starts_with(e.home.join("p1"))),
        "its skills are no longer scanned or watched"
    );
    // Asked again, a folder comes back at once.
    store.add_project_cwd(&e.home.join("p1"));
    assert!(
        store
            .roots()
            .iter()
            .any(|r| r.dir == e.home.join("p1/.synapse/skills")),
        "asked again, its skills are scanned again"
    );
    // Once the workspace is down, its folder is one loose folder among the others: the oldest,
    // let go when the next folder asks.
    store.detach_workspace(&held);
    store.add_project_cwd(&project(99));
    let now = cwds(&store);
    assert_eq!(now.len(), LOOSE_CWDS_KEPT, "{now:?}");
    assert!(!now.contains(&held), "{now:?}");
}

#[test]
fn the_user_index_and_a_scoped_refresh_ignore_other_projects() {
    let e = env();
    let alpha = e.home.join("alpha");
    let beta = e.home.join("beta");
    let alpha_dup = skill(&alpha.join(".claude/skills"), "dup", "Alpha copy.");
    let beta_dup = skill(&beta.join(".claude/skills"), "dup", "Beta copy.");
    let user_dup = skill(&e.syn.join("skills"), "dup", "User copy.");
    let (store, _) = e.open(Some(&alpha));
    store.add_project_cwd(&beta);

    let v = index(&e);
    let skills = v["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1, "{v}");
    assert_eq!(skills[0]["path"], user_dup.display().to_string());
    assert_eq!(skills[0]["version"], "1.0.0");

    let report = store.refresh_in(&beta);
    let shadows: Vec<&String> = report
        .warnings
        .iter()
        .filter(|w| w.contains("shadows"))
        .collect();
    assert_eq!(shadows.len(), 1, "{:?}", report.warnings);
    assert!(
        shadows[0].contains(&beta_dup.display().to_string())
            && !shadows[0].contains(&alpha_dup.display().to_string()),
        "{shadows:?}"
    );
    assert_eq!(report.skills, 1);
    let report = store.refresh_in(&e.home);
    assert!(
        !report.warnings.iter().any(|w| w.contains("shadows")),
        "{:?}",
        report.warnings
    );
    assert_eq!(index(&e)["skills"][0]["description"], "User copy.");
}
