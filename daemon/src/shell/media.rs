//! Images a Bash-tool call produced for the model. An MCP tool's image is saved in the calling
//! session's scratch folder and named in the output as `[image saved to <path> (<type>, <n>
//! bytes)]` — by the in-process short-cut and by the wrapper alike (the daemon knows the session
//! of both). After the call, each such line that names a file in this session's scratch folder
//! brings that image along with the result, so the model sees it, not only its path. Nothing
//! outside the scratch folder is ever read: a command that prints a look-alike line naming
//! another file gets nothing.

use std::path::Path;

use base64::Engine;
use synapse_llm::Image;

/// Images one result carries at most.
pub const IMAGES_PER_RESULT_MAX: usize = 4;
/// The largest image sent (the Anthropic API's limit is 5 MB of base64, about this raw).
pub const IMAGE_BYTES_MAX: u64 = 3_750_000;

/// Types the model APIs accept.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The images named in `output` that lie in `scratch`.
pub fn images_in(output: &str, scratch: &Path) -> Vec<Image> {
    if !output.contains("[image saved to ") {
        return Vec::new();
    }
    let Ok(scratch) = scratch.canonicalize() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in output.lines() {
        let Some((path, media_type)) = parse_line(line) else {
            continue;
        };
        if !IMAGE_TYPES.contains(&media_type) {
            continue;
        }
        let Ok(path) = Path::new(path).canonicalize() else {
            continue;
        };
        if !path.starts_with(&scratch)
            || std::fs::metadata(&path).map_or(true, |m| !m.is_file() || m.len() > IMAGE_BYTES_MAX)
        {
            continue;
        }
        // The scratch folder is the agent's: a FIFO swapped in after the look is refused here.
        let Ok(bytes) = synapse_shared::bounded::read_bytes(&path, None, IMAGE_BYTES_MAX) else {
            continue;
        };
        out.push(Image {
            media_type: media_type.to_string(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        });
        if out.len() == IMAGES_PER_RESULT_MAX {
            break;
        }
    }
    out
}

/// `(path, media type)` of a `[image saved to <path> (<type>, <n> bytes)]` line.
fn parse_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim().strip_prefix("[image saved to ")?;
    let rest = rest.strip_suffix(" bytes)]")?;
    let open = rest.rfind(" (")?;
    let (path, detail) = (&rest[..open], &rest[open + 2..]);
    let media_type = detail.split(", ").next()?;
    Some((path, media_type))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_images_saved_in_the_sessions_scratch_folder_come_along() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = dir.path().join("scratch");
        std::fs::create_dir_all(&scratch).unwrap();
        let inside = scratch.join("synapse-mcp-a b.png");
        std::fs::write(&inside, b"\x89PNG fake").unwrap();
        let outside = dir.path().join("secret.png");
        std::fs::write(&outside, b"secret").unwrap();
        let output = format!(
            "before\n[image saved to {} (image/png, 9 bytes)]\n[image saved to {} (image/png, 6 bytes)]\n\
             [image saved to {}/../secret.png (image/png, 6 bytes)]\n[audio saved to {} (audio/wav, 1 bytes)]\n",
            inside.display(),
            outside.display(),
            scratch.display(),
            inside.display(),
        );
        let images = images_in(&output, &scratch);
        assert_eq!(images.len(), 1, "{images:?}");
        assert_eq!(images[0].media_type, "image/png");
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .decode(&images[0].data)
                .unwrap(),
            b"\x89PNG fake"
        );
        assert!(images_in("no images here", &scratch).is_empty());
    }
}
