//! URLs, read by a real parser (the `url` crate, WHATWG URL Standard), for
//! the `url(...)` family of builtins. A text with a control character (NUL
//! included) or white space anywhere is not a URL: the parser would strip or
//! skip some of them silently, so two spellings would read as one.

use serde::{Deserialize, Serialize};

/// The part of a URL a builtin returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UrlPart {
    /// `url(s)`: the URL as the parser normalises it (lower-case scheme and
    /// host, default port dropped, `.` and `..` segments resolved).
    Whole,
    /// `url_scheme(s)`: `https`, `file`, ... in lower case.
    Scheme,
    /// `url_host(s)`: the host, absent when the URL has none (`mailto:`).
    Host,
    /// `url_path(s)`: the path, normalised.
    Path,
    /// `url_query(s)`: the query without its `?`, absent when there is none (`?` alone is an empty query).
    Query,
    /// `url_fragment(s)`: the fragment without its `#`, absent when there is none.
    Fragment,
    /// `url_origin(s)`: scheme, host and port as the URL Standard serialises
    /// an origin (`https://tracker.example`); `null` for a scheme without
    /// one (`file:`, `s3:`), so compare hosts too where that matters.
    Origin,
}

impl UrlPart {
    /// Every builtin of the family, by name.
    pub const ALL: [(&'static str, UrlPart); 7] = [
        ("url", UrlPart::Whole),
        ("url_scheme", UrlPart::Scheme),
        ("url_host", UrlPart::Host),
        ("url_path", UrlPart::Path),
        ("url_query", UrlPart::Query),
        ("url_fragment", UrlPart::Fragment),
        ("url_origin", UrlPart::Origin),
    ];

    pub fn name(self) -> &'static str {
        UrlPart::ALL.iter().find(|(_, p)| *p == self).map_or("url", |(n, _)| n)
    }

    pub fn by_name(name: &str) -> Option<UrlPart> {
        UrlPart::ALL.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }
}

/// The part of `s` read as an absolute URL: `Err` when `s` is not one, or
/// holds a control character or white space anywhere (missing evidence);
/// `Ok(None)` when the URL has no such part (a decided absence).
pub fn url_part(s: &str, part: UrlPart) -> Result<Option<String>, NotAUrl> {
    if s.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(NotAUrl);
    }
    let u = url::Url::parse(s).map_err(|_| NotAUrl)?;
    Ok(match part {
        UrlPart::Whole => Some(u.as_str().to_string()),
        UrlPart::Scheme => Some(u.scheme().to_string()),
        UrlPart::Host => u.host_str().filter(|h| !h.is_empty()).map(str::to_string),
        UrlPart::Path => Some(u.path().to_string()),
        UrlPart::Query => u.query().map(str::to_string),
        UrlPart::Fragment => u.fragment().map(str::to_string),
        UrlPart::Origin => Some(u.origin().ascii_serialization()),
    })
}

/// A text that is not an absolute URL (see [`url_part`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotAUrl;

#[cfg(test)]
mod tests {
    use super::{NotAUrl, UrlPart, url_part};

    #[test]
    fn reads_the_parts_of_a_url() {
        let u = "HTTPS://Tracker.Example:443/org/./repo/../repo/issues/2";
        assert_eq!(url_part(u, UrlPart::Whole).unwrap().as_deref(), Some("https://tracker.example/org/repo/issues/2"));
        assert_eq!(url_part(u, UrlPart::Scheme).unwrap().as_deref(), Some("https"));
        assert_eq!(url_part(u, UrlPart::Host).unwrap().as_deref(), Some("tracker.example"));
        assert_eq!(url_part(u, UrlPart::Query), Ok(None));
        assert_eq!(url_part("https://a.example/?", UrlPart::Query).unwrap().as_deref(), Some(""));
        assert_eq!(url_part("https://a.example/#x", UrlPart::Fragment).unwrap().as_deref(), Some("x"));
        assert_eq!(url_part(u, UrlPart::Origin).unwrap().as_deref(), Some("https://tracker.example"));
        assert_eq!(
            url_part("https://a.example:8443/x", UrlPart::Origin).unwrap().as_deref(),
            Some("https://a.example:8443")
        );
        assert_eq!(url_part("s3://bucket/runs", UrlPart::Origin).unwrap().as_deref(), Some("null"));
        // A URL without a host has decidedly none; a text that is no URL is unknown.
        assert_eq!(url_part("mailto:a@b.example", UrlPart::Host), Ok(None));
        assert_eq!(url_part("mailto:a@b.example", UrlPart::Scheme), Ok(Some("mailto".into())));
        assert_eq!(url_part("relative/path", UrlPart::Host), Err(NotAUrl));
        assert_eq!(url_part("file:///var/log/x", UrlPart::Path).unwrap().as_deref(), Some("/var/log/x"));
    }

    #[test]
    fn refuses_control_characters_and_white_space_anywhere() {
        for bad in [
            "https://a.example\0.evil/x",
            "https://a.exa\tmple/x",
            "https://a.example/x\n",
            " https://a.example/x",
            "https://a.example/a b",
            "\u{1}https://a.example/",
            "https://a.example/\u{7f}",
            "relative/path",
            "",
        ] {
            assert_eq!(url_part(bad, UrlPart::Whole), Err(NotAUrl), "{bad:?}");
        }
    }
}
