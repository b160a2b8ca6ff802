//! The lowered policy: names resolved, types checked, functions expanded.
//!
//! This is what evaluation runs on. It holds no syntax-tree types except
//! spans, so that a change that does not alter meaning (a comment, a blank
//! line elsewhere) can leave dependent queries untouched.

use std::sync::Arc;

use grail_lang::ast::{BoundKind, EnumOrder, Span};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::value::Val;

pub type EnumId = u32;
pub type RecordId = u32;
pub type MatrixId = u32;
pub type DocKindId = u32;
pub type Slot = u32;

/// Where something is declared: a policy file (its index in the policy set) and a span.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Loc {
    pub file: u32,
    pub span: Span,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    pub enums: Vec<EnumDef>,
    pub records: Vec<RecordDef>,
    pub documents: Vec<DocumentDef>,
    pub matrices: Vec<MatrixDef>,
    /// In evaluation order: a rule that asks whether others `holds` comes after them.
    pub rules: Vec<RuleDef>,
    pub layers: Vec<LayersDef>,
    /// Admission questions, evaluated after every rule.
    pub questions: Vec<QuestionDef>,
    /// Tables of values read from documents, in declaration order.
    pub tables: Vec<TableDef>,
    /// Whether a rule or a question reads `now()`, the time of the check (a
    /// report then says which time it was and where it came from).
    pub reads_now: bool,
    /// What checks compute once per policy and reuse; never written to the
    /// blob or the cache, and no part of a policy's equality.
    #[serde(skip)]
    pub derived: Derived,
}

/// What is computed once per policy, on first use, and shared by every check
/// of it (the threads of `--each` included).
#[derive(Default)]
pub struct Derived {
    /// The defaults of a layered kind (the conform of an empty document),
    /// per kind and the document its origins point at.
    pub(crate) defaults: std::sync::Mutex<Vec<((DocKindId, u32), crate::value::Val)>>,
    /// The names of the `ref` fields of every record, each once.
    pub(crate) ref_keys: std::sync::OnceLock<Vec<String>>,
    /// What conforming a document needs of the policy (forbidden keys, reachable records).
    pub(crate) conform: std::sync::OnceLock<crate::conform::Shape>,
}

impl Derived {
    /// At most this many defaults are kept (kinds times the documents they point at).
    pub(crate) const KEPT: usize = 16;

    /// The names of `policy`'s `ref` fields (this is its `derived`), each once.
    pub(crate) fn ref_keys(&self, policy: &Policy) -> &[String] {
        self.ref_keys.get_or_init(|| {
            let mut names: Vec<String> = Vec::new();
            for f in policy.records.iter().flat_map(|r| &r.fields).filter(|f| f.is_ref) {
                if !names.contains(&f.name) {
                    names.push(f.name.clone());
                }
            }
            names
        })
    }
}

impl Clone for Derived {
    /// A copy computes its own.
    fn clone(&self) -> Self {
        Derived::default()
    }
}

impl PartialEq for Derived {
    /// What is derived follows from the rest: two policies equal otherwise are equal.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Derived {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Derived")
    }
}

impl Policy {
    /// The kinds read from Markdown, each with its marker and the rule that
    /// reports a missing, repeated or unfenced one.
    pub fn markdown_kinds(&self) -> impl Iterator<Item = (&DocumentDef, &str, &CheckDef)> {
        self.documents.iter().filter_map(|d| match &d.selector {
            SelectorDef::Markdown { marker, rule } => Some((d, marker.as_str(), rule)),
            _ => None,
        })
    }

    pub fn variant_name(&self, e: EnumId, v: u32) -> &str {
        self.enums.get(e as usize).and_then(|d| d.variants.get(v as usize)).map(String::as_str).unwrap_or("?")
    }

    /// The rule ids of every rule and every structural check, in declaration order.
    pub fn rule_ids(&self) -> Vec<(&str, Loc)> {
        let mut ids = self.rule_locations();
        let mut seen = std::collections::HashSet::new();
        ids.retain(|(id, _)| seen.insert(*id));
        ids
    }

    /// Every place that names a rule id, in declaration order: a structural
    /// rule id that several declarations name (`schema.unknown_key`) once
    /// per declaration.
    pub fn rule_locations(&self) -> Vec<(&str, Loc)> {
        let mut ids: Vec<(&str, Loc)> = Vec::new();
        for d in &self.documents {
            for c in d.checks.iter().flatten() {
                ids.push((&c.rule, c.loc));
            }
            if let SelectorDef::Markdown { rule, .. } = &d.selector {
                ids.push((&rule.rule, rule.loc));
            }
            for f in &d.forbids {
                ids.push((&f.rule, f.loc));
            }
        }
        for r in &self.records {
            for c in r.checks.iter().flatten() {
                ids.push((&c.rule, c.loc));
            }
            for f in &r.fields {
                for b in &f.bounds {
                    ids.push((&b.rule, b.loc));
                }
                if let Some(u) = &f.unique {
                    ids.push((&u.rule, u.loc));
                }
                if let Some(c) = &f.invalid {
                    ids.push((&c.rule, c.loc));
                }
            }
        }
        for l in &self.layers {
            for c in l.checks.iter().flatten() {
                ids.push((&c.rule, c.loc));
            }
            if let Some((_, c)) = &l.trusted {
                ids.push((&c.rule, c.loc));
            }
        }
        for r in &self.rules {
            ids.push((&r.id, r.loc));
        }
        // A document's own record carries the document's clauses: one clause, one location.
        let mut seen = std::collections::HashSet::new();
        ids.retain(|&(id, loc)| seen.insert((id, loc.file, loc.span.start, loc.span.end)));
        ids
    }
}

/// What a rule identifier stands for, for rule listings (SARIF, docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleMeta<'p> {
    pub id: &'p str,
    pub loc: Loc,
    /// The `///` documentation of the rule (or of the field or document whose
    /// check it names), one string per line; empty when there is none.
    pub docs: Vec<&'p str>,
    /// What the rule checks, in a phrase, for when there are no docs, e.g.
    /// "the `unknown_key` check of `Binding`".
    pub what: String,
}

/// A name and a sentence per structural check, by index into [`Checks`].
pub const CHECK_DESCRIPTIONS: [(&str, &str); CHECK_KINDS] = [
    ("syntax", "the document cannot be read: it is not well-formed JSON or YAML, not UTF-8, or too large"),
    ("duplicate_key", "a key appears twice in one mapping; neither value is taken"),
    ("unknown_key", "a key that the schema does not declare"),
    ("type", "a value of the wrong type or outside its vocabulary"),
    ("missing_key", "a required key is missing"),
    ("empty", "the documents checked hold none of this kind; nothing verified is not a pass"),
    ("loosen", "a lower layer sets a value looser than the effective value of the layers above it"),
    ("untrusted", "a lower layer sets a value that only a more trusted layer may set"),
    ("order", "two documents bound to one layer, one file bound twice, or two documents left unbound"),
    ("claim", "a document claims another layer than the one the invocation bound it to"),
    ("change", "a new version of a document loosens or removes what its previous version (`--base`) said"),
];

impl Policy {
    /// Every rule identifier once, in declaration order, with what it documents.
    pub fn rule_meta(&self) -> Vec<RuleMeta<'_>> {
        let mut out: Vec<RuleMeta<'_>> = Vec::new();
        for d in &self.documents {
            for (i, c) in d.checks.iter().enumerate() {
                if let (Some(c), Some((kind, sentence))) = (c, CHECK_DESCRIPTIONS.get(i)) {
                    out.push(RuleMeta {
                        id: &c.rule,
                        loc: c.loc,
                        docs: vec![sentence],
                        what: format!("the `{kind}` check of document `{}`", d.name),
                    });
                }
            }
            if let SelectorDef::Markdown { marker, rule } = &d.selector {
                out.push(RuleMeta {
                    id: &rule.rule,
                    loc: rule.loc,
                    docs: Vec::new(),
                    what: format!(
                        "a `{}` record needs exactly one `{marker}` marker line, immediately followed by a fenced JSON block",
                        d.name
                    ),
                });
            }
            for f in &d.forbids {
                out.push(RuleMeta {
                    id: &f.rule,
                    loc: f.loc,
                    docs: Vec::new(),
                    what: format!("the key `{}` appears anywhere in a `{}` document", f.key, d.name),
                });
            }
        }
        for r in &self.records {
            for (i, c) in r.checks.iter().enumerate() {
                if let (Some(c), Some((kind, sentence))) = (c, CHECK_DESCRIPTIONS.get(i)) {
                    out.push(RuleMeta {
                        id: &c.rule,
                        loc: c.loc,
                        docs: vec![sentence],
                        what: format!("the `{kind}` check of `{}`", r.name),
                    });
                }
            }
            for f in &r.fields {
                for b in &f.bounds {
                    let word = match b.kind {
                        BoundKind::Floor => "floor",
                        BoundKind::Ceiling => "ceiling",
                    };
                    let column = self
                        .matrices
                        .get(b.matrix as usize)
                        .and_then(|m| Some(format!("{}.{}", m.name, m.columns.get(b.column)?.name)))
                        .unwrap_or_default();
                    out.push(RuleMeta {
                        id: &b.rule,
                        loc: b.loc,
                        docs: f.docs.iter().map(String::as_str).collect(),
                        what: format!("`{}` is looser than its {word} `{column}`", f.name),
                    });
                }
                if let Some(u) = &f.unique {
                    out.push(RuleMeta {
                        id: &u.rule,
                        loc: u.loc,
                        docs: f.docs.iter().map(String::as_str).collect(),
                        what: format!("two entries of `{}` share an identity", f.name),
                    });
                }
                if let Some(c) = &f.invalid {
                    out.push(RuleMeta {
                        id: &c.rule,
                        loc: c.loc,
                        docs: f.docs.iter().map(String::as_str).collect(),
                        what: format!("`{}` holds a value that is not of its type", f.name),
                    });
                }
            }
        }
        for l in &self.layers {
            let name = self.documents.get(l.document as usize).map_or("?", |d| d.name.as_str());
            for (i, c) in l.checks.iter().enumerate() {
                if let (Some(c), Some((kind, sentence))) = (c, CHECK_DESCRIPTIONS.get(i)) {
                    out.push(RuleMeta {
                        id: &c.rule,
                        loc: c.loc,
                        docs: vec![sentence],
                        what: format!("the `{kind}` check of the layers of `{name}`"),
                    });
                }
            }
            if let Some((layer, c)) = &l.trusted {
                let layer = l.layers.get(*layer).map_or("?", String::as_str);
                out.push(RuleMeta {
                    id: &c.rule,
                    loc: c.loc,
                    docs: Vec::new(),
                    what: format!(
                        "a `{name}` document is bound below the `{layer}` layer (or to none); it is not read, and nothing in it counts"
                    ),
                });
            }
        }
        for r in &self.rules {
            out.push(RuleMeta {
                id: &r.id,
                loc: r.loc,
                docs: r.docs.iter().map(String::as_str).collect(),
                what: format!("rule `{}`", r.id),
            });
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|m| seen.insert(m.id));
        out
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnumDef {
    pub name: String,
    pub order: EnumOrder,
    pub variants: Vec<String>,
    pub docs: Vec<String>,
    pub loc: Loc,
}

/// A type of the language.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ty {
    Bool,
    Int,
    Str,
    /// An identifier: a string without white space or control characters,
    /// not empty, whose identity ignores case. Only a document's schema says
    /// `id`; an expression that reads one sees a string whose comparisons
    /// ignore case ([`crate::value::ValKind::Id`]).
    Id,
    Enum(EnumId),
    /// An instant (`timestamp(s)`, `now()`).
    Time,
    /// A length of time (`t2 - t1`, `hours(72)`).
    Duration,
    Record(RecordId),
    List(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    /// A matrix as a whole; indexed by its key enumeration it gives a row.
    Matrix(MatrixId),
    /// One row of a matrix; its columns are fields.
    Row(MatrixId),
    /// An enumeration used as a collection of its variants.
    Domain(EnumId),
    /// The unordered pairs of distinct identities of a list.
    Pairs(Box<Ty>),
    /// A network of IP addresses (`net(s)`): held as its canonical text,
    /// typed apart so that `ip(h) in net("10.0.0.0/8")` means membership.
    Net,
    /// An expression whose type could not be established (already reported).
    Error,
}

impl Ty {
    /// The type an expression reading a field of this type has: `id` reads
    /// as `string` (the value keeps its case-insensitive identity).
    pub fn read(&self) -> Ty {
        match self {
            Ty::Id => Ty::Str,
            Ty::List(t) => Ty::List(Box::new(t.read())),
            Ty::Map(k, v) => Ty::Map(Box::new(k.read()), Box::new(v.read())),
            t => t.clone(),
        }
    }
}

/// Whether `s` has the form of an identifier: not empty, and without white
/// space, control characters or invisible format characters (a zero-width
/// space, a bidirectional mark, a byte order mark), which would make two
/// spellings of one name look alike.
pub fn is_identifier(s: &str) -> bool {
    use unicode_general_category::{GeneralCategory, get_general_category};
    !s.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c.is_control() || get_general_category(c) == GeneralCategory::Format)
}

/// A structural check and the rule id its findings carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckDef {
    pub rule: String,
    pub loc: Loc,
}

/// Index into [`Checks`]: which structural check a rule id reports.
pub const CHECK_SYNTAX: usize = 0;
pub const CHECK_DUPLICATE_KEY: usize = 1;
pub const CHECK_UNKNOWN_KEY: usize = 2;
pub const CHECK_TYPE: usize = 3;
pub const CHECK_MISSING_KEY: usize = 4;
pub const CHECK_EMPTY: usize = 5;
pub const CHECK_LOOSEN: usize = 6;
pub const CHECK_UNTRUSTED: usize = 7;
pub const CHECK_ORDER: usize = 8;
pub const CHECK_CLAIM: usize = 9;
pub const CHECK_CHANGE: usize = 10;
pub const CHECK_KINDS: usize = 11;

/// The rule id of each structural check, where one is declared.
pub type Checks = [Option<CheckDef>; CHECK_KINDS];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordDef {
    pub name: String,
    /// The field that is an entry's identity.
    pub identity: Option<usize>,
    pub fields: Vec<FieldDef>,
    /// Overrides of the document's structural rule ids for keys of this record.
    pub checks: Checks,
    /// `on unknown_key allow`: a key the record does not declare is no
    /// finding; nothing reads it.
    #[serde(default)]
    pub open: bool,
    pub docs: Vec<String>,
    pub loc: Loc,
}

impl RecordDef {
    pub fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldDef {
    pub name: String,
    pub ty: Ty,
    /// The least value an integer (or every integer of a list or map) may take.
    pub int_min: Option<i64>,
    pub optional: bool,
    /// A `ref` field: the record inline, or a path to a file holding it.
    pub is_ref: bool,
    /// `or null`: the field may hold null, a value of its own.
    #[serde(default)]
    pub nullable: bool,
    /// `or one`: a list that may be written as one value, read as a list of one.
    #[serde(default)]
    pub one: bool,
    /// `complete`: a map keyed by an enumeration has every variant as a key.
    #[serde(default)]
    pub complete: bool,
    /// `text`: every string of the field (or of its list or map) is not empty.
    #[serde(default)]
    pub nonempty: bool,
    pub default: Option<DefaultDef>,
    pub bounds: Vec<BoundDef>,
    pub unique: Option<CheckDef>,
    /// `invalid rule ID`: the rule a value of the wrong type is a finding of.
    #[serde(default)]
    pub invalid: Option<CheckDef>,
    /// `grows tighter` / `shrinks tighter`: which way the list tightens. A lower
    /// layer may change such a list in that direction only.
    #[serde(default)]
    pub growth: Option<grail_lang::ast::Growth>,
    pub docs: Vec<String>,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum DefaultDef {
    /// A matrix column, indexed by the nearest enclosing key of the matrix's enumeration.
    Column {
        matrix: MatrixId,
        column: usize,
        loc: Loc,
    },
    Value(Val),
    /// `default {}`: a record or map the document leaves out is read as if
    /// written empty (its own fields take their defaults): an absent section
    /// declares nothing, it is not missing evidence.
    Empty(Loc),
}

/// A tighten-only bound: the value may be at the bound or tighter, never looser.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundDef {
    pub kind: BoundKind,
    pub matrix: MatrixId,
    pub column: usize,
    pub rule: String,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SelectorDef {
    /// A document whose top-level keys pass every test.
    Keys(Vec<KeyTestDef>),
    /// The fenced JSON record after the one `marker` line of a Markdown file.
    Markdown { marker: String, rule: CheckDef },
    /// The file the invocation gives under this name, and no other.
    Given { name: String },
}

/// A test of a selector on one top-level key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KeyTestDef {
    pub key: String,
    pub test: KeyCondDef,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyCondDef {
    Absent,
    Present,
    Equals(String),
}

impl SelectorDef {
    /// The key tests (none for a Markdown kind).
    pub fn tests(&self) -> &[KeyTestDef] {
        match self {
            SelectorDef::Keys(tests) => tests,
            SelectorDef::Markdown { .. } | SelectorDef::Given { .. } => &[],
        }
    }

    /// The value the selector requires of `key`, if it requires one.
    pub fn value_of(&self, key: &str) -> Option<&str> {
        self.tests().iter().find_map(|t| match &t.test {
            KeyCondDef::Equals(v) if t.key == key => Some(v.as_str()),
            _ => None,
        })
    }

    /// Whether the selector requires `key` to be there (present, or with a value).
    pub fn requires(&self, key: &str) -> bool {
        self.tests().iter().any(|t| t.key == key && t.test != KeyCondDef::Absent)
    }

    /// Whether the selector requires `key` to be left out.
    pub fn forbids(&self, key: &str) -> bool {
        self.tests().iter().any(|t| t.key == key && t.test == KeyCondDef::Absent)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DocumentDef {
    pub name: String,
    pub binder: String,
    pub selector: SelectorDef,
    /// The record of the document's top-level keys.
    pub record: RecordId,
    /// The name rules use for the list of every document of this kind.
    pub all_binder: Option<String>,
    /// `lines into FIELD`: in a JSON Lines file, every line after the
    /// header is an entry of this top-level list field.
    #[serde(default)]
    pub lines_into: Option<String>,
    /// `list into FIELD`: a document whose root is a list is read as the
    /// record whose top-level list field FIELD holds it.
    #[serde(default)]
    pub list_into: Option<String>,
    /// `on unreadable missing`: a given file that cannot be read or parsed,
    /// or whose root is not of the kind's shape, is unavailable: its root
    /// reads as missing evidence with the reason, and it has no structural finding.
    #[serde(default)]
    pub unreadable_missing: bool,
    pub checks: Checks,
    pub forbids: Vec<ForbidDef>,
    /// `at most one per deployment`: where it is declared, if it is.
    pub at_most_one: Option<Loc>,
    pub docs: Vec<String>,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForbidDef {
    pub key: String,
    pub rule: String,
    pub loc: Loc,
}

/// An admission question: for every tuple of its variables, whether the action is allowed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionDef {
    pub id: String,
    pub docs: Vec<String>,
    /// The action asked about, e.g. `auto-merge`.
    pub action: String,
    /// Decoded when the question is first asked (see [`Lazy`]): `grail check` never asks.
    pub body: Lazy<QuestionBody>,
    pub reads: Vec<DocKindId>,
    pub slots: u32,
    pub loc: Loc,
}

/// What a question asks: its variables, and when the action is allowed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionBody {
    pub vars: Vec<QuestionVarDef>,
    pub allow: Expr,
}

/// A table: a row per tuple of its `for` clauses (which, with `let`, are
/// its only clauses), named by `row`, a cell per column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableDef {
    pub id: String,
    pub docs: Vec<String>,
    /// Decoded when the table is first shown (see [`Lazy`]): a check whose
    /// documents a table does not read never decodes it.
    pub body: Lazy<TableBody>,
    pub reads: Vec<DocKindId>,
    pub slots: u32,
    pub loc: Loc,
}

/// What a table computes: its clauses, its row and its columns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableBody {
    pub clauses: Vec<ClauseDef>,
    pub row: ColumnExpr,
    pub columns: Vec<ColumnExpr>,
    /// The values listed under a row when it is explained.
    pub detail: Option<Expr>,
    /// `line "..."`: each row as a verdict line.
    #[serde(default)]
    pub line: Option<Template>,
}

/// A named column of a table and the expression of its cells.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnExpr {
    pub name: String,
    pub value: Expr,
}

/// A variable of a question and the request attribute it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionVarDef {
    pub pattern: PatternDef,
    /// The pattern's variable names, as written.
    pub names: Vec<String>,
    pub domain: Expr,
    pub side: grail_lang::ast::RequestSide,
    pub attribute: String,
}

/// The built-in functions of [`ExprKind::Builtin`]: each evaluates its
/// arguments, and an absent argument makes the result absent (but for
/// `is_null`, which is never unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Builtin {
    /// `is_null(x)`: `x` is null (false for any other value and for absent).
    IsNull,
    /// `sha256(x)`: the lower-case hex SHA-256 of an attached file's bytes, or of a string.
    Sha256,
    /// `text(f)`: the content of an attached file.
    Text,
    /// `lines(s)`: the lines of a text (or an attached file), without their ends.
    Lines,
    /// `replace(s, from, to)`: every `from` in `s` replaced by `to`.
    Replace,
    /// `replace_line(s, n, to)`: line `n` of a text (0-based, as `lines`
    /// counts) replaced by `to`, every line end kept.
    ReplaceLine,
    /// `matches_glob(path, pattern)`: a glob over `/`-separated paths (`*`
    /// within a segment, `**` across segments).
    MatchesGlob,
    /// `resolve_path(base, p)`: `p` against the folder `base`, `.` and `..` resolved.
    ResolvePath,
    /// `relative_path(p, base)`: `p` below `base`, relative to it (absent when it is not below).
    RelativePath,
    /// `attached(p)`: the file the invocation attached under the recorded path `p`.
    Attached,
    /// `flatten(xss)`: the entries of a list of lists, in order.
    Flatten,
    /// `ip(s)`: an IPv4 or IPv6 address in its canonical text (see [`crate::net`]).
    Ip,
    /// `host_ip(h)`: the address a URL host writes in any form the WHATWG URL Standard reads.
    HostIp,
    /// `net(s)`: a network `ADDRESS/LENGTH` ([`Ty::Net`]).
    Net,
    /// `a in net(...)`: not called by name; lowering writes it for `in` with a network on its right.
    InNet,
    /// `embedded_ipv4(a)`: the IPv4 addresses an IPv6 address carries.
    EmbeddedIpv4,
    /// `hostname(s)`: a DNS host name, lower case, one trailing dot removed, labels checked.
    Hostname,
    /// `tld(s)`: the last label of `hostname(s)`.
    Tld,
    /// `in_domain(h, d)`: `h` is the domain `d` or a name below it.
    InDomain,
    /// `normalize_path(p)`: a path normalised by its text (see [`crate::paths`]).
    NormalizePath,
    /// `path_parts(p)`: the root and segments of a normalised path.
    PathParts,
    /// `path_under(p, root)`: `p` is `root` or below it, on whole segments.
    PathUnder,
    /// `timestamp_millis(s)`: `timestamp(s)` with at most three fraction digits.
    TimestampMillis,
    /// `join(xs, sep)`: the entries of a list as they read in messages, joined by `sep`.
    Join,
    /// `show(x)`: a value as messages show it, as a string.
    Show,
    /// `choose(c, a, b)`: `a` when `c` holds, `b` when it does not.
    Choose,
}

impl Builtin {
    pub const ALL: [(&'static str, Builtin, usize); 26] = [
        ("is_null", Builtin::IsNull, 1),
        ("sha256", Builtin::Sha256, 1),
        ("text", Builtin::Text, 1),
        ("lines", Builtin::Lines, 1),
        ("replace", Builtin::Replace, 3),
        ("replace_line", Builtin::ReplaceLine, 3),
        ("matches_glob", Builtin::MatchesGlob, 2),
        ("resolve_path", Builtin::ResolvePath, 2),
        ("relative_path", Builtin::RelativePath, 2),
        ("attached", Builtin::Attached, 1),
        ("flatten", Builtin::Flatten, 1),
        ("ip", Builtin::Ip, 1),
        ("host_ip", Builtin::HostIp, 1),
        ("net", Builtin::Net, 1),
        ("in_net", Builtin::InNet, 2),
        ("embedded_ipv4", Builtin::EmbeddedIpv4, 1),
        ("hostname", Builtin::Hostname, 1),
        ("tld", Builtin::Tld, 1),
        ("in_domain", Builtin::InDomain, 2),
        ("normalize_path", Builtin::NormalizePath, 1),
        ("path_parts", Builtin::PathParts, 1),
        ("path_under", Builtin::PathUnder, 2),
        ("timestamp_millis", Builtin::TimestampMillis, 1),
        ("join", Builtin::Join, 2),
        ("show", Builtin::Show, 1),
        ("choose", Builtin::Choose, 3),
    ];

    /// The built-in a call names (`in_net` is written `a in n`, never called).
    pub fn by_name(name: &str) -> Option<(Builtin, usize)> {
        Builtin::ALL.iter().find(|(n, b, _)| *n == name && *b != Builtin::InNet).map(|(_, b, a)| (*b, *a))
    }

    /// The type of a call's value; `flatten`'s is its argument's entries'.
    pub fn result(self) -> Ty {
        match self {
            Builtin::IsNull | Builtin::MatchesGlob | Builtin::InNet | Builtin::InDomain | Builtin::PathUnder => {
                Ty::Bool
            }
            Builtin::Lines | Builtin::EmbeddedIpv4 | Builtin::PathParts => Ty::List(Box::new(Ty::Str)),
            Builtin::Net => Ty::Net,
            Builtin::TimestampMillis => Ty::Time,
            Builtin::Flatten => Ty::Error,
            _ => Ty::Str,
        }
    }

    pub fn name(self) -> &'static str {
        Builtin::ALL.iter().find(|(_, b, _)| *b == self).map_or("?", |(n, _, _)| n)
    }
}

/// A regular expression; two are equal when their sources are. Lowering
/// compiles it (a source that does not compile is a located error there);
/// one read back from bytes (the precompiled library, the policy cache) keeps
/// its source and compiles on first use, so a check pays only for the
/// patterns it reaches. Clones share the compiled form.
#[derive(Clone, Debug)]
pub struct Regex(Arc<RegexCell>);

#[derive(Debug)]
struct RegexCell {
    source: Box<str>,
    compiled: std::sync::OnceLock<Option<Matcher>>,
}

/// What a pattern is matched with. Lowering keeps the `regex::Regex` it
/// checked the source with; a pattern read back is compiled by
/// [`Lean::new`], which answers only "is there a match" and builds only
/// what that needs.
#[derive(Debug)]
enum Matcher {
    Full(regex::Regex),
    Lean(Box<Lean>),
}

/// A pattern compiled for `is_match` alone: the forward NFA (built by one
/// compiler per thread, so its tables for Unicode classes are allocated
/// once per thread, not once per pattern), searched by a lazy DFA, or by the
/// PikeVM where the lazy DFA gives up (a Unicode word boundary next to a
/// non-ASCII byte). `regex::Regex` builds that NFA too, and also a reverse
/// NFA, a one-pass DFA, a backtracker and the literal prefilters, which
/// find where a match is; whether there is one is the same question for
/// every engine, so the answers are the same (`regex_tests` compares them).
/// The syntax and the size limit are `regex::Regex::new`'s.
struct Lean {
    dfa: Option<regex_automata::hybrid::dfa::DFA>,
    pikevm: regex_automata::nfa::thompson::pikevm::PikeVM,
    caches: regex_automata::util::pool::Pool<LeanCache, LeanCacheFn>,
}

type LeanCache = (Option<regex_automata::hybrid::dfa::Cache>, Option<regex_automata::nfa::thompson::pikevm::Cache>);
type LeanCacheFn = Box<dyn Fn() -> LeanCache + Send + Sync + std::panic::RefUnwindSafe + std::panic::UnwindSafe>;

impl std::fmt::Debug for Lean {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lean").field("lazy_dfa", &self.dfa.is_some()).finish_non_exhaustive()
    }
}

impl Lean {
    fn new(source: &str) -> Option<Lean> {
        use regex_automata::nfa::thompson;
        use regex_automata::util::syntax;
        thread_local! {
            static COMPILER: thompson::Compiler = {
                let mut c = thompson::Compiler::new();
                // `regex::Regex::new`'s: UTF-8 empty matches, its NFA size
                // limit, no shrinking of the forward NFA (a no-op forward);
                // the whole match as the one group, which the PikeVM needs.
                c.configure(
                    thompson::Config::new()
                        .utf8(true)
                        .nfa_size_limit(Some(10 * (1 << 20)))
                        .shrink(false)
                        .which_captures(thompson::WhichCaptures::Implicit),
                );
                c
            };
        }
        let hir = syntax::parse_with(source, &syntax::Config::new().utf8(true)).ok()?;
        let nfa = COMPILER.with(|c| c.build_from_hir(&hir).ok())?;
        let pikevm = thompson::pikevm::PikeVM::new_from_nfa(nfa.clone()).ok()?;
        let dfa = regex_automata::hybrid::dfa::DFA::builder()
            .configure(
                regex_automata::hybrid::dfa::DFA::config().unicode_word_boundary(true).cache_capacity(2 * (1 << 20)),
            )
            .build_from_nfa(nfa)
            .ok();
        let for_caches = dfa.clone();
        let make: LeanCacheFn = Box::new(move || (for_caches.as_ref().map(|d| d.create_cache()), None));
        Some(Lean { dfa, pikevm, caches: regex_automata::util::pool::Pool::new(make) })
    }

    fn is_match(&self, text: &str) -> bool {
        let input = regex_automata::Input::new(text).earliest(true);
        let mut guard = self.caches.get();
        let (dfa_cache, pike_cache) = &mut *guard;
        if let (Some(dfa), Some(cache)) = (&self.dfa, dfa_cache.as_mut())
            && let Ok(found) = dfa.try_search_fwd(cache, &input)
        {
            return found.is_some();
        }
        let cache = pike_cache.get_or_insert_with(|| self.pikevm.create_cache());
        self.pikevm.search_slots(cache, &input, &mut []).is_some()
    }
}

impl Regex {
    /// A pattern compiled already (lowering).
    pub fn compiled(re: regex::Regex) -> Regex {
        let source = re.as_str().into();
        Regex(Arc::new(RegexCell { source, compiled: std::sync::OnceLock::from(Some(Matcher::Full(re))) }))
    }

    /// A pattern compiled when first matched. Every copy of one source read
    /// in a process shares one cell, so a pattern that a function's body
    /// carries into many rules is compiled once.
    pub fn from_source(source: &str) -> Regex {
        type Cells = std::collections::HashMap<Box<str>, std::sync::Weak<RegexCell>>;
        static CELLS: std::sync::Mutex<Option<Cells>> = std::sync::Mutex::new(None);
        let mut cells = CELLS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let cells = cells.get_or_insert_with(Cells::new);
        if let Some(cell) = cells.get(source).and_then(std::sync::Weak::upgrade) {
            return Regex(cell);
        }
        cells.retain(|_, cell| cell.strong_count() > 0);
        let cell = Arc::new(RegexCell { source: source.into(), compiled: std::sync::OnceLock::new() });
        cells.insert(source.into(), Arc::downgrade(&cell));
        Regex(cell)
    }

    pub fn as_str(&self) -> &str {
        &self.0.source
    }

    /// Whether `text` matches, or `None` when the pattern does not compile
    /// (bytes changed since lowering accepted it): a match that cannot be
    /// established, never a silent false.
    pub fn is_match(&self, text: &str) -> Option<bool> {
        self.0
            .compiled
            .get_or_init(|| Lean::new(&self.0.source).map(|lean| Matcher::Lean(Box::new(lean))))
            .as_ref()
            .map(|m| match m {
                Matcher::Full(re) => re.is_match(text),
                Matcher::Lean(lean) => lean.is_match(text),
            })
    }
}

impl PartialEq for Regex {
    fn eq(&self, other: &Regex) -> bool {
        self.as_str() == other.as_str()
    }
}

/// A regex is stored as its source, compiled again when first matched.
impl Serialize for Regex {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Regex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Regex, D::Error> {
        let source = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(Regex::from_source(&source))
    }
}

/// A part of the lowered policy decoded when it is first read. A policy
/// read back from bytes (the precompiled shipped library, the policy cache)
/// keeps each rule's clauses as their bytes until a check evaluates the rule:
/// a check of a binding never decodes the clauses of the rules about
/// remediation histories or scenario runs. One that lowering makes holds its
/// value from the start. A part read from a blob that lives as long as the
/// process (the shipped one, a cached one: [`read_lasting`]) refers to its
/// bytes there rather than holding a copy: the copies were a sixth of a cold
/// check's page faults.
pub struct Lazy<T> {
    value: std::sync::OnceLock<T>,
    bytes: Option<std::borrow::Cow<'static, [u8]>>,
}

impl<T> Lazy<T> {
    pub fn new(value: T) -> Lazy<T> {
        Lazy { value: std::sync::OnceLock::from(value), bytes: None }
    }
}

/// What a part that cannot be decoded reads as: for clauses, one requirement
/// that cannot be established, so the rule is UNKNOWN, never silent; for a
/// question, no variables and an `allow` that cannot be established, so the
/// action is never allowed.
pub trait Undecodable {
    fn undecodable() -> Self;
}

impl Undecodable for QuestionBody {
    fn undecodable() -> Self {
        QuestionBody {
            vars: Vec::new(),
            allow: Expr { kind: ExprKind::Lit(Val::unknown()), text: "the precompiled question".into() },
        }
    }
}

impl Undecodable for TableBody {
    /// One row whose cells cannot be established and whose verdict line
    /// says why: a table that cannot be read is shown as such, never as a
    /// table without rows.
    fn undecodable() -> Self {
        let unknown = |text: &str| Expr { kind: ExprKind::Lit(Val::unknown()), text: text.into() };
        TableBody {
            clauses: Vec::new(),
            row: ColumnExpr { name: "row".into(), value: unknown("the precompiled table") },
            columns: Vec::new(),
            detail: None,
            line: Some(Template {
                parts: vec![TemplatePart::Text(
                    "the precompiled policy holds this table in a form that cannot be read; compile the policy again"
                        .into(),
                )],
            }),
        }
    }
}

impl Undecodable for Vec<ClauseDef> {
    fn undecodable() -> Self {
        vec![ClauseDef::Require {
            check: Expr { kind: ExprKind::Lit(Val::unknown()), text: "the precompiled rule".into() },
            fail: false,
            message: Template {
                parts: vec![TemplatePart::Text(
                    "the precompiled policy holds this rule in a form that cannot be read; compile the policy again"
                        .into(),
                )],
            },
            loc: Loc::default(),
        }]
    }
}

impl<T: serde::de::DeserializeOwned + Undecodable> std::ops::Deref for Lazy<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value.get_or_init(|| self.bytes.as_deref().and_then(decode_with_texts).unwrap_or_else(T::undecodable))
    }
}

impl<T: Clone + serde::de::DeserializeOwned + Undecodable> Clone for Lazy<T> {
    fn clone(&self) -> Self {
        Lazy::new((**self).clone())
    }
}

impl<T: PartialEq + serde::de::DeserializeOwned + Undecodable> PartialEq for Lazy<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: std::fmt::Debug + serde::de::DeserializeOwned + Undecodable> std::fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// Written as the postcard bytes of the value, so that reading it back is a copy.
impl<T: Serialize + serde::de::DeserializeOwned + Undecodable> Serialize for Lazy<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let bytes = encode_with_texts(&**self).map_err(serde::ser::Error::custom)?;
        s.serialize_bytes(&bytes)
    }
}

impl<'de, T> Deserialize<'de> for Lazy<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lazy<T>, D::Error> {
        use std::borrow::Cow;
        struct Bytes;
        impl<'de> serde::de::Visitor<'de> for Bytes {
            type Value = Cow<'static, [u8]>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the bytes of a part of a policy")
            }
            fn visit_borrowed_bytes<E: serde::de::Error>(self, v: &'de [u8]) -> Result<Self::Value, E> {
                Ok(lasting(v).map_or_else(|| Cow::Owned(v.to_vec()), Cow::Borrowed))
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v))
            }
        }
        let bytes = d.deserialize_bytes(Bytes)?;
        Ok(Lazy { value: std::sync::OnceLock::new(), bytes: Some(bytes) })
    }
}

thread_local! {
    /// The blob a policy is being read from on this thread when it lives as
    /// long as the process ([`read_lasting`]); none otherwise.
    static LASTING: std::cell::Cell<Option<&'static [u8]>> = const { std::cell::Cell::new(None) };
}

/// Reads a value (a [`Policy`]) from bytes that live as long as the process:
/// its [`Lazy`] parts refer to their bytes in `bytes` instead of copying them.
pub fn read_lasting<T: Deserialize<'static>>(bytes: &'static [u8]) -> postcard::Result<T> {
    /// Puts the previous blob back when dropped (a panic included).
    struct Restore(Option<&'static [u8]>);
    impl Drop for Restore {
        fn drop(&mut self) {
            LASTING.with(|l| l.set(self.0));
        }
    }
    let _restore = Restore(LASTING.with(|l| l.replace(Some(bytes))));
    postcard::from_bytes(bytes)
}

/// `part` as a slice of the lasting blob being read, when it lies within it.
fn lasting(part: &[u8]) -> Option<&'static [u8]> {
    let blob = LASTING.with(std::cell::Cell::get)?;
    let start = (part.as_ptr() as usize).checked_sub(blob.as_ptr() as usize)?;
    blob.get(start..start.checked_add(part.len())?)
}

/// The text of an expression (its source, for explanations) or of a
/// template's literal part. Lowering gives each its own string; inside the
/// bytes of a [`Lazy`] part every text is a span of one string that the
/// part holds once, each distinct text once, so that decoding a rule's
/// clauses allocates that string once rather than a string per expression
/// (the texts were most of what a cold check spent decoding clauses).
/// Clones share the string. Two texts are equal when their characters are.
#[derive(Clone, Default)]
pub struct Text {
    all: Arc<str>,
    start: u32,
    end: u32,
}

impl Text {
    pub fn as_str(&self) -> &str {
        // INVARIANT: `start..end` lies in `all` on character boundaries
        // (`From` takes all of a string; decoding checks a span before keeping it).
        self.all.get(self.start as usize..self.end as usize).unwrap_or_default()
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::from(Arc::<str>::from(s))
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text::from(Arc::<str>::from(s))
    }
}

impl From<Arc<str>> for Text {
    /// All of `all`; a text longer than 4 GiB is cut at the last character
    /// boundary before it (no policy is near that: files are read with a bound).
    fn from(all: Arc<str>) -> Text {
        let mut end = all.len().min(u32::MAX as usize);
        while !all.is_char_boundary(end) {
            end -= 1;
        }
        Text { all, start: 0, end: end as u32 }
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::hash::Hash for Text {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h)
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The string the texts of a [`Lazy`] part are spans of, while the part is
/// encoded (each distinct text once, and where it starts) or decoded.
enum Texts {
    Writing { all: String, at: std::collections::HashMap<Box<str>, u32> },
    Reading(Arc<str>),
}

thread_local! {
    /// The texts of the part being encoded or decoded on this thread; none
    /// outside a [`Lazy`] part, where a text is written as a string.
    static TEXTS: std::cell::RefCell<Option<Texts>> = const { std::cell::RefCell::new(None) };
}

/// Puts `texts` in place for the part being encoded or decoded, and the
/// previous ones back when dropped (a panic included).
struct TextsInPlace(Option<Texts>);

impl TextsInPlace {
    fn new(texts: Texts) -> TextsInPlace {
        TextsInPlace(TEXTS.with(|t| t.replace(Some(texts))))
    }

    /// The texts put in place; dropping `self` puts the previous ones back.
    fn take(self) -> Option<Texts> {
        TEXTS.with(|t| t.take())
    }
}

impl Drop for TextsInPlace {
    fn drop(&mut self) {
        let previous = self.0.take();
        TEXTS.with(|t| t.replace(previous));
    }
}

/// The bytes of a [`Lazy`] part: the string of its texts, then the value
/// with each text as a span of it (postcard both).
fn encode_with_texts<T: Serialize>(value: &T) -> postcard::Result<Vec<u8>> {
    let texts = TextsInPlace::new(Texts::Writing { all: String::new(), at: Default::default() });
    let body = postcard::to_stdvec(value);
    let all = match texts.take() {
        Some(Texts::Writing { all, .. }) => all,
        _ => String::new(),
    };
    let mut bytes = postcard::to_stdvec(&all)?;
    bytes.extend(body?);
    Ok(bytes)
}

/// The value of bytes made by [`encode_with_texts`]; `None` when they are
/// not whole (a span out of the string included).
fn decode_with_texts<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    let (all, rest) = postcard::take_from_bytes::<&str>(bytes).ok()?;
    let _texts = TextsInPlace::new(Texts::Reading(Arc::from(all)));
    postcard::from_bytes(rest).ok()
}

/// Inside a [`Lazy`] part, a span (start, length) of the part's texts;
/// elsewhere, a string.
impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let span = TEXTS.with(|t| match t.borrow_mut().as_mut() {
            Some(Texts::Writing { all, at }) => {
                let start = match at.get(self.as_str()) {
                    Some(&start) => start,
                    None => {
                        let start = u32::try_from(all.len()).ok()?;
                        all.push_str(self);
                        at.insert(self.as_str().into(), start);
                        start
                    }
                };
                Some((start, self.len() as u32))
            }
            _ => None,
        });
        match span {
            Some(span) => span.serialize(s),
            None if TEXTS.with(|t| t.borrow().is_some()) => {
                Err(serde::ser::Error::custom("the texts of a part of a policy exceed 4 GiB"))
            }
            None => s.serialize_str(self),
        }
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        let all = TEXTS.with(|t| match t.borrow().as_ref() {
            Some(Texts::Reading(all)) => Some(all.clone()),
            _ => None,
        });
        let Some(all) = all else {
            return Ok(Text::from(&*<std::borrow::Cow<'de, str>>::deserialize(d)?));
        };
        let (start, len) = <(u32, u32)>::deserialize(d)?;
        let end = start.checked_add(len).filter(|&end| all.get(start as usize..end as usize).is_some());
        match end {
            Some(end) => Ok(Text { all, start, end }),
            None => Err(serde::de::Error::custom("a text outside the texts of its part")),
        }
    }
}

/// The layers of trust of a document kind, most trusted first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayersDef {
    pub document: DocKindId,
    /// The top-level field a document may claim its layer with (`claimed by`);
    /// a claim must agree with the binding, it never grants a layer.
    pub claim: Option<String>,
    /// `standalone`: a lone document of the kind, bound by nothing, is of the
    /// most trusted layer (the caller vouches for it by naming it alone).
    pub standalone: bool,
    /// `separate`: each document is read apart (never merged), several may
    /// share a layer, and every unbound one is of the last layer.
    #[serde(default)]
    pub separate: bool,
    /// `trusted from LAYER rule ID`: a document bound below the layer (its
    /// index) is a finding of the rule, and is not read.
    #[serde(default)]
    pub trusted: Option<(usize, CheckDef)>,
    /// Most trusted first; the last is the layer of an unbound document.
    pub layers: Vec<String>,
    /// Per field name, the one layer that may set it.
    pub only: Vec<(String, usize)>,
    /// Fields every layer may set freely.
    pub free: Vec<String>,
    /// Rule ids for findings in lower layers (`unknown_key`, `loosen`, `untrusted`, `order`, `claim`).
    pub checks: Checks,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatrixDef {
    pub name: String,
    pub key_enum: EnumId,
    pub columns: Vec<ColumnDef>,
    /// `cells[variant][column]`; every variant has a row (checked when lowering).
    pub cells: Vec<Vec<Val>>,
    pub docs: Vec<String>,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnDef {
    pub name: String,
    pub ty: Ty,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuleDef {
    pub id: String,
    pub docs: Vec<String>,
    /// The document kinds the rule reads, the first being the one it judges.
    pub reads: Vec<DocKindId>,
    /// Decoded when the rule is first evaluated (see [`Lazy`]).
    pub clauses: Lazy<Vec<ClauseDef>>,
    /// Where a finding points, evaluated when the outcome is known.
    pub at: Option<Expr>,
    /// `at ... by position`: the finding's key path numbers list entries
    /// (`roles[1]`) rather than naming them by their identity.
    #[serde(default)]
    pub at_by_position: bool,
    pub slots: u32,
    pub loc: Loc,
    /// The expanded calls of policy functions whose result is memoised per
    /// document (see [`CallHead`]), ordered by slot.
    #[serde(default)]
    pub calls: Vec<CallHead>,
}

/// An expanded call of a policy function with arguments whose body reads
/// nothing but its arguments and the documents (no `holds`, no `failure`):
/// the `Let` of its first argument's slot heads a chain of `args` lets, the
/// function's body last. Its result, for one document and equal arguments,
/// is the same in every rule (`eval::Memo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallHead {
    pub slot: Slot,
    /// The function: its file and its index among the file's items.
    pub func: (u32, u32),
    pub args: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ClauseDef {
    For {
        pattern: PatternDef,
        names: Vec<String>,
        domain: Expr,
        filter: Option<Expr>,
        label: Option<String>,
    },
    /// `report`: a false guard does not skip the rule; a FAIL or UNKNOWN
    /// it then finds is NOT APPLICABLE with the reason (`else report`).
    When {
        guard: Expr,
        reason: Option<Template>,
        report: bool,
    },
    Let {
        slot: Slot,
        name: String,
        value: Expr,
    },
    Require {
        check: Expr,
        fail: bool,
        message: Template,
        loc: Loc,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PatternDef {
    One(Slot),
    Entry(Slot, Slot),
    Pair(Slot, Slot),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Template {
    pub parts: Vec<TemplatePart>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TemplatePart {
    Text(Text),
    Hole(Expr),
}

/// A lowered expression; `text` is its source, for explanations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub text: Text,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// What `sum`, `min` and `max` make of a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FoldOp {
    Sum,
    Min,
    Max,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ExprKind {
    Lit(Val),
    Var(Slot),
    /// The document of a kind.
    Doc(DocKindId),
    /// Every document of a kind in the deployment, most trusted first.
    Docs(DocKindId),
    Matrix(MatrixId),
    Domain(EnumId),
    Field(Box<Expr>, usize),
    /// A column of a matrix row.
    Column(Box<Expr>, usize),
    MapGet(Box<Expr>, Box<Expr>),
    /// The entry of a list at an index (absent out of range).
    ListGet(Box<Expr>, Box<Expr>),
    MatrixRow(MatrixId, Box<Expr>),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Compare(Cmp, Box<Expr>, Box<Expr>),
    /// `a tighter_than b` on a tightest-first enumeration.
    Tighter(Box<Expr>, Box<Expr>),
    In(Box<Expr>, Box<Expr>),
    Coalesce(Box<Expr>, Box<Expr>),
    Concat(Box<Expr>, Box<Expr>),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Present(Box<Expr>),
    /// `valid(x)`: `x` is there and of its type; false for an absent, a
    /// missing and an invalid value alike, never unknown.
    Valid(Box<Expr>),
    Count(Box<Expr>),
    CountBy {
        slot: Slot,
        domain: Box<Expr>,
        key: Box<Expr>,
    },
    Empty(Box<Expr>),
    Max(Box<Expr>, Box<Expr>),
    Min(Box<Expr>, Box<Expr>),
    Pairs(Box<Expr>),
    /// The first entry of every distinct identity.
    Distinct(Box<Expr>),
    /// The number of entries, duplicates included (for positional data).
    Entries(Box<Expr>),
    Lower(Box<Expr>),
    /// A string cut at every occurrence of a separator.
    Split(Box<Expr>, Box<Expr>),
    /// A string without one trailing occurrence of a suffix.
    TrimSuffix(Box<Expr>, Box<Expr>),
    /// A string without leading and trailing white space.
    Trim(Box<Expr>),
    /// A part of a string read as an absolute URL (absent if it is not one).
    Url(crate::url::UrlPart, Box<Expr>),
    /// A string read as an integer (absent if it is not one).
    ParseInt(Box<Expr>),
    /// An RFC 3339 date-time as an instant (absent if malformed).
    Timestamp(Box<Expr>),
    /// The time of the check, as the caller gave it (absent when it gave none).
    Now,
    /// A named parameter of the invocation (`param("name")`): its strings,
    /// known absent when the caller did not give it.
    Param(String),
    /// An int of a unit of time (`hours(72)`): the unit in nanoseconds.
    DurationOf(i64, Box<Expr>),
    /// `sum(xs)`, `min(xs)`, `max(xs)` over a list of ints or durations
    /// (`durations`: the sum of none is `0s`, not `0`), every entry counted.
    Fold {
        op: FoldOp,
        list: Box<Expr>,
        durations: bool,
    },
    /// Whether a string matches a regular expression (compiled when lowering).
    Matches(Box<Expr>, Regex),
    /// Why a value is absent: what is missing, and why a file was not read.
    Reason(Box<Expr>),
    /// Whether a value was read from a document the invocation bound to a
    /// layer of that name (by a flag, the workspace file, or standalone).
    BoundTo(Box<Expr>, String),
    /// Whether no finding of the matching rules failed or is unknown for a subject.
    Holds(Vec<String>, Box<Expr>),
    /// `failure(["rule.id"], x)`: the message of the first finding of those
    /// rules that failed, is unknown, or was reported for the subject `x`.
    Failure(Vec<String>, Box<Expr>),
    /// A built-in function over its arguments, each evaluated (see [`Builtin`]).
    Builtin(Builtin, Vec<Expr>),
    List(Vec<Expr>),
    Quant {
        every: bool,
        pattern: PatternDef,
        domain: Box<Expr>,
        body: Box<Expr>,
    },
    Comprehension {
        value: Box<Expr>,
        pattern: PatternDef,
        domain: Box<Expr>,
        filter: Option<Box<Expr>>,
    },
    /// A function's argument bound for its expanded body.
    Let {
        slot: Slot,
        value: Box<Expr>,
        body: Box<Expr>,
    },
}

#[cfg(test)]
mod lazy_tests {
    use super::*;

    #[test]
    fn clauses_read_back_from_bytes_are_decoded_when_first_read() {
        let clauses = vec![ClauseDef::When {
            guard: Expr { kind: ExprKind::Lit(Val::unknown()), text: "g".into() },
            reason: None,
            report: false,
        }];
        let bytes = postcard::to_stdvec(&Lazy::new(clauses.clone())).expect("encoded");
        let read: Lazy<Vec<ClauseDef>> = postcard::from_bytes(&bytes).expect("decoded");
        assert!(read.value.get().is_none(), "nothing decoded before it is read");
        assert_eq!(*read, clauses);
    }

    #[test]
    fn clauses_that_cannot_be_decoded_are_a_requirement_that_cannot_be_established() {
        // The bytes of a list of five clauses, and none of them.
        let read: Lazy<Vec<ClauseDef>> = postcard::from_bytes(&[1, 5]).expect("the bytes themselves are read");
        match read.as_slice() {
            [ClauseDef::Require { fail: false, check, .. }] => {
                assert!(matches!(&check.kind, ExprKind::Lit(v) if matches!(v.kind, crate::value::ValKind::Absent(_))))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn texts_in_a_part_are_spans_of_one_string_each_distinct_text_once() {
        let text = |t: &str| Expr { kind: ExprKind::Lit(Val::unknown()), text: t.into() };
        let clauses = vec![
            ClauseDef::When { guard: text("a.b"), reason: None, report: false },
            ClauseDef::When { guard: text("a.b"), reason: None, report: true },
            ClauseDef::When { guard: text("é"), reason: None, report: false },
        ];
        let bytes = encode_with_texts(&clauses).expect("encoded");
        assert_eq!(postcard::take_from_bytes::<&str>(&bytes).expect("the texts first").0, "a.bé");
        assert_eq!(decode_with_texts::<Vec<ClauseDef>>(&bytes), Some(clauses));
    }

    #[test]
    fn a_text_outside_its_part_s_string_is_not_decoded() {
        // The string "a", then a span of five bytes from 0; then one inside a character.
        assert_eq!(decode_with_texts::<Text>(&[1, b'a', 0, 5]), None);
        assert_eq!(decode_with_texts::<Text>(&[2, 0xc3, 0xa9, 0, 1]), None);
        assert_eq!(decode_with_texts::<Text>(&[1, b'a', 0, 1]).as_deref(), Some("a"));
    }

    #[test]
    fn a_part_read_from_a_lasting_blob_refers_to_its_bytes_there() {
        let clauses = vec![ClauseDef::When {
            guard: Expr { kind: ExprKind::Lit(Val::unknown()), text: "g".into() },
            reason: None,
            report: false,
        }];
        let parts = vec![Lazy::new(clauses.clone()), Lazy::new(Vec::new())];
        let blob: &'static [u8] = postcard::to_stdvec(&parts).expect("encoded").leak();
        let lasting: Vec<Lazy<Vec<ClauseDef>>> = read_lasting(blob).expect("decoded");
        let copied: Vec<Lazy<Vec<ClauseDef>>> = postcard::from_bytes(blob).expect("decoded");
        let within = |l: &Lazy<Vec<ClauseDef>>| matches!(&l.bytes, Some(std::borrow::Cow::Borrowed(b)) if blob.as_ptr_range().contains(&b.as_ptr()));
        assert!(lasting.iter().all(within), "a lasting blob's parts are not copied");
        assert!(copied.iter().all(|l| matches!(l.bytes, Some(std::borrow::Cow::Owned(_)))), "other bytes are");
        assert!(LASTING.with(std::cell::Cell::get).is_none(), "the blob is forgotten once read");
        assert_eq!(*lasting[0], clauses);
        assert!(lasting[1].is_empty());
        assert_eq!(lasting, copied);
    }

    #[test]
    fn a_table_that_cannot_be_decoded_shows_one_row_saying_so() {
        let read: Lazy<TableBody> = postcard::from_bytes(&[1, 5]).expect("the bytes themselves are read");
        assert!(read.clauses.is_empty() && read.columns.is_empty());
        assert!(matches!(&read.row.value.kind, ExprKind::Lit(v) if matches!(v.kind, crate::value::ValKind::Absent(_))));
        assert!(
            matches!(&read.line, Some(t) if matches!(t.parts.as_slice(), [TemplatePart::Text(m)] if m.contains("cannot be read")))
        );
    }

    #[test]
    fn a_question_that_cannot_be_decoded_never_allows() {
        let read: Lazy<QuestionBody> = postcard::from_bytes(&[1, 5]).expect("the bytes themselves are read");
        assert!(read.vars.is_empty());
        assert!(matches!(&read.allow.kind, ExprKind::Lit(v) if matches!(v.kind, crate::value::ValKind::Absent(_))));
    }
}

#[cfg(test)]
mod regex_tests {
    use super::*;

    #[test]
    fn a_pattern_read_back_is_compiled_once_and_on_first_use() {
        let source = "(?i)^regex-tests-only-(a|b)$";
        let bytes =
            postcard::to_stdvec(&Regex::compiled(regex::Regex::new(source).expect("compiles"))).expect("encoded");
        let one: Regex = postcard::from_bytes(&bytes).expect("decoded");
        let two: Regex = postcard::from_bytes(&bytes).expect("decoded");
        assert!(Arc::ptr_eq(&one.0, &two.0), "two copies of one source share one cell");
        assert!(one.0.compiled.get().is_none(), "nothing compiled before a match");
        assert_eq!(one.is_match("REGEX-TESTS-ONLY-B"), Some(true));
        assert_eq!(two.is_match("regex-tests-only-c"), Some(false));
        assert!(two.0.compiled.get().is_some(), "compiled by the first match, for both copies");
    }

    /// Haystacks for comparing the two engines: ASCII, case folding beyond
    /// ASCII (the Kelvin sign, the long s, sharp s), the blank and
    /// invisible characters `filled` refuses, combining marks, scripts,
    /// line ends, and text next to a word boundary on either side.
    const HAYSTACKS: &[&str] = &[
        "",
        "a",
        "A",
        "abc",
        "ABC",
        "é",
        "É",
        "école",
        "ÉCOLE",
        "ß",
        "SS",
        "ſ",
        "s",
        "S",
        "K",
        "\u{212A}",
        "k",
        "\u{200B}",
        "\u{3164}",
        "\u{FFA0}",
        "\u{2800}",
        "\u{115F}",
        "\u{1160}",
        "\u{00A0}",
        "\u{2028}",
        "\t",
        " ",
        "\n",
        "a\nb",
        "\r\n",
        "\u{0}",
        "\u{7F}",
        "\u{FEFF}x",
        "e\u{301}",
        "日本語",
        "δ",
        "Δ",
        "😀",
        "x😀y",
        "path/to/x",
        "/abs",
        "//host",
        "C:/",
        "c:\\",
        "a/b/",
        "a\\b",
        "http://h:80/",
        "http://h:8080?q",
        "https://h",
        "$home",
        "%path%",
        "${x}",
        "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01",
        "00-00000000000000000000000000000000-0000000000000000-00",
        "0",
        "7",
        "10",
        "999",
        "1000",
        "012",
        "- Knowledge map: revision 3, hash 0000000000000000000000000000000000000000000000000000000000000000",
        "word",
        "wörd",
        "é word",
        "wordé",
        "_x_",
        "a-b",
        "a.b",
        "[x].y",
        "a:b:c",
        "a:b",
        "?#",
        "café au lait",
    ];

    /// The patterns the shipped library passes to `matches`, read from its
    /// sources (where the pattern is one string literal closing the call).
    fn library_patterns() -> Vec<String> {
        let mut out = Vec::new();
        for (_, text) in crate::shipped::FILES {
            for (at, _) in text.match_indices("matches(") {
                let rest = &text[at..];
                let Some(open) = rest.find(", \"") else { continue };
                let lit = &rest[open + 2..];
                let mut end = 1;
                let bytes = lit.as_bytes();
                while end < bytes.len() && bytes[end] != b'"' {
                    end += if bytes[end] == b'\\' { 2 } else { 1 };
                }
                // The pattern is the call's last argument: the literal closes it.
                if lit.as_bytes().get(end + 1) != Some(&b')') {
                    continue;
                }
                if let Ok(p) = serde_json::from_str::<String>(&lit[..=end.min(bytes.len() - 1)]) {
                    out.push(p);
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    #[test]
    fn a_pattern_read_back_matches_exactly_what_regex_matches() {
        let mut patterns = library_patterns();
        assert!(patterns.len() >= 20, "the library's patterns were found: {patterns:?}");
        patterns.extend(
            [
                "",
                "a",
                "(?i)k",
                "(?i)s",
                "(?i)ß",
                "(?i)école",
                "\\w+",
                "^\\w+$",
                "\\bword\\b",
                "\\Bx",
                "(?-u:\\b)w",
                "\\d",
                "^\\s*$",
                ".",
                "^.$",
                "(?s)a.b",
                "(?m)^b$",
                "[^a-z]",
                "\\p{Greek}",
                "\\p{Lu}",
                "[[:alpha:]]+$",
                "é|e\\x{301}",
                "^$",
                "x*",
                "😀",
                "(?i)^regex-tests-only-(a|b)$",
                "(?R)^b$",
                "(?U)a+?",
            ]
            .map(String::from),
        );
        let mut haystacks: Vec<String> = HAYSTACKS.iter().map(|h| (*h).to_owned()).collect();
        haystacks.extend(patterns.iter().cloned());
        for p in &patterns {
            let full = regex::Regex::new(p).expect("the library's patterns compile");
            let lean = Lean::new(p).unwrap_or_else(|| panic!("`{p}` compiles lean too"));
            for h in &haystacks {
                assert_eq!(lean.is_match(h), full.is_match(h), "`{p}` on {h:?}");
            }
        }
    }

    #[test]
    fn a_pattern_regex_refuses_is_refused_lean_too() {
        for p in ["(unclosed", "[z-a]", "\\p{NoSuchClass}", "(?-u:\\xFF)", "a{2000}{2000}", "\\1"] {
            assert!(regex::Regex::new(p).is_err(), "`{p}` is refused by regex");
            assert!(Lean::new(p).is_none(), "`{p}` is refused lean");
        }
    }

    #[test]
    fn a_pattern_read_back_that_does_not_compile_matches_nothing_either_way() {
        // Lowering refuses such a pattern; bytes changed since can still carry one.
        let read: Regex = postcard::from_bytes(&postcard::to_stdvec("(unclosed").expect("encoded")).expect("decoded");
        assert_eq!(read.is_match("(unclosed"), None, "neither a match nor a miss");
    }
}
