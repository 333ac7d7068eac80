//! Opening a URL in the user's browser, as command-line tools do: `$BROWSER` when set (the first
//! of a `:`-separated list; `%s` stands for the URL, else it is appended), else `xdg-open` (Linux
//! and the BSDs) or `open` (macOS) when one is on PATH. The browser is started in the background
//! and never waited for; the caller prints the URL in any case.

use std::path::Path;
use std::process::{Command, Stdio};

/// The command line that opens `url`, from `$BROWSER` (`browser_env`) or the platform's opener
/// (`on_path` says whether a program is on PATH); `None` when there is none.
pub fn command_for(
    url: &str,
    browser_env: Option<&str>,
    on_path: impl Fn(&str) -> bool,
) -> Option<Vec<String>> {
    if let Some(first) = browser_env.and_then(|b| b.split(':').find(|e| !e.trim().is_empty())) {
        let mut words = shlex::split(first)?;
        if words.is_empty() {
            return None;
        }
        if words.iter().any(|w| w.contains("%s")) {
            for w in &mut words {
                *w = w.replace("%s", url);
            }
        } else {
            words.push(url.to_string());
        }
        return Some(words);
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    on_path(opener).then(|| vec![opener.to_string(), url.to_string()])
}

/// Starts the browser on `url`; says with what, or why not.
pub fn open(url: &str) -> Result<String, String> {
    let browser = std::env::var("BROWSER").ok();
    let Some(words) = command_for(url, browser.as_deref(), on_path) else {
        return Err("$BROWSER is unset and there is no xdg-open or open".into());
    };
    let (program, args) = words.split_first().ok_or("empty $BROWSER")?;
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    // Reaped in the background: the login goes on while the browser runs.
    let mut child = child;
    std::thread::spawn(move || child.wait());
    Ok(if browser.is_some() {
        "$BROWSER".to_string()
    } else {
        program.clone()
    })
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| is_executable(&dir.join(program)))
    })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://as.example.com/authorize?a=1&b=2";

    #[test]
    fn browser_env_wins_and_takes_the_url() {
        let never = |_: &str| false;
        assert_eq!(
            command_for(URL, Some("firefox"), never).unwrap(),
            vec!["firefox", URL]
        );
        assert_eq!(
            command_for(URL, Some("my-browser --new-tab %s --x"), never).unwrap(),
            vec!["my-browser", "--new-tab", URL, "--x"]
        );
        assert_eq!(
            command_for(URL, Some(":w3m:lynx"), never).unwrap(),
            vec!["w3m", URL]
        );
    }

    #[test]
    fn the_platform_opener_is_used_only_when_present() {
        let opener = if cfg!(target_os = "macos") {
            "open"
        } else {
            "xdg-open"
        };
        assert_eq!(
            command_for(URL, None, |p| p == opener).unwrap(),
            vec![opener, URL]
        );
        assert_eq!(command_for(URL, None, |_| false), None);
        assert_eq!(command_for(URL, Some(""), |_| false), None);
    }
}
