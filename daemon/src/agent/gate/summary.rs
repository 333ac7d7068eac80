//! What `/permissions` shows: the mode, the sandbox in force and where the rules come from.

use super::SessionGate;
use synapse_permissions::Mode;

impl SessionGate {
    /// A few lines for `/permissions`: the mode, the sandbox and where rules come from.
    pub fn summary(&self) -> String {
        let rules = self.rules();
        let mode = self.mode_with(&rules);
        let mut out = format!(
            "permission mode: {} — {}\n",
            mode.as_str(),
            mode.description()
        );
        let sandbox = match (mode, synapse_sandbox::support()) {
            (Mode::Yolo, _) => "sandbox: off (yolo)".to_string(),
            (_, synapse_sandbox::Support::Landlock { abi }) => {
                match self.sandbox_spec_with(&rules) {
                    Some(s) if s.read_only => format!("sandbox: Landlock ABI {abi}, read-only"),
                    _ => format!(
                        "sandbox: Landlock ABI {abi}; shell writes only to {}",
                        self.writable_dirs(&rules)
                            .iter()
                            .map(|d| d.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }
            }
            (_, synapse_sandbox::Support::Unavailable { reason }) => {
                format!("sandbox: unavailable ({reason}); rules only")
            }
        };
        out.push_str(&sandbox);
        out.push('\n');
        out.push_str(&format!(
            "rules: {}\n",
            self.env.user_settings.path().display()
        ));
        match &rules.project {
            Some(p) if p.trusted => {
                out.push_str(&format!("rules: {} (trusted)\n", p.file.display()))
            }
            Some(p) => out.push_str(&format!(
                "ignored: {} (folder not trusted; `synapse trust {}` to use it)\n",
                p.file.display(),
                p.dir.display()
            )),
            None => {}
        }
        out
    }
}
