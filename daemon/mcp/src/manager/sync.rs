//! [`CommandViews`]: a manager's commands as the rest of the daemon sees them, kept in step with
//! its servers — the command catalog (in memory, at once when a call needs it) and the wrapper
//! files (in the background, never on a call's path) — and the loop that handles connection
//! events (a server's tool list changed, its process exited).

use parking_lot::RwLock;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use tokio::sync::mpsc;

use super::{Catalog, ConnectionEvent, Inner, McpManager, Server, SyncReport, ToolInfo};
use crate::catalog::resource_command_names;
use crate::wrappers::WrapperWriter;

/// The catalog of a manager's commands and the wrapper files that run them.
pub(crate) struct CommandViews {
    catalog: RwLock<Arc<Catalog>>,
    writer: WrapperWriter,
    /// One file sync at a time.
    sync_lock: tokio::sync::Mutex<()>,
}

impl CommandViews {
    /// Views with an empty catalog, writing wrappers with `writer`.
    pub(crate) fn new(writer: WrapperWriter) -> Self {
        Self {
            catalog: RwLock::new(Arc::new(Catalog::default())),
            writer,
            sync_lock: tokio::sync::Mutex::new(()),
        }
    }

    /// The catalog now.
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.catalog.read().clone()
    }

    /// The folder the wrappers are written to.
    pub(crate) fn bin_dir(&self) -> &Path {
        self.writer.bin_dir()
    }

    /// The wrappers written last, by command name.
    pub(crate) fn manifest(&self) -> BTreeMap<String, crate::names::ToolRef> {
        self.writer.read_manifest()
    }

    /// The catalog rebuilt from `known`, in memory only.
    fn rebuild(&self, known: &Known) -> Arc<Catalog> {
        let catalog = Arc::new(known.catalog());
        *self.catalog.write() = catalog.clone();
        catalog
    }

    /// Rebuilds the catalog from `known` and makes the wrapper files match it; servers without
    /// a tool list yet keep their files.
    async fn sync(&self, known: impl FnOnce() -> Known) -> SyncReport {
        let _sync = self.sync_lock.lock().await;
        let known = known();
        let catalog = self.rebuild(&known);
        let writer = self.writer.clone();
        let entries = catalog.wrapper_entries();
        let resources = catalog.resource_commands().to_vec();
        let keep = known.keep;
        let keep_resources: HashSet<String> = keep
            .iter()
            .chain(&known.keep_resources)
            .flat_map(|s| resource_command_names(s))
            .collect();
        let result = tokio::task::spawn_blocking(move || {
            writer.sync_all(&entries, &resources, &keep, &keep_resources)
        })
        .await;
        match result {
            Ok(Ok(report)) => report,
            Ok(Err(e)) => {
                tracing::error!("MCP wrappers: {e}");
                SyncReport::default()
            }
            Err(e) => {
                tracing::error!("MCP wrappers: sync task failed: {e}");
                SyncReport::default()
            }
        }
    }
}

impl McpManager {
    /// The catalog rebuilt from the servers' known tools, in memory only: what a call needs
    /// when a server just came up. The files follow in the background
    /// ([`sync_wrappers_later`](Self::sync_wrappers_later)), never on the call's path.
    pub(crate) fn refresh_catalog(&self) {
        self.inner.views.rebuild(&self.known_tools());
        self.sync_wrappers_later();
    }

    /// Makes the wrappers match the catalog in a background task.
    pub(crate) fn sync_wrappers_later(&self) {
        let this = self.clone();
        synapse_command::tasks::spawn(async move {
            this.sync_wrappers().await;
        });
    }

    /// What the servers' last listings say: every enabled server's known tools, which of them
    /// offer resources, and which servers' wrappers stay as they are until they connect.
    fn known_tools(&self) -> Known {
        let servers: Vec<Arc<Server>> = self.inner.servers.read().values().cloned().collect();
        let mut known = Known::default();
        for s in &servers {
            let cfg = s.config();
            if !cfg.enabled {
                continue;
            }
            match s.tools() {
                Some(tools) => {
                    // Whether it lists resources is known only while it is connected.
                    match s.ready().map(|c| c.lists_resources()) {
                        Some(true) => known.resources.push(cfg.name.clone()),
                        Some(false) => {}
                        None => {
                            known.keep_resources.insert(cfg.name.clone());
                        }
                    }
                    known
                        .tools
                        .push((cfg.name.clone(), tools, cfg.filter.clone()));
                }
                None => {
                    known.keep.insert(cfg.name.clone());
                }
            }
        }
        known
    }

    /// Rebuilds the catalog from the servers' known tools and makes the wrappers match it.
    /// Servers that are configured but have no tool list yet keep their existing wrappers.
    pub async fn sync_wrappers(&self) -> SyncReport {
        self.inner.views.sync(|| self.known_tools()).await
    }
}

/// The servers' last listings, for the catalog and the wrappers.
#[derive(Default)]
struct Known {
    tools: Vec<(String, Arc<Vec<ToolInfo>>, crate::filter::ToolFilter)>,
    /// Servers listing resources (connected now).
    resources: Vec<String>,
    /// Servers whose tools are not known yet: their wrappers stay.
    keep: HashSet<String>,
    /// Servers with known tools that are not connected now: their resource wrappers stay.
    keep_resources: HashSet<String>,
}

impl Known {
    fn catalog(&self) -> Catalog {
        Catalog::build(&self.tools).with_resources(self.resources.iter().map(String::as_str))
    }
}

pub(super) fn merge_reports(mut a: SyncReport, b: SyncReport) -> SyncReport {
    a.written.extend(b.written);
    a.removed.extend(b.removed);
    a.skipped.extend(b.skipped);
    a.unchanged = b.unchanged;
    a.written.sort();
    a.written.dedup();
    a
}

/// Handles connection events until the manager is dropped.
pub(super) async fn event_loop(
    inner: std::sync::Weak<Inner>,
    mut rx: mpsc::UnboundedReceiver<ConnectionEvent>,
) {
    while let Some(event) = rx.recv().await {
        let Some(inner) = inner.upgrade() else { return };
        let manager = McpManager { inner };
        match event {
            ConnectionEvent::Exited {
                server,
                conn_id,
                reason,
            } => {
                if let Some(s) = manager.server(&server) {
                    s.connection_broke(conn_id, reason).await;
                }
            }
            ConnectionEvent::ToolsChanged { server, conn_id } => {
                let Some(s) = manager.server(&server) else {
                    continue;
                };
                let Some(conn) = s.ready().filter(|c| c.conn_id == conn_id) else {
                    continue;
                };
                // Listing may take a while: do it off the event loop.
                synapse_command::tasks::spawn(async move {
                    match conn.list_tools_now().await {
                        Ok(tools) => {
                            tracing::info!(server = %server, tools = tools.len(), "MCP tool list changed");
                            s.set_tools(tools.iter().map(ToolInfo::from_rmcp).collect());
                            manager.sync_wrappers().await;
                        }
                        Err(e) => s.call_failed(&conn, &e).await,
                    }
                });
            }
        }
    }
}
