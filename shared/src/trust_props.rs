//! Properties of the trusted-folders loader: any text is answered without a panic, a refusal
//! names the file and the expected shape, and every folder it returns is absolute and free of
//! `.` and `..`, so trusting `/a/../b` can never widen to something above `/b`.

use std::path::{Component, Path};

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

const FILE: &str = "/h/trusted_folders.json";

/// Path-like strings: absolute or not, with `.`, `..`, doubled and trailing slashes.
fn path_text() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        Just("..".to_string()),
        Just(".".to_string()),
        Just(String::new()),
        "[a-z]{1,4}",
        Just("a b".to_string()),
    ];
    (any::<bool>(), prop::collection::vec(part, 0..7)).prop_map(|(abs, parts)| {
        let joined = parts.join("/");
        if abs { format!("/{joined}") } else { joined }
    })
}

fn folders_entry() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => path_text().prop_map(Value::from),
        1 => Just(Value::Null),
        1 => any::<i64>().prop_map(Value::from),
        1 => Just(json!({"path": "/x"})),
    ]
}

fn document() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(folders_entry(), 0..6)
            .prop_map(|f| json!({"folders": f}).to_string()),
        Just(json!({"folders": "/not/a/list"}).to_string()),
        Just(json!({"folder": ["/x"]}).to_string()),
        Just("[]".to_string()),
        "\\PC{0,60}",
    ]
}

fn is_clean_absolute(p: &Path) -> bool {
    p.is_absolute()
        && p.components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
}

proptest! {
    #[test]
    fn any_document_is_answered_and_folders_come_out_clean(text in document()) {
        match parse(Path::new(FILE), &text) {
            Ok(folders) => {
                for f in &folders {
                    prop_assert!(is_clean_absolute(f), "{:?} from {}", f, text);
                    prop_assert!(is_trusted(&folders, &f.join("sub/dir")));
                }
            }
            Err(e) => {
                let shown = e.to_string();
                prop_assert!(shown.starts_with(FILE), "{}", shown);
                prop_assert!(shown.contains("expected {\"folders\""), "{}", shown);
            }
        }
    }

    /// The lexical normaliser everything path-based leans on (trust, the permission engine):
    /// an absolute path never climbs above `/`, the result is stable, and `..` undoes a name.
    #[test]
    fn normalize_never_climbs_above_the_root(text in path_text(), name in "[a-z]{1,4}") {
        let p = Path::new(&text);
        let n = normalize(p);
        if p.is_absolute() {
            prop_assert!(is_clean_absolute(&n), "{:?} -> {:?}", p, n);
        } else {
            prop_assert!(n.components().all(|c| !matches!(c, Component::CurDir)), "{:?} -> {:?}", p, n);
            let climbs = n.components().take_while(|c| matches!(c, Component::ParentDir)).count();
            prop_assert!(n.components().skip(climbs).all(|c| matches!(c, Component::Normal(_))), "{:?} -> {:?}", p, n);
        }
        prop_assert_eq!(normalize(&n), n.clone());
        prop_assert_eq!(normalize(&n.join(&name).join("..")), n);
    }
}
