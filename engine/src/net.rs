//! IP addresses, networks and host names for the `ip(...)`, `net(...)`,
//! `hostname(...)` family of built-ins. Addresses are read by the standard
//! library's strict parsers (`std::net`: dotted-quad IPv4 without leading
//! zeros, RFC 4291 IPv6) and shown in their canonical text (RFC 5952 for
//! IPv6), so two spellings of one address compare equal as strings. A host
//! as a browser reads it (`0x7f.1`, `2130706433`, `017700000001`) is read by
//! the `url` crate's WHATWG host parser ([`host_ip`]). Which addresses,
//! networks or hosts are allowed is the policy's to say, never this file's.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An address written plainly: dotted-quad IPv4, or IPv6 (in one pair of
/// brackets or none, as a URL's host carries it). No zone (`%eth0`), no
/// leading zeros, no other spelling.
pub fn parse_ip(s: &str) -> Option<IpAddr> {
    let inner = match s.strip_prefix('[') {
        Some(rest) => rest.strip_suffix(']').filter(|r| r.contains(':'))?,
        None => s,
    };
    inner.parse::<IpAddr>().ok()
}

/// `ip(s)`: the canonical text of the address `s` writes.
pub fn ip(s: &str) -> Option<String> {
    parse_ip(s).map(|a| a.to_string())
}

/// `host_ip(h)`: the address a URL host names when it is written as one, in
/// any form the WHATWG URL Standard (browsers, curl) reads: a bare number
/// (`2130706433`), dotted parts in octal or hex (`0x7f.1`, `017700000001`),
/// fewer than four parts (`127.1`), or an IPv6 address in brackets. `None`
/// for a domain name, and for what is not a valid host at all.
pub fn host_ip(h: &str) -> Option<String> {
    if h.is_empty() || h.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return None;
    }
    match url::Host::parse(h).ok()? {
        url::Host::Ipv4(a) => Some(a.to_string()),
        url::Host::Ipv6(a) => Some(a.to_string()),
        url::Host::Domain(_) => None,
    }
}

/// A network: an address and a prefix length whose host bits are zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Net {
    pub addr: IpAddr,
    pub len: u8,
}

/// `net(s)`: `ADDRESS/LENGTH`, the length in decimal without a sign or a
/// leading zero, at most 32 (IPv4) or 128 (IPv6), the bits past it zero
/// (`10.0.0.1/8` is refused: it names an address, not a network).
pub fn parse_net(s: &str) -> Option<Net> {
    let (a, l) = s.split_once('/')?;
    let addr = a.parse::<IpAddr>().ok()?;
    if l.is_empty() || l.len() > 3 || !l.bytes().all(|b| b.is_ascii_digit()) || (l.len() > 1 && l.starts_with('0')) {
        return None;
    }
    let len: u8 = l.parse().ok()?;
    if len > width(addr) || mask(width(addr), len) & bits(addr) != bits(addr) {
        return None;
    }
    Some(Net { addr, len })
}

/// Why `s` is not a network, for the compiler's error on a literal.
pub fn net_error(s: &str) -> String {
    match s.split_once('/') {
        None => "a network is an address and a prefix length, e.g. `10.0.0.0/8`".into(),
        Some((a, l)) => match a.parse::<IpAddr>() {
            Err(_) => format!("`{a}` is not an IPv4 or IPv6 address"),
            Ok(addr) => match l.parse::<u8>() {
                Ok(len) if len <= width(addr) && parse_net(&format!("{addr}/{l}")).is_none() => {
                    let kept = Net { addr: from_bits(addr, bits(addr) & mask(width(addr), len)), len };
                    format!("its address has bits set past the prefix: the network is `{kept}`")
                }
                _ => format!("`{l}` is not a prefix length of 0 to {}", width(addr)),
            },
        },
    }
}

impl std::fmt::Display for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl Net {
    /// Whether `a` is in the network; `None` when the families differ (an
    /// IPv4-mapped IPv6 address is IPv6: see [`embedded_ipv4`]).
    pub fn contains(&self, a: IpAddr) -> Option<bool> {
        if a.is_ipv4() != self.addr.is_ipv4() {
            return None;
        }
        let m = mask(width(self.addr), self.len);
        Some(bits(a) & m == bits(self.addr) & m)
    }
}

fn width(a: IpAddr) -> u8 {
    if a.is_ipv4() { 32 } else { 128 }
}

fn bits(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(a) => u128::from(a.to_bits()),
        IpAddr::V6(a) => a.to_bits(),
    }
}

fn from_bits(like: IpAddr, b: u128) -> IpAddr {
    match like {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::from_bits(b as u32)),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::from_bits(b)),
    }
}

/// The first `len` of `width` bits set.
fn mask(width: u8, len: u8) -> u128 {
    let all: u128 = if width == 32 { u128::from(u32::MAX) } else { u128::MAX };
    // A full-length network (`/128`) shifts every bit out: no bit is left outside it.
    if len == 0 { 0 } else { all & !all.checked_shr(u32::from(len)).unwrap_or(0) }
}

/// `a in n`: whether the address `a` writes is in the network `n` writes;
/// `Some(false)` for an address of the other family; `None` when either
/// is not one.
pub fn in_net(a: &str, n: &str) -> Option<bool> {
    let (a, n) = (parse_ip(a)?, parse_net(n)?);
    Some(n.contains(a).unwrap_or(false))
}

/// `embedded_ipv4(a)`: the IPv4 addresses an IPv6 address carries, where
/// packets to it end up reaching IPv4: IPv4-mapped `::ffff:0:0/96`,
/// IPv4-compatible `::/96` (less `::` and `::1`, the unspecified and
/// loopback addresses), 6to4 `2002::/16` (bits 16 to 47), NAT64
/// `64:ff9b::/96` (the last 32 bits) and the local-use `64:ff9b:1::/48`
/// (every layout of RFC 6052 that an address of it can have: prefix /48,
/// /56, /64 or /96, its reserved bits 64 to 71 zero), Teredo `2001::/32`
/// (the client's address, its last 32 bits inverted). Empty for any other
/// address, and for an IPv4 address (it is one).
pub fn embedded_ipv4(a: IpAddr) -> Vec<Ipv4Addr> {
    let IpAddr::V6(a) = a else { return Vec::new() };
    let b = a.to_bits();
    let v4 = |x: u128| Ipv4Addr::from_bits(x as u32);
    let top = |n: u32| b >> (128 - n);
    let mut out = Vec::new();
    if top(96) == 0xffff || (top(96) == 0 && b > 1) {
        out.push(v4(b));
    } else if top(16) == 0x2002 {
        out.push(v4(b >> 80));
    } else if top(96) == 0x0064_ff9b_0000_0000_0000_0000 {
        out.push(v4(b));
    } else if top(48) == 0x0064_ff9b_0001 {
        // RFC 6052 section 2.2: the 32 bits around the reserved octet `u` (bits 64-71), the suffix zero.
        let u_zero = (b >> 56) & 0xff == 0;
        let field = |from: u32| (b >> (128 - from - 32)) as u32;
        if u_zero && b & ((1u128 << 40) - 1) == 0 {
            out.push(Ipv4Addr::from_bits(((field(48) >> 16) << 16) | ((b >> 40) as u32 & 0xffff)));
        }
        if u_zero && b & ((1u128 << 32) - 1) == 0 {
            out.push(Ipv4Addr::from_bits(((field(56) >> 24) << 24) | ((b >> 32) as u32 & 0x00ff_ffff)));
        }
        if u_zero && b & ((1u128 << 24) - 1) == 0 {
            out.push(Ipv4Addr::from_bits(field(72)));
        }
        if u_zero {
            out.push(v4(b));
        }
        out.dedup();
    } else if top(32) == 0x2001_0000 {
        out.push(Ipv4Addr::from_bits(!(b as u32)));
    }
    out
}

/// `hostname(s)`: a DNS host name, in lower case, without one trailing dot;
/// `None` when it is not one: an empty label (`a..b`, a leading dot, two
/// trailing dots), a label longer than 63 characters or a name longer than
/// 253, a character other than ASCII letters, digits and `-`, a label that
/// begins or ends with `-`, or a last label that is a number (`127.1`,
/// `0x7f`: an address, see [`host_ip`]). A name in another script is
/// written in its ASCII form (`xn--...`).
pub fn hostname(s: &str) -> Option<String> {
    let name = s.strip_suffix('.').unwrap_or(s);
    if name.is_empty() || name.len() > 253 {
        return None;
    }
    let labels: Vec<&str> = name.split('.').collect();
    let good = |l: &&str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if !labels.iter().all(good) {
        return None;
    }
    let last = labels[labels.len() - 1].to_ascii_lowercase();
    // WHATWG: a host whose last label is a number is an IPv4 address (or invalid), never a name.
    let numeric = last.bytes().all(|b| b.is_ascii_digit())
        || last.strip_prefix("0x").is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
    if numeric {
        return None;
    }
    Some(name.to_ascii_lowercase())
}

/// `tld(s)`: the last label of `hostname(s)`.
pub fn tld(s: &str) -> Option<String> {
    hostname(s).map(|h| h.rsplit('.').next().unwrap_or_default().to_string())
}

/// `in_domain(h, d)`: `hostname(h)` is `hostname(d)` or a name below it,
/// decided on whole labels (`evil-example.com` is not in `example.com`).
pub fn in_domain(h: &str, d: &str) -> Option<bool> {
    let (h, d) = (hostname(h)?, hostname(d)?);
    Some(h == d || h.strip_suffix(&d).is_some_and(|rest| rest.ends_with('.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4s(a: &str) -> Vec<String> {
        embedded_ipv4(parse_ip(a).unwrap()).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn reads_addresses_strictly_and_shows_them_canonically() {
        assert_eq!(ip("127.0.0.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(ip("2001:DB8:0:0::1").as_deref(), Some("2001:db8::1"));
        assert_eq!(ip("[::1]").as_deref(), Some("::1"));
        assert_eq!(ip("::FFFF:127.0.0.1").as_deref(), Some("::ffff:127.0.0.1"));
        for bad in ["", "127.1", "0x7f.0.0.1", "127.0.0.01", "2130706433", "[127.0.0.1]", "fe80::1%eth0", "::1]", "a"] {
            assert_eq!(ip(bad), None, "{bad}");
        }
    }

    #[test]
    fn reads_hosts_as_browsers_do() {
        for h in ["2130706433", "0x7f.1", "127.1", "017700000001", "0x7F000001", "127.0.0.1", "127.0.0.1."] {
            assert_eq!(host_ip(h).as_deref(), Some("127.0.0.1"), "{h}");
        }
        assert_eq!(host_ip("[::ffff:7f00:1]").as_deref(), Some("::ffff:127.0.0.1"));
        for h in ["example.com", "", "1.2.3.4.5", "0x7g.1", "a b", "256.256.256.256"] {
            assert_eq!(host_ip(h), None, "{h}");
        }
    }

    #[test]
    fn networks_hold_their_addresses() {
        assert_eq!(in_net("2001:db8::5", "2001:db8::/32"), Some(true));
        assert_eq!(in_net("2001:db9::5", "2001:db8::/32"), Some(false));
        assert_eq!(in_net("10.1.2.3", "10.0.0.0/8"), Some(true));
        assert_eq!(in_net("11.0.0.0", "10.0.0.0/8"), Some(false));
        assert_eq!(in_net("1.2.3.4", "0.0.0.0/0"), Some(true));
        // A full-length network is its one address (it once overflowed a shift).
        assert_eq!(in_net("2001:1::1", "2001:1::1/128"), Some(true));
        assert_eq!(in_net("2001:1::2", "2001:1::1/128"), Some(false));
        assert_eq!(in_net("192.0.0.9", "192.0.0.9/32"), Some(true));
        assert_eq!(in_net("192.0.0.10", "192.0.0.9/32"), Some(false));
        assert_eq!(in_net("::ffff:10.0.0.1", "10.0.0.0/8"), Some(false));
        assert_eq!(in_net("10.0.0.1", "10.0.0.1/32"), Some(true));
        assert_eq!(in_net("localhost", "10.0.0.0/8"), None);
        for bad in ["10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/08", "10.0.0.0", "::/129", "10.0.0.0/+8", "x/8", "10.0.0.0/"]
        {
            assert_eq!(parse_net(bad), None, "{bad}");
        }
        assert!(net_error("10.0.0.1/8").contains("`10.0.0.0/8`"), "{}", net_error("10.0.0.1/8"));
        assert_eq!(parse_net("2001:DB8::/32").map(|n| n.to_string()).as_deref(), Some("2001:db8::/32"));
    }

    #[test]
    fn finds_the_ipv4_inside_ipv6() {
        assert_eq!(v4s("::ffff:198.51.100.7"), ["198.51.100.7"]);
        assert_eq!(v4s("::127.0.0.1"), ["127.0.0.1"]);
        assert_eq!(v4s("::1"), Vec::<String>::new());
        assert_eq!(v4s("::"), Vec::<String>::new());
        assert_eq!(v4s("2002:7f00:1::"), ["127.0.0.1"]);
        assert_eq!(v4s("2002:c633:6407:1::5"), ["198.51.100.7"]);
        assert_eq!(v4s("64:ff9b::10.0.0.1"), ["10.0.0.1"]);
        assert_eq!(v4s("64:ff9b:1::10.0.0.1"), ["10.0.0.1"]);
        // RFC 6052's /48 layout: 192.0.2.33 as 64:ff9b:1:c000:2:2100:: (u octet zero).
        // The address alone does not say which layout the operator chose: every one it can have.
        assert_eq!(v4s("64:ff9b:1:c000:2:2100::"), ["192.0.2.33", "0.2.33.0", "2.33.0.0", "0.0.0.0"]);
        // Teredo (RFC 4380's example): server 65.54.227.120, client 192.0.2.45 obfuscated.
        assert_eq!(v4s("2001:0:4136:e378:8000:63bf:3fff:fdd2"), ["192.0.2.45"]);
        assert_eq!(v4s("2001:db8::1"), Vec::<String>::new());
        assert_eq!(v4s("127.0.0.1"), Vec::<String>::new());
    }

    #[test]
    fn host_names_are_normalised_and_checked() {
        assert_eq!(hostname("Egress.Example.COM.").as_deref(), Some("egress.example.com"));
        assert_eq!(tld("api.example.org.").as_deref(), Some("org"));
        let long = "a".repeat(64);
        for bad in [
            "egress..example.com",
            ".example.com",
            "example.com..",
            "",
            "-a.com",
            "a-.com",
            "a_b.com",
            "127.1",
            "0x7f.1",
            "1.2.3.4",
            "exa mple.com",
            "bücher.de",
            &format!("{long}.com"),
        ] {
            assert_eq!(hostname(bad), None, "{bad}");
        }
        assert_eq!(hostname(&format!("{}.com", "a".repeat(63))).map(|h| h.len()), Some(67));
        assert_eq!(in_domain("API.example.com", "example.com"), Some(true));
        assert_eq!(in_domain("example.com.", "example.com"), Some(true));
        assert_eq!(in_domain("evil-example.com", "example.com"), Some(false));
        assert_eq!(in_domain("example.com.evil.net", "example.com"), Some(false));
        assert_eq!(in_domain("a..example.com", "example.com"), None);
    }
}
