//! The address policy of `web_fetch`: only http(s), and by default no loopback, private,
//! link-local or otherwise non-public address, so a page the model reads cannot make it probe
//! the user's machine or network.
//!
//! Enforced twice: [`check_url`] resolves the host before each request (and each redirect hop)
//! and explains a refusal; [`GuardedResolver`] is the HTTP client's DNS resolver and refuses the
//! same addresses when the connection is actually made, so a name that resolves differently the
//! second time (DNS rebinding) is still caught. IP literals never reach a resolver, so
//! [`check_url`] is what covers them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why an address is not public, or `None` when it is.
pub fn non_public_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if a == 0 {
        Some("an unspecified (\"this host\") address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if ip.is_broadcast() || ip.is_multicast() || a >= 240 {
        Some("a broadcast, multicast or reserved address")
    } else if a == 198 && (b == 18 || b == 19) {
        Some("a benchmarking-network address")
    } else {
        None
    }
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    let seg = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        // ::ffff:a.b.c.d reaches the IPv4 host a.b.c.d.
        return v4_reason(v4);
    }
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if seg[0] & 0xfe00 == 0xfc00 {
        Some("a unique-local (private) address")
    } else if seg[0] & 0xffc0 == 0xfe80 || seg[0] & 0xffc0 == 0xfec0 {
        Some("a link-local address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if seg[..6] == [0, 0, 0, 0, 0, 0] {
        // The deprecated IPv4-compatible form ::a.b.c.d.
        v4_reason(embedded_v4(seg[6], seg[7])).or(Some("an IPv4-compatible address"))
    } else if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        // NAT64 (64:ff9b::/96) translates to the embedded IPv4 address.
        v4_reason(embedded_v4(seg[6], seg[7]))
    } else if seg[0] == 0x2002 {
        // 6to4 (2002:a.b.c.d::/48) tunnels to the embedded IPv4 address.
        v4_reason(embedded_v4(seg[1], seg[2]))
    } else {
        None
    }
}

fn embedded_v4(hi: u16, lo: u16) -> Ipv4Addr {
    let [a, b] = hi.to_be_bytes();
    let [c, d] = lo.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error(
        "only http:// and https:// URLs can be fetched (got {scheme}://); read local files with `read`"
    )]
    Scheme { scheme: String },
    #[error("the URL has no host: {0}")]
    NoHost(String),
    #[error(
        "{host} is {reason} ({ip}); fetching loopback, private and link-local addresses is off. \
         To allow it, set \"web\": {{\"allowPrivateNetworks\": true}} in settings.json"
    )]
    NonPublic {
        host: String,
        ip: IpAddr,
        reason: &'static str,
    },
    #[error("cannot resolve {host}: {message}")]
    Resolve { host: String, message: String },
}

/// Checks the scheme and, unless private networks are allowed, every address the host
/// resolves to.
pub async fn check_url(url: &Url, allow_private: bool) -> Result<(), PolicyError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(PolicyError::Scheme {
            scheme: url.scheme().to_string(),
        });
    }
    let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
        return Err(PolicyError::NoHost(url.to_string()));
    };
    if allow_private {
        return Ok(());
    }
    // The URL parser has already normalised IP literals (`127.1` → `127.0.0.1`, `[::1]`).
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<IpAddr> = match literal.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => resolve(host).await?.into_iter().map(|a| a.ip()).collect(),
    };
    check_addrs(host, &addrs)
}

fn check_addrs(host: &str, addrs: &[IpAddr]) -> Result<(), PolicyError> {
    for ip in addrs {
        if let Some(reason) = non_public_reason(*ip) {
            return Err(PolicyError::NonPublic {
                host: host.to_string(),
                ip: *ip,
                reason,
            });
        }
    }
    Ok(())
}

async fn resolve(name: &str) -> Result<Vec<SocketAddr>, PolicyError> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name, 0))
        .await
        .map_err(|e| PolicyError::Resolve {
            host: name.to_string(),
            message: e.to_string(),
        })?
        .collect();
    if addrs.is_empty() {
        return Err(PolicyError::Resolve {
            host: name.to_string(),
            message: "no addresses".into(),
        });
    }
    Ok(addrs)
}

/// The HTTP client's resolver when private networks are not allowed: resolves like the system
/// does and refuses the whole name if any address is not public.
#[derive(Debug, Clone, Copy, Default)]
pub struct GuardedResolver;

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let name = name.as_str().to_string();
        Box::pin(async move {
            let addrs = resolve(&name).await?;
            let ips: Vec<IpAddr> = addrs.iter().map(SocketAddr::ip).collect();
            check_addrs(&name, &ips)?;
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(s: &str) -> Option<&'static str> {
        non_public_reason(s.parse().unwrap())
    }

    #[test]
    fn non_public_addresses_are_named() {
        for (ip, why) in [
            ("127.0.0.1", "loopback"),
            ("127.8.9.10", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "link-local"),
            ("0.0.0.0", "unspecified"),
            ("100.64.0.1", "carrier-grade"),
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("fe80::1", "link-local"),
            ("fd00::1", "unique-local"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.0.0.1", "private"),
            ("::ffff:169.254.169.254", "link-local"),
            ("::127.0.0.1", "loopback"),
            ("64:ff9b::a00:1", "private"),
            ("2002:c0a8:0101::1", "private"),
        ] {
            let r = reason(ip).unwrap_or_else(|| panic!("{ip} passed as public"));
            assert!(r.contains(why), "{ip}: {r}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "93.184.215.14",
            "1.1.1.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "172.32.0.1",
        ] {
            assert_eq!(reason(ip), None, "{ip}");
        }
    }

    #[tokio::test]
    async fn urls_are_checked_without_network_for_literals() {
        let url = |s: &str| Url::parse(s).unwrap();
        assert!(matches!(
            check_url(&url("file:///etc/passwd"), false).await,
            Err(PolicyError::Scheme { .. })
        ));
        assert!(matches!(
            check_url(&url("file:///etc/passwd"), true).await,
            Err(PolicyError::Scheme { .. })
        ));
        let e = check_url(&url("http://[::ffff:127.0.0.1]:8080/"), false)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("loopback"), "{e}");
        // The WHATWG parser turns 127.1 and 0x7f.1 into 127.0.0.1.
        assert!(check_url(&url("http://0x7f.1/"), false).await.is_err());
        assert!(check_url(&url("http://127.0.0.1/"), true).await.is_ok());
        let e = check_url(&url("http://localhost:1/"), false)
            .await
            .unwrap_err();
        assert!(matches!(e, PolicyError::NonPublic { .. }), "{e}");
    }
}
