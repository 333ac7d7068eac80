//! Read-side calls of [`SkillStore`]: list, show, `skill load` (with permissions and the body
//! cache), reading a bundled file through the path guard, and keyword search over skills.
//!
//! These answer with the user-level skills only (a caller outside any project); a caller in a
//! folder asks through [`super::scope`] (`list_in`, `search_skills_in`, …), which adds the
//! project skills of that folder and nothing of another project.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use super::error::SkillError;
use super::files;
use super::permissions::SkillPermission;
use super::record::SkillRecord;
use super::state::State;
use super::store::{LoadDecision, SkillStore, SkillSummary};

/// SKILL.md bodies kept read; beyond this the cache starts afresh.
const BODIES_KEPT: usize = 256;
/// And at most this many bytes of them.
const BODIES_MAX_BYTES: usize = 8 * 1024 * 1024;

impl SkillStore {
    /// Visible or disabled skills (denied ones are hidden), by name.
    pub fn list(&self) -> Vec<SkillSummary> {
        let st = self.read();
        st.active
            .values()
            .filter(|r| st.permission(r) != SkillPermission::Deny)
            .map(|r| summary(&st, r))
            .collect()
    }

    /// One skill by name or id (denied skills are refused).
    pub fn show(&self, name: &str) -> Result<SkillSummary, SkillError> {
        let st = self.read();
        let r = resolve(&st, name, &self.paths().settings_file)?;
        Ok(summary(&st, &r))
    }

    /// `skill load <name>`: refuses denied and disabled skills, asks for `ask` ones.
    pub fn load(&self, name: &str) -> Result<LoadDecision, SkillError> {
        self.refresh_settings();
        let (rec, perm) = {
            let st = self.read();
            let rec = resolve(&st, name, &self.paths().settings_file)?;
            if !st.settings.is_enabled(&rec.id) {
                return Err(SkillError::Disabled {
                    name: rec.meta.name.clone(),
                });
            }
            let perm = st.permission(&rec);
            (rec, perm)
        };
        match perm {
            SkillPermission::Ask => Ok(LoadDecision::NeedsApproval {
                id: rec.id.clone(),
                name: rec.meta.name.clone(),
            }),
            _ => self.render_load(&rec).map(LoadDecision::Ready),
        }
    }

    /// `skill load` after the user approved an `ask` skill (still refuses `deny`).
    pub fn load_approved(&self, name: &str) -> Result<String, SkillError> {
        match self.load(name)? {
            LoadDecision::Ready(text) => Ok(text),
            LoadDecision::NeedsApproval { name: n, .. } => {
                let rec = resolve(&self.read(), &n, &self.paths().settings_file)?;
                self.render_load(&rec)
            }
        }
    }

    /// The text the model sees for `skill load <name>`; `approved` answers an `ask` in advance
    /// (a non-interactive caller passes false, which refuses).
    pub fn load_text(&self, name: &str, approved: bool) -> Result<String, SkillError> {
        match self.load(name)? {
            LoadDecision::Ready(text) => Ok(text),
            LoadDecision::NeedsApproval { .. } if approved => self.load_approved(name),
            LoadDecision::NeedsApproval { name, .. } => Err(SkillError::ApprovalRequired { name }),
        }
    }

    pub(crate) fn render_load(&self, rec: &SkillRecord) -> Result<String, SkillError> {
        let body = self.body(rec)?;
        let (files, cut) = files::bundled_files(&rec.dir);
        Ok(super::commands::render_load(rec, &body, &files, cut))
    }

    /// The SKILL.md body, cached until the file changes (at most [`BODIES_KEPT`] bodies).
    pub fn body(&self, rec: &SkillRecord) -> Result<Arc<str>, SkillError> {
        let meta = std::fs::metadata(&rec.skill_md)
            .map_err(|e| SkillError::io("read", &rec.skill_md, e))?;
        let stamp = (
            meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            meta.len(),
        );
        if let Some((t, n, body)) = self.bodies.lock().get(&rec.skill_md)
            && (*t, *n) == stamp
        {
            return Ok(body.clone());
        }
        let text = synapse_shared::bounded::read_text(
            &rec.skill_md,
            Some(&rec.dir),
            synapse_shared::bounded::SKILL_MD_MAX_BYTES,
        )
        .map_err(|e| SkillError::io("read", &rec.skill_md, e))?;
        let folder = rec
            .dir
            .file_name()
            .map(|f| f.to_string_lossy().into_owned());
        let parsed =
            synapse_shared::skill::parse_skill_md(&rec.skill_md, &text, folder.as_deref())?;
        let body: Arc<str> = Arc::from(text[parsed.body_offset..].trim());
        {
            let mut cache = self.bodies.lock();
            // Bounded by count and by bytes: skills created and deleted over months, or a few
            // huge bodies, leave nothing behind.
            let held: usize = cache.values().map(|(_, _, b)| b.len()).sum();
            if (cache.len() >= BODIES_KEPT || held + body.len() > BODIES_MAX_BYTES)
                && !cache.contains_key(&rec.skill_md)
            {
                cache.clear();
                cache.shrink_to_fit();
            }
            cache.insert(rec.skill_md.clone(), (stamp.0, stamp.1, body.clone()));
        }
        Ok(body)
    }

    /// Reads a file inside a skill folder (path guard applied; denied skills refused).
    pub fn read_file(&self, name: &str, rel: &str) -> Result<(PathBuf, Vec<u8>), SkillError> {
        let rec = resolve(&self.read(), name, &self.paths().settings_file)?;
        files::read_skill_file(&rec.meta.name, &rec.dir, rel)
    }

    /// The scripts (with runner and parsed documentation) of the skill `name`.
    pub fn scripts_of(&self, name: &str) -> Result<Vec<super::script::SkillScript>, SkillError> {
        let rec = resolve(&self.read(), name, &self.paths().settings_file)?;
        Ok(rec.scripts.clone())
    }

    /// Re-reads settings.json when it changed and re-derives visibility.
    pub fn refresh_settings(&self) {
        let _ = self.apply_paths(std::slice::from_ref(&self.paths().settings_file));
    }

    /// Keyword search over visible user-level skills' names and descriptions (best first).
    pub fn search_skills(&self, query: &str, limit: usize) -> Vec<SkillSummary> {
        let st = self.read();
        keyword_hits(&st, st.active.values(), query, limit)
            .into_iter()
            .map(|r| summary(&st, r))
            .collect()
    }
}

/// The visible, model-invocable skills among `records` that match `query`'s words, best first:
/// a word in the name counts 3, in the description 1.
pub(crate) fn keyword_hits<'a>(
    st: &State,
    records: impl Iterator<Item = &'a Arc<SkillRecord>>,
    query: &str,
    limit: usize,
) -> Vec<&'a Arc<SkillRecord>> {
    let terms: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let mut hits: Vec<(usize, &Arc<SkillRecord>)> = records
        .filter(|r| st.is_visible(r) && !r.meta.disable_model_invocation)
        .filter_map(|r| {
            let name = r.meta.name.to_lowercase();
            let desc = r.meta.description.to_lowercase();
            let score: usize = terms
                .iter()
                .map(|t| {
                    if name.contains(t.as_str()) {
                        3
                    } else if desc.contains(t.as_str()) {
                        1
                    } else {
                        0
                    }
                })
                .sum();
            (score > 0).then_some((score, r))
        })
        .collect();
    hits.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| a.1.meta.name.cmp(&b.1.meta.name))
    });
    hits.into_iter().take(limit).map(|(_, r)| r).collect()
}

/// Finds a user-level skill by `name` (the winner) or `source:name` id (any loaded one);
/// denied skills are refused; unknown names get the closest visible names as suggestions.
pub(crate) fn resolve(
    st: &State,
    name: &str,
    settings: &Path,
) -> Result<Arc<SkillRecord>, SkillError> {
    let user_roots: Vec<usize> = (0..st.roots.len())
        .filter(|&i| st.is_user_root(i))
        .collect();
    resolve_from(st, &st.active, &user_roots, name, settings)
}

/// [`resolve`] against a given winner map and the roots a caller sees (the user-level ones, or
/// one workspace's view): an id names a record of those roots only.
pub(crate) fn resolve_from(
    st: &State,
    active: &std::collections::BTreeMap<String, Arc<SkillRecord>>,
    roots: &[usize],
    name: &str,
    settings: &Path,
) -> Result<Arc<SkillRecord>, SkillError> {
    let name = name.trim();
    let found = if name.contains(':') {
        // An id (`user:pdf`), else a plugin skill's own name (`docs:pdf`).
        st.all_records()
            .find(|r| r.id == name && roots.contains(&r.root))
            .map(|r| {
                active
                    .get(&r.meta.name)
                    .filter(|a| a.id == r.id)
                    .cloned()
                    .unwrap_or_else(|| Arc::new(r.clone()))
            })
            .or_else(|| active.get(name).cloned())
    } else {
        active.get(name).cloned()
    };
    match found {
        Some(r) if st.permission(&r) == SkillPermission::Deny => Err(SkillError::Denied {
            name: r.meta.name.clone(),
            settings: settings.to_path_buf(),
        }),
        Some(r) => Ok(r),
        None => {
            let visible = active
                .values()
                .filter(|r| st.permission(r) != SkillPermission::Deny);
            let names: Vec<&str> = visible.map(|r| r.meta.name.as_str()).collect();
            Err(SkillError::NotFound {
                name: name.to_string(),
                suggestions: super::commands::closest(name, &names),
            })
        }
    }
}

/// `r` as list/show present it; for a user-level winner, the user-level skills it hides (a
/// workspace's view replaces these with its own, [`super::scope`]).
pub(crate) fn summary(st: &State, r: &SkillRecord) -> SkillSummary {
    let is_winner = st.active.get(&r.meta.name).is_some_and(|a| a.dir == r.dir);
    let (shadows, shadowed_dirs): (Vec<String>, Vec<PathBuf>) = if is_winner {
        st.user_records(&r.meta.name)
            .filter(|o| o.id != r.id || o.dir != r.dir)
            .map(|o| (o.id.clone(), o.dir.clone()))
            .unzip()
    } else {
        Default::default()
    };
    SkillSummary {
        id: r.id.clone(),
        name: r.meta.name.clone(),
        description: r.meta.description.clone(),
        source: r.source,
        dir: r.dir.clone(),
        skill_md: r.skill_md.clone(),
        enabled: st.settings.is_enabled(&r.id),
        permission: st.permission(r),
        kind: r.meta.kind,
        commands: r.scripts.iter().map(|s| s.command.clone()).collect(),
        scripts: r
            .scripts
            .iter()
            .map(|s| super::store::ScriptSummary {
                command: s.command.clone(),
                summary: s.doc.summary.clone(),
                usage_args: s.doc.usage_args.clone(),
                help: s.doc.full.clone(),
            })
            .collect(),
        allowed_tools: r.meta.allowed_tools.clone(),
        tags: r.meta.tags.clone(),
        shadows,
        shadowed_dirs,
        warnings: r.warnings.iter().map(|w| w.to_string()).collect(),
        user_invocable: r.meta.user_invocable,
        argument_hint: r.meta.argument_hint.clone(),
        disable_model_invocation: r.meta.disable_model_invocation,
    }
}
