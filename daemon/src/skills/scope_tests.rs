//! Each project sees only itself: two projects with different project skills, one of them
//! shadowing a user skill, answered from each project and from outside both.

use super::*;
use crate::skills::source::RootConfig;
use crate::skills::store::StorePaths;
use pretty_assertions::assert_eq;
use std::fs;
use synapse_shared::paths::Paths;

struct Projects {
    _t: tempfile::TempDir,
    store: Arc<SkillStore>,
    a: PathBuf,
    b: PathBuf,
    outside: PathBuf,
}

fn skill(root: &Path, name: &str, desc: &str, script: &str) {
    let dir = root.join(name);
    fs::create_dir_all(dir.join("scripts")).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {desc}\n---\n# {name}\n"),
    )
    .unwrap();
    fs::write(
        dir.join("scripts").join(script),
        format!("# {desc}\necho\n"),
    )
    .unwrap();
}

/// User skill `report` ("User reports."); project A: `alpha-tool` and its own `report`
/// ("Project A reports."); project B: `beta-tool`. The store has seen both projects.
fn projects() -> Projects {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let syn = t.path().join("syn");
    let (a, b, outside) = (home.join("a"), home.join("b"), home.join("loose"));
    for d in [&a, &b, &outside] {
        fs::create_dir_all(d).unwrap();
    }
    let p = Paths::with_home(&syn);
    p.ensure_layout().unwrap();
    skill(&syn.join("skills"), "report", "User reports.", "make.sh");
    skill(
        &a.join(".claude/skills"),
        "alpha-tool",
        "Alpha widgets.",
        "go.sh",
    );
    skill(
        &a.join(".claude/skills"),
        "report",
        "Project A reports.",
        "make.sh",
    );
    skill(
        &b.join(".synapse/skills"),
        "beta-tool",
        "Beta widgets.",
        "go.sh",
    );
    let config = RootConfig {
        synapse_skills: syn.join("skills"),
        user_home: Some(home.clone()),
        env_dir: None,
        project_cwds: vec![a.clone(), b.clone()],
    };
    let (store, _) = SkillStore::open(StorePaths::from_paths(&p), config);
    Projects {
        _t: t,
        store,
        a,
        b,
        outside,
    }
}

fn names(list: &[SkillSummary]) -> Vec<(String, String)> {
    let mut out: Vec<_> = list
        .iter()
        .map(|s| (s.name.clone(), s.description.clone()))
        .collect();
    out.sort();
    out
}

fn pair(name: &str, desc: &str) -> (String, String) {
    (name.to_string(), desc.to_string())
}

fn tools_in(store: &SkillStore, cwd: &Path) -> Vec<String> {
    let mut out = Vec::new();
    store.visit_tools_in(cwd, &mut |t| out.push(t.command.clone()));
    out.sort();
    out
}

#[test]
fn list_and_search_show_the_callers_project_only() {
    let p = projects();
    assert_eq!(
        names(&p.store.list_in(&p.b)),
        vec![
            pair("beta-tool", "Beta widgets."),
            pair("report", "User reports.")
        ]
    );
    assert_eq!(
        names(&p.store.list_in(&p.a)),
        vec![
            pair("alpha-tool", "Alpha widgets."),
            pair("report", "Project A reports.")
        ]
    );
    assert_eq!(
        names(&p.store.list_in(&p.outside)),
        vec![pair("report", "User reports.")]
    );
    assert_eq!(
        names(&p.store.list()),
        vec![pair("report", "User reports.")]
    );

    let found = p.store.search_skills_in("widgets reports", 10, &p.b);
    assert_eq!(
        names(&found),
        vec![
            pair("beta-tool", "Beta widgets."),
            pair("report", "User reports.")
        ]
    );
    assert!(p.store.search_skills("alpha", 10).is_empty());
    // Another project's skill is not found by name nor by id.
    assert!(p.store.show_in("alpha-tool", &p.b).is_err());
    assert!(p.store.show_in("project:report", &p.b).is_err());
    assert!(p.store.load_in("alpha-tool", &p.b).is_err());
    assert_eq!(
        p.store.show_in("project:report", &p.a).unwrap().dir,
        p.a.join(".claude/skills/report")
    );
}

#[test]
fn the_prompt_listing_names_the_callers_skills_and_commands_only() {
    let p = projects();
    let in_b = p.store.listing(&p.b, 4096).text;
    assert!(in_b.contains("- beta-tool: Beta widgets."), "{in_b}");
    assert!(in_b.contains("- report: User reports."), "{in_b}");
    assert!(in_b.contains("skill:report:make"), "{in_b}");
    for leak in ["alpha", "Project A"] {
        assert!(!in_b.contains(leak), "{leak} in B's listing:\n{in_b}");
    }
    let in_a = p.store.listing(&p.a, 4096).text;
    assert!(in_a.contains("- report: Project A reports."), "{in_a}");
    assert!(in_a.contains("alpha-tool"), "{in_a}");
    assert!(
        !in_a.contains("beta") && !in_a.contains("User reports"),
        "{in_a}"
    );
    // Asked again, each gets its own listing back (the indexes are cached per set of skills).
    assert_eq!(p.store.listing(&p.b, 4096).text, in_b);
    let fits = p.store.fitting(&p.a, "make a report with widgets", &[]);
    assert!(fits.contains("- report: Project A reports."), "{fits}");
    assert!(!fits.contains("beta"), "{fits}");
}

#[test]
fn tools_search_names_the_callers_commands_only() {
    let p = projects();
    let in_b = tools_in(&p.store, &p.b);
    assert!(in_b.contains(&"skill:beta-tool:go".to_string()), "{in_b:?}");
    assert!(in_b.contains(&"skill:report:make".to_string()), "{in_b:?}");
    assert!(!in_b.iter().any(|c| c.contains("alpha")), "{in_b:?}");
    let in_a = tools_in(&p.store, &p.a);
    assert!(
        in_a.contains(&"skill:alpha-tool:go".to_string()),
        "{in_a:?}"
    );
    assert!(!in_a.iter().any(|c| c.contains("beta")), "{in_a:?}");
}
