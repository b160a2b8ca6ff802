//! Values of the evaluator. Every value carries its provenance.

use std::fmt::Write as _;
use std::sync::Arc;

use grail_lang::ast::Span;
use serde::{Deserialize, Serialize};

use crate::hir::{EnumId, Loc, MatrixId, Policy, RecordId};

/// Where a value came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Origin {
    /// Read from a document (its index in the deployment) at a span.
    Document { doc: u32, span: Span },
    /// The shipped policy: a matrix cell or a declared default, at a span
    /// of a policy file (a [`Loc`], written out so that an origin is 24
    /// bytes: see [`Origin::loc`]).
    Policy { file: u32, span: Span },
    /// Computed by the evaluator or written as a literal in a rule.
    Computed,
    /// Not there: see [`Missing`]. Out of line, since most values are there.
    Missing(Arc<Missing>),
}

/// What is missing, and where: `what` names the missing thing; `doc`/`span`
/// point at the nearest thing that is there (the mapping that lacks the
/// key), and `below` holds the keys below it that are not there, as a key
/// path suffix (`.name`, `[3]`; see [`crate::keypath`]): empty when the
/// value at `span` is there but cannot be read as what was asked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Missing {
    pub what: Box<str>,
    pub doc: Option<u32>,
    pub span: Span,
    pub below: Box<str>,
}

impl Origin {
    /// The document location, if the value (or its absence) has one.
    pub fn document_span(&self) -> Option<(u32, Span)> {
        match self {
            Origin::Document { doc, span } => Some((*doc, *span)),
            Origin::Missing(m) => m.doc.map(|doc| (doc, m.span)),
            _ => None,
        }
    }

    /// A value of the policy at `loc`.
    pub fn policy(loc: Loc) -> Origin {
        Origin::Policy { file: loc.file, span: loc.span }
    }

    /// Where in the policy a value of the policy is.
    pub fn loc(&self) -> Option<Loc> {
        match self {
            Origin::Policy { file, span } => Some(Loc { file: *file, span: *span }),
            _ => None,
        }
    }

    /// What is missing, for a missing value.
    pub fn missing(&self) -> Option<&str> {
        match self {
            Origin::Missing(m) => Some(&m.what),
            _ => None,
        }
    }
}

/// A count of nanoseconds (an instant or a duration), kept as two words so
/// that it is aligned as a word is: an `i128` would align every [`ValKind`]
/// to 16 bytes, and a [`Val`] would be 96 bytes instead of 48. Written and
/// read as the `i128` it is, so the policy's bytes do not change.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "i128", into = "i128")]
pub struct Nanos {
    low: u64,
    high: i64,
}

impl Nanos {
    pub fn get(self) -> i128 {
        (i128::from(self.high) << 64) | i128::from(self.low)
    }
}

impl From<i128> for Nanos {
    fn from(n: i128) -> Nanos {
        Nanos { low: n as u64, high: (n >> 64) as i64 }
    }
}

impl From<Nanos> for i128 {
    fn from(n: Nanos) -> i128 {
        n.get()
    }
}

impl std::fmt::Debug for Nanos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// An attached file's value (see [`ValKind::File`]). Every field that
/// names one file shares one `FileVal` (and its text is the one copy the
/// check holds): a file named by a thousand fields is one value.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileVal {
    pub path: Arc<str>,
    pub text: Arc<str>,
    /// The file's bytes when they are not UTF-8 text: `sha256` reads them,
    /// and `text` and `lines` are unknown (`text` is then not the content).
    pub raw: Option<Arc<[u8]>>,
    /// The file's SHA-256, computed the first time a rule asks for it:
    /// a file hashed for every field that names it is hashed once.
    #[serde(skip)]
    pub digest: std::sync::OnceLock<Arc<str>>,
}

impl FileVal {
    pub fn new(path: Arc<str>, text: Arc<str>, raw: Option<Arc<[u8]>>) -> FileVal {
        FileVal { path, text, raw, digest: std::sync::OnceLock::new() }
    }

    /// The SHA-256 of the file's exact bytes (its raw bytes when they are
    /// not UTF-8 text), in lower-case hex; computed once.
    pub fn sha256(&self) -> Arc<str> {
        self.digest.get_or_init(|| sha256_hex(self.raw.as_deref().unwrap_or(self.text.as_bytes())).into()).clone()
    }
}

/// What a file is, not what was computed from it: two values of one file are equal.
impl PartialEq for FileVal {
    fn eq(&self, other: &FileVal) -> bool {
        self.path == other.path && self.text == other.text && self.raw == other.raw
    }
}

/// SHA-256 of `bytes` in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    use std::fmt::Write as _;
    let digest = sha2::Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for b in digest {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Val {
    pub kind: ValKind,
    pub origin: Origin,
}

/// Why there is no value (see [`ValKind::Absent`] and "Absent, unknown and
/// invalid" in docs/language.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Absence {
    /// Known absent, a decided fact: an optional field without a default
    /// that the document leaves out, and what is read below it; a map entry
    /// or list index that is not there. Comparisons with it are decided.
    Known,
    /// Missing evidence: what could not be established (a required field
    /// left out, a file not read, a document kind not checked, `now()` not
    /// given, a function that could not read its argument).
    Unknown,
    /// A value the document holds that is not of its field's type (or
    /// outside its vocabulary, below its minimum): unknown everywhere,
    /// `present` and `??` included.
    Invalid,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ValKind {
    /// No value, and why.
    Absent(Absence),
    /// Null, written by a document in a field declared `or null`: a value of
    /// its own, equal only to null, never absent.
    Null,
    Bool(bool),
    Int(i64),
    /// An integer beyond 64 bits, as its canonical decimal text (see
    /// [`crate::int`]): never one that fits an `Int`.
    BigInt(Arc<str>),
    Str(Arc<str>),
    /// A file attached to the check (a `ref string` field, or `attached(p)`):
    /// it reads as its path; `text`, `lines` and `sha256` read its content.
    File(Arc<FileVal>),
    /// An identifier read from a document (a field of type `id`): a string
    /// whose comparisons and identity ignore case.
    Id(Arc<str>),
    Enum(EnumId, u32),
    /// An instant: nanoseconds since 1970-01-01T00:00:00Z.
    Time(Nanos),
    /// A length of time in nanoseconds (negative when the second instant is earlier).
    Duration(Nanos),
    List(Arc<Vec<Val>>),
    /// Entries in document order; keys are scalars.
    Map(Arc<Vec<(Val, Val)>>),
    Record(RecordId, Arc<Vec<Val>>),
    Matrix(MatrixId),
    Row(MatrixId, u32),
    Domain(EnumId),
    Pairs(Arc<Vec<(Val, Val)>>),
    /// Every document of a kind in the deployment.
    Docs(crate::hir::DocKindId),
}

/// A value's identity, borrowed from it (see [`Val::id_key`]). An
/// identifier's identity ignores case: `Static-Analysis` and
/// `static-analysis` are one key, and an identifier is the string it spells
/// in any case.
#[derive(Clone, Copy, Debug)]
pub enum IdKey<'v> {
    Null,
    Bool(bool),
    Int(i64),
    BigInt(&'v str),
    Str(&'v str),
    Id(&'v str),
    Enum(EnumId, u32),
    Time(i128),
    Duration(i128),
}

impl PartialEq for IdKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        use IdKey::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (BigInt(a), BigInt(b)) => a == b,
            (Str(a), Str(b)) => a == b,
            (Id(a), Id(b)) | (Id(a), Str(b)) | (Str(a), Id(b)) => same_identifier(a, b),
            (Enum(e, a), Enum(f, b)) => e == f && a == b,
            (Time(a), Time(b)) | (Duration(a), Duration(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for IdKey<'_> {}

impl std::hash::Hash for IdKey<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            IdKey::Null => 6u8.hash(state),
            IdKey::Bool(b) => (0u8, b).hash(state),
            IdKey::Int(i) => (1u8, i).hash(state),
            IdKey::BigInt(i) => (7u8, i).hash(state),
            // Strings hash without case, so that an identifier and a string equal to it meet.
            IdKey::Str(s) | IdKey::Id(s) => {
                2u8.hash(state);
                for c in folded(s) {
                    c.hash(state);
                }
            }
            IdKey::Enum(e, v) => (3u8, e, v).hash(state),
            IdKey::Time(t) => (4u8, t).hash(state),
            IdKey::Duration(d) => (5u8, d).hash(state),
        }
    }
}

/// A string as messages show it: a control character (a NUL, a tab, a new
/// line) escaped (`\u{0}`, `\t`, `\n`), never written out.
pub fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// The characters of `s` without case.
fn folded(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars().flat_map(char::to_lowercase)
}

/// Whether two identifiers are one: equal once case is ignored.
pub fn same_identifier(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        return a.eq_ignore_ascii_case(b);
    }
    folded(a).eq(folded(b))
}

/// A three-valued truth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Truth {
    True,
    False,
    Unknown,
}

impl Val {
    pub fn new(kind: ValKind, origin: Origin) -> Val {
        Val { kind, origin }
    }

    pub fn computed(kind: ValKind) -> Val {
        Val { kind, origin: Origin::Computed }
    }

    /// Missing evidence, and what is missing: a `String` given is kept, not copied.
    pub fn missing(what: impl Into<Box<str>>, doc: Option<u32>, span: Span) -> Val {
        Val::lacking(Absence::Unknown, what, doc, span)
    }

    /// A known absence (decided), and what is absent.
    pub fn absent(what: impl Into<Box<str>>, doc: Option<u32>, span: Span) -> Val {
        Val::lacking(Absence::Known, what, doc, span)
    }

    /// A value not there, below the value at `span` by the keys `below`
    /// (see [`Missing`]): known absent or missing evidence, as `why` says.
    pub fn lacking_below(
        why: Absence,
        what: impl Into<Box<str>>,
        doc: Option<u32>,
        span: Span,
        below: Box<str>,
    ) -> Val {
        Val {
            kind: ValKind::Absent(why),
            origin: Origin::Missing(Arc::new(Missing { what: what.into(), doc, span, below })),
        }
    }

    fn lacking(why: Absence, what: impl Into<Box<str>>, doc: Option<u32>, span: Span) -> Val {
        Val::lacking_below(why, what, doc, span, Box::default())
    }

    /// An invalid value of a document, located where the document holds it.
    pub fn invalid(doc: u32, span: Span) -> Val {
        Val::new(ValKind::Absent(Absence::Invalid), Origin::Document { doc, span })
    }

    pub fn unknown() -> Val {
        Val::computed(ValKind::Absent(Absence::Unknown))
    }

    pub fn bool(b: bool) -> Val {
        Val::computed(ValKind::Bool(b))
    }

    pub fn truth(t: Truth) -> Val {
        match t {
            Truth::True => Val::bool(true),
            Truth::False => Val::bool(false),
            Truth::Unknown => Val::unknown(),
        }
    }

    /// An integer of any size.
    pub fn as_int(&self) -> Option<crate::int::Int<'_>> {
        match &self.kind {
            ValKind::Int(i) => Some(crate::int::Int::Small(*i)),
            ValKind::BigInt(i) => Some(crate::int::Int::Big(i)),
            _ => None,
        }
    }

    /// The text of a string or an identifier.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            ValKind::Str(s) | ValKind::Id(s) => Some(s),
            ValKind::File(f) => Some(&f.path),
            _ => None,
        }
    }

    /// No value: known absent, unknown or invalid.
    pub fn is_absent(&self) -> bool {
        matches!(self.kind, ValKind::Absent(_))
    }

    /// Known absent: a decided absence.
    pub fn is_known_absent(&self) -> bool {
        matches!(self.kind, ValKind::Absent(Absence::Known))
    }

    /// Unknown: missing evidence or invalid (no value, and not a decided absence).
    pub fn is_unknown(&self) -> bool {
        matches!(self.kind, ValKind::Absent(Absence::Unknown | Absence::Invalid))
    }

    /// A value the document holds that is not of its type.
    pub fn is_invalid(&self) -> bool {
        matches!(self.kind, ValKind::Absent(Absence::Invalid))
    }

    pub fn as_truth(&self) -> Truth {
        match self.kind {
            ValKind::Bool(true) => Truth::True,
            ValKind::Bool(false) => Truth::False,
            _ => Truth::Unknown,
        }
    }

    /// Equality of meaning, ignoring provenance; `None` when either side is
    /// unknown. A known absence equals nothing, not even another one.
    pub fn same(&self, other: &Val) -> Option<bool> {
        use ValKind::*;
        // Two scalars are the same when their identities are: one equality for both.
        if let (Some(a), Some(b)) = (self.scalar_key(), other.scalar_key()) {
            return Some(a == b);
        }
        Some(match (&self.kind, &other.kind) {
            (Absent(Absence::Known), _) | (_, Absent(Absence::Known)) => false,
            (Absent(_), _) | (_, Absent(_)) => return None,
            (Row(m, a), Row(n, b)) => m == n && a == b,
            (List(a), List(b)) => {
                if a.len() != b.len() {
                    return Some(false);
                }
                for (x, y) in a.iter().zip(b.iter()) {
                    if !x.same(y)? {
                        return Some(false);
                    }
                }
                true
            }
            (Record(r, a), Record(s, b)) => {
                r == s && {
                    for (x, y) in a.iter().zip(b.iter()) {
                        // Two records are one when each field is absent in both or the same in both.
                        if x.is_unknown() || y.is_unknown() {
                            return None;
                        }
                        match (x.is_absent(), y.is_absent()) {
                            (true, true) => continue,
                            (false, false) if x.same(y)? => continue,
                            _ => return Some(false),
                        }
                    }
                    true
                }
            }
            _ => false,
        })
    }

    /// The distinct identity of a value, as a hashable key: a scalar is its
    /// own identity, a record entry the value of its identity field. `None`
    /// when it has none or it is unknown.
    pub fn identity(&self, policy: &Policy) -> Option<String> {
        let mut key = String::new();
        match &self.kind {
            ValKind::Bool(b) => write!(key, "b:{b}").ok()?,
            ValKind::Int(i) => write!(key, "i:{i}").ok()?,
            ValKind::BigInt(i) => write!(key, "i:{i}").ok()?,
            ValKind::Str(s) => write!(key, "s:{s}").ok()?,
            ValKind::Id(s) => write!(key, "s:{}", s.to_lowercase()).ok()?,
            ValKind::Enum(e, v) => write!(key, "e{e}:{v}").ok()?,
            ValKind::Time(t) => write!(key, "t:{}", t.get()).ok()?,
            ValKind::Duration(d) => write!(key, "d:{}", d.get()).ok()?,
            ValKind::Record(r, fields) => {
                let id = policy.records.get(*r as usize)?.identity?;
                return fields.get(id)?.identity(policy);
            }
            _ => return None,
        }
        Some(key)
    }

    /// The distinct identity of a value without allocating: what
    /// [`Val::identity`] formats, borrowed. Two values have one identity
    /// exactly when their keys are equal.
    pub fn id_key(&self, policy: &Policy) -> Option<IdKey<'_>> {
        match &self.kind {
            ValKind::Record(r, fields) => {
                let id = policy.records.get(*r as usize)?.identity?;
                fields.get(id)?.id_key(policy)
            }
            _ => self.scalar_key(),
        }
    }

    /// The identity of a scalar (a bool, a number, a string or identifier,
    /// a variant, an instant, a duration); `None` for anything else.
    fn scalar_key(&self) -> Option<IdKey<'_>> {
        match &self.kind {
            ValKind::Null => Some(IdKey::Null),
            ValKind::File(f) => Some(IdKey::Str(&f.path)),
            ValKind::Bool(b) => Some(IdKey::Bool(*b)),
            ValKind::Int(i) => Some(IdKey::Int(*i)),
            ValKind::BigInt(i) => Some(IdKey::BigInt(i)),
            ValKind::Str(s) => Some(IdKey::Str(s)),
            ValKind::Id(s) => Some(IdKey::Id(s)),
            ValKind::Enum(e, v) => Some(IdKey::Enum(*e, *v)),
            ValKind::Time(t) => Some(IdKey::Time(t.get())),
            ValKind::Duration(d) => Some(IdKey::Duration(d.get())),
            _ => None,
        }
    }

    /// How a value reads in a message: `C3`, `auto`, `2`, `[a, b]`, `absent`.
    pub fn display(&self, policy: &Policy) -> String {
        match &self.kind {
            // Written in the document, but not a value of its type: its type finding says why.
            ValKind::Absent(Absence::Invalid) => "invalid".into(),
            ValKind::Absent(Absence::Known) => "absent".into(),
            ValKind::Absent(Absence::Unknown) => "unknown".into(),
            ValKind::Null => "null".into(),
            ValKind::File(f) => shown(&f.path).into_owned(),
            ValKind::Bool(b) => b.to_string(),
            ValKind::Int(i) => i.to_string(),
            ValKind::BigInt(i) => i.to_string(),
            ValKind::Str(s) | ValKind::Id(s) => shown(s).into_owned(),
            ValKind::Enum(e, v) => policy.variant_name(*e, *v).to_string(),
            ValKind::Time(t) => crate::time::show_instant(t.get()),
            ValKind::Duration(d) => crate::time::show_duration(d.get()),
            ValKind::List(items) => {
                let parts: Vec<String> = items.iter().map(|v| v.display(policy)).collect();
                format!("[{}]", parts.join(", "))
            }
            ValKind::Map(entries) => {
                let parts: Vec<String> =
                    entries.iter().map(|(k, v)| format!("{}: {}", k.display(policy), v.display(policy))).collect();
                format!("{{{}}}", parts.join(", "))
            }
            ValKind::Record(r, fields) => {
                let rec = policy.records.get(*r as usize);
                match rec.and_then(|d| d.identity.map(|i| (d, i))) {
                    Some((d, i)) => {
                        format!("{} `{}`", d.name, fields.get(i).map(|v| v.display(policy)).unwrap_or_default())
                    }
                    None => rec.map(|d| d.name.clone()).unwrap_or_default(),
                }
            }
            ValKind::Matrix(m) => policy.matrices.get(*m as usize).map(|d| d.name.clone()).unwrap_or_default(),
            ValKind::Row(m, v) => match policy.matrices.get(*m as usize) {
                Some(d) => format!("{}[{}]", d.name, policy.variant_name(d.key_enum, *v)),
                None => String::new(),
            },
            ValKind::Domain(e) => policy.enums.get(*e as usize).map(|d| d.name.clone()).unwrap_or_default(),
            ValKind::Pairs(p) => format!("{} pairs", p.len()),
            ValKind::Docs(k) => {
                policy.documents.get(*k as usize).map(|d| format!("every `{}`", d.name)).unwrap_or_default()
            }
        }
    }

    /// A short label for a subject path: a map key, an identity, an index.
    pub fn label(&self, policy: &Policy) -> Option<String> {
        match &self.kind {
            ValKind::Record(r, fields) => {
                let id = policy.records.get(*r as usize)?.identity?;
                Some(fields.get(id)?.display(policy))
            }
            ValKind::Absent(_) | ValKind::List(_) | ValKind::Map(_) | ValKind::Pairs(_) | ValKind::Docs(_) => None,
            _ => Some(self.display(policy)),
        }
    }
}
