//! PKCE (RFC 7636, S256 only) and the login's `state`: random values from the operating system,
//! base64url without padding. The verifier and the state stay in the daemon; only the challenge
//! and the state travel in the authorization URL.

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::OAuthError;

/// Random bytes behind a verifier: 32 bytes make the 43-character verifier RFC 7636 suggests.
const VERIFIER_BYTES: usize = 32;
/// Random bytes behind a `state`.
const STATE_BYTES: usize = 24;

/// A code verifier and its S256 challenge.
pub struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkce")
            .field("challenge", &self.challenge)
            .finish_non_exhaustive()
    }
}

impl Pkce {
    pub fn new() -> Result<Pkce, OAuthError> {
        let verifier = random_token(VERIFIER_BYTES)?;
        let challenge = challenge_s256(&verifier);
        Ok(Pkce {
            verifier,
            challenge,
        })
    }
}

/// `BASE64URL(SHA256(ASCII(verifier)))`.
pub fn challenge_s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// A fresh `state` for one login.
pub fn new_state() -> Result<String, OAuthError> {
    random_token(STATE_BYTES)
}

/// `bytes` random bytes from the OS as base64url (no padding): only unreserved characters.
pub fn random_token(bytes: usize) -> Result<String, OAuthError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| OAuthError::Random(e.to_string()))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

/// Compares two secrets in time independent of where they differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_of_rfc_7636_appendix_b() {
        assert_eq!(
            challenge_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_long_unreserved_and_fresh() {
        let a = Pkce::new().unwrap();
        let b = Pkce::new().unwrap();
        assert_ne!(a.verifier, b.verifier);
        // RFC 7636: 43 to 128 characters of [A-Z a-z 0-9 - . _ ~].
        assert!((43..=128).contains(&a.verifier.len()), "{}", a.verifier);
        assert!(
            a.verifier
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
        );
        assert_eq!(a.challenge, challenge_s256(&a.verifier));
        assert_ne!(new_state().unwrap(), new_state().unwrap());
    }

    #[test]
    fn the_debug_form_hides_the_verifier() {
        let p = Pkce::new().unwrap();
        assert!(!format!("{p:?}").contains(&p.verifier));
    }

    #[test]
    fn secrets_compare_exactly() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
        assert!(!same_secret("", "a"));
    }
}
