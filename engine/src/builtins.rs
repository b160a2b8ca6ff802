//! The functions every policy can call without declaring them: one
//! catalogue, which the compiler's "did you mean", the editor's hovers,
//! completions and signature help, and docs/language.md all agree with
//! (`engine/tests/builtins.rs` holds them to it).

/// A built-in function: its name, the ways it is called, and what it gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: &'static str,
    /// Each form of a call, parameters named: `count(xs)`, `count(x in xs by key)`.
    pub signatures: &'static [&'static str],
    pub doc: &'static str,
}

macro_rules! functions {
    ($($name:literal [$($sig:literal),+] $doc:literal;)+) => {
        /// Every built-in function, in the order of docs/language.md's table.
        pub const FUNCTIONS: &[Function] = &[$(Function { name: $name, signatures: &[$($sig),+], doc: $doc }),+];
    };
}

functions! {
    "count" ["count(xs)", "count(x in xs by key)"]
        "the number of distinct identities in `xs` (scalars by value, records by their `identity` field), never the length of the list; with `by`, the number of distinct `key` values";
    "pairs" ["pairs(xs)"] "the unordered pairs of distinct identities (for `for (a, b) in pairs(xs)`)";
    "present" ["present(x)"] "whether a value is there; never unknown";
    "valid" ["valid(x)"]
        "whether a value is there and of its type: false for an absent, a missing or an invalid value, never unknown";
    "absent" ["absent(x)"] "whether a value is missing; never unknown";
    "empty" ["empty(xs)"] "a list or map without entries";
    "max" ["max(a, b)", "max(xs)"]
        "the greater of two ints or ordered variants; of a list of ints or durations, the greatest (absent for none; an unknown entry makes it unknown)";
    "min" ["min(a, b)", "min(xs)"]
        "the smaller of two ints or ordered variants; of a list of ints or durations, the least (absent for none; an unknown entry makes it unknown)";
    "sum" ["sum(xs)"]
        "the sum of a list of ints or durations, every entry counted, duplicates included; `0` for none; an unknown entry makes it unknown";
    "lower" ["lower(s)"] "a string in lower case";
    "trim_suffix" ["trim_suffix(s, t)"] "`s` without one trailing `t`";
    "trim" ["trim(s)"] "`s` without surrounding white space";
    "split" ["split(s, \",\")"] "the entries of a comma-separated field, in their positions";
    "show" ["show(x)"] "a value as messages show it, as a string (for verdict lines)";
    "choose" ["choose(c, a, b)"] "`a` when `c` holds, `b` when it does not; unknown when `c` is";
    "join" ["join(xs, \", \")"]
        "the entries of a list as messages show them, joined by the separator (for verdict lines); unknown when an entry is not there";
    "entries" ["entries(xs)"]
        "the number of entries, duplicates included: for positional data, never for counting things";
    "distinct" ["distinct(xs)"] "the first entry of every distinct identity";
    "flatten" ["flatten(xss)"] "the entries of a list of lists, in order";
    "int" ["int(s)"] "a string read as an integer (absent if it is not one)";
    "timestamp" ["timestamp(s)"]
        "an RFC 3339 date-time, year 0000 to 9999, as an instant (absent if malformed, calendar-invalid, or a `:60` second)";
    "timestamp_millis" ["timestamp_millis(s)"]
        "`timestamp(s)` with at most three fraction digits (upstream's strict form); absent otherwise";
    "now" ["now()"] "the time of the check: `--now`, else the machine's clock (the report says which)";
    "param" ["param(\"name\")"]
        "a named parameter of the invocation (`--egress-hosts a,b` is `param(\"egress-hosts\")`), a list of strings; absent when the invocation did not give it";
    "days" ["days(n)"] "a duration of `n` days";
    "hours" ["hours(n)"] "a duration of `n` hours";
    "minutes" ["minutes(n)"] "a duration of `n` minutes";
    "seconds" ["seconds(n)"] "a duration of `n` seconds";
    "url" ["url(s)"]
        "`s` read as an absolute URL by a real parser (WHATWG), normalised; absent if it is not one, or if it holds a control character or white space";
    "url_scheme" ["url_scheme(s)"] "the scheme of the URL `url(s)` reads";
    "url_host" ["url_host(s)"] "the host of the URL `url(s)` reads (absent when it has none)";
    "url_path" ["url_path(s)"] "the path of the URL `url(s)` reads";
    "url_origin" ["url_origin(s)"] "the origin of the URL `url(s)` reads (`https://host:port`; `null` for a scheme without one, such as `file:`)";
    "url_query" ["url_query(s)"] "the query of the URL `url(s)` reads (absent when it has none; `?` alone is an empty query)";
    "url_fragment" ["url_fragment(s)"] "the fragment of the URL `url(s)` reads (absent when it has none)";
    "matches" ["matches(s, \"regex\")"] "whether `s` matches a regular expression (checked when the policy compiles)";
    "holds" ["holds([\"rule.id\", \"prefix.*\"], x)"]
        "no finding of those rules failed or is unknown for the subject `x` (a rule using it runs after them; a cycle is an error)";
    "failure" ["failure([\"rule.id\", \"prefix.*\"], x)"]
        "the message of the first finding of those rules (in the order the list names them) that failed, is unknown, or was reported (`when ... else report`) for the subject `x`; absent when they all hold";
    "reason" ["reason(x)"] "why `x` is absent, for messages";
    "bound_to" ["bound_to(x, \"layer\")"] "`x` was read from a document the invocation bound to that layer";
    "is_null" ["is_null(x)"]
        "`x` is null (a field declared `or null`); false for any other value and for an absent one, never unknown";
    "text" ["text(f)"] "the content of an attached file (absent when it is not UTF-8 text)";
    "lines" ["lines(f)"] "the lines of an attached file, or of a string, without their ends";
    "sha256" ["sha256(f)"] "the lower-case hex SHA-256 of an attached file's exact bytes (binary too), or of a string";
    "attached" ["attached(p)"] "the file the invocation attached under the recorded path `p` (`--attach p=FILE`)";
    "replace" ["replace(s, from, to)"] "every `from` in `s` replaced by `to`";
    "replace_line" ["replace_line(s, n, to)"]
        "`s` (a string or an attached file's text) with its line `n` (0-based, as `lines(s)` counts them) replaced by `to`, every line end kept as written; absent when it has no line `n`";
    "matches_glob" ["matches_glob(path, pattern)"]
        "a glob over `/`-separated paths: `*` and `?` within one segment, `**` across any number, `[ab]`, `{a,b}`; the path is matched normalised (`a/../b` is `b`), one that climbs above its folder (`../x`) matches nothing, and a pattern with a `.`, `..` or empty segment is no glob";
    "resolve_path" ["resolve_path(base, p)"]
        "`p` against the folder `base` (unless `p` is absolute), `.` and `..` resolved by their text";
    "relative_path" ["relative_path(p, base)"] "`p` relative to the folder `base`; absent when `p` is not below `base`";
    "ip" ["ip(s)"]
        "an IPv4 or IPv6 address (optionally in brackets) in its canonical text; absent when `s` is not one";
    "host_ip" ["host_ip(h)"]
        "the address a URL host writes in any form a browser reads (`2130706433`, `0x7f.1`, `127.1`); absent for a domain name";
    "net" ["net(s)"]
        "a network `ADDRESS/LENGTH`, host bits zero; `ip(h) in net(\"10.0.0.0/8\")` is membership; absent when `s` is not one";
    "embedded_ipv4" ["embedded_ipv4(a)"]
        "the IPv4 addresses an IPv6 address carries (mapped, compatible, 6to4, NAT64, Teredo's client); empty for none";
    "hostname" ["hostname(s)"]
        "a DNS host name in lower case, one trailing dot removed; absent when a label is empty, too long or not letters, digits and `-`";
    "tld" ["tld(s)"] "the last label of `hostname(s)`";
    "in_domain" ["in_domain(h, d)"] "`hostname(h)` is `hostname(d)` or a name below it, on whole labels";
    "normalize_path" ["normalize_path(p)"]
        "`p` normalised by its text: back slashes, repeated slashes, `.` and `..`, roots `/`, `C:/`, `//host/share/`";
    "path_parts" ["path_parts(p)"] "the root of `normalize_path(p)`, if any, then its segments";
    "path_under" ["path_under(p, root)"]
        "`p` is `root` or below it, on whole normalised segments (never by substring); absent when one is relative and the other not";
}

/// The built-in function of that name.
pub fn function(name: &str) -> Option<&'static Function> {
    FUNCTIONS.iter().find(|f| f.name == name)
}

/// The parameters of a signature: `max(a, b)` has `a` and `b`.
pub fn parameters(signature: &str) -> Vec<&str> {
    let Some(open) = signature.find('(') else { return Vec::new() };
    let inner = signature[open + 1..].trim_end_matches(')');
    if inner.trim().is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let (mut depth, mut start, mut quoted) = (0i32, 0, false);
    for (i, c) in inner.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '[' | '(' if !quoted => depth += 1,
            ']' | ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                out.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(inner[start..].trim());
    out
}
